"""``super().__getitem__(k)`` / ``dict.__getitem__(self, k)`` in a dict subclass with ``__missing__``: the
``except KeyError`` branch instead of ``__missing__`` (torch 2.7-2.15).

Symptom: a ``dict``/``OrderedDict`` subclass with its own ``__getitem__`` that calls ``dict``'s (``return
super().__getitem__(key)``, or ``dict.__getitem__(self, key)``) and a ``__missing__``: for an absent key
CPython's ``dict.__getitem__`` calls ``__missing__``; compiled, Dynamo raises ``KeyError`` in the trace. A
graph break, and silently the ``except KeyError`` branch where the frame catches it. Measured with the case
``dict_subclass_base_getitem`` on 2.5.1-2.15.0 (2.5-2.6 track the object as a ``MutableMappingVariable``:
``super().__getitem__`` runs on the real dict, right; ``dict.__getitem__(self, k)`` is a graph break).

Root cause: torch/_dynamo/variables/misc.py ``SuperVariable.call_method`` sends a method of ``dict`` that
``super()`` finds to the subclass tracker's plain dict storage (``_dict_vt`` 2.7-2.11, ``_base_vt`` 2.12-2.14,
``call_base_method`` 2.15); torch/_dynamo/variables/builtin.py ``BuiltinVariable.call_method`` (2.7-2.12,
``DictBuiltinVariable.call_method`` 2.13+) does the same for ``dict.__getitem__(self, key)``. The storage is a
plain dict: it raises ``KeyError``. Dynamo's own ``d[k]`` path (``UserDefinedDictVariable.call_method`` /
``mp_subscript_impl``, 2.9+) catches that ``KeyError`` and calls ``__missing__``; these two paths do not.

What the handlers accept: a call of ``dict.__getitem__`` itself with one positional key, on the tracker of an
object whose class is a strict ``dict`` subclass (``OrderedDict`` subclasses included) with metaclass
``type`` and a ``__missing__`` that is a plain function found on the class (``static_lookup``: nothing runs)
and not shadowed in the instance's ``__dict__``; for ``super()``, the first class after ``super()``'s start
in the object's MRO whose ``__dict__`` holds ``__getitem__`` holds ``dict.__getitem__`` (CPython's
``super_getattro``, read through ``type.__dict__`` without running anything). For those, Dynamo's own call
runs first; when it raises ``KeyError`` in the trace (the key is absent, with Dynamo's own guard on an input),
the handler clears it and calls ``__missing__(key)`` on the object as 2.9's ``d[k]`` does. Sound:
CPython's ``dict.__getitem__`` on an instance of a subclass is ``dict_subscript``: the table's value, else
``type(self).__missing__(self, key)`` (looked up on the type, ignoring the instance), else ``KeyError``.
Everything else defers: another method or arity, a class without ``__missing__``, an exact ``dict``, a
``super()`` that finds another class's ``__getitem__``, a ``__missing__`` that is a staticmethod/classmethod/C
function, any other exception.
"""

from __future__ import annotations

import types
from typing import Any

from ..dict_classes import instance_attribute
from ..dynamo_api import MISSING, bind_args, static_lookup, super_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, method_name_gate, routed_gate

NAME = "dict-subclass-base-getitem"
PARAMS = ("tx", "name", "args", "kwargs")
_DICT_GETITEM = vars(dict)["__getitem__"]


def _missing_class(cls: Any) -> bool:
    """A strict ``dict`` subclass (metaclass ``type``) whose ``__missing__`` is a plain function on the class."""
    return (isinstance(cls, type) and type(cls) is type and issubclass(cls, dict) and cls is not dict
            and isinstance(static_lookup(cls, "__missing__"), types.FunctionType))


def _missing_instance(value: Any) -> bool:
    """:func:`_missing_class`, and ``__missing__`` not in the instance's own ``__dict__`` (Dynamo's
    ``call_method`` would find that one; CPython's special lookup does not)."""
    return _missing_class(type(value)) and not instance_attribute(value, "__missing__")


def _missing_on_key_error(wrapped, args, kwargs, tx, obj, key):
    """Dynamo's own call; on its ``KeyError`` in the trace, ``obj.__missing__(key)`` as CPython's
    ``dict_subscript``."""
    from torch._dynamo.exc import ObservedKeyError, handle_observed_exception

    try:
        return wrapped(*args, **kwargs)
    except ObservedKeyError:
        handle_observed_exception(tx)
    return obj.call_method(tx, "__missing__", [key], {})


def _getitem_call(args, kwargs, arity: int):
    """``(tx, args)`` of a ``call_method(tx, "__getitem__", args, {})`` with ``arity`` positional arguments, or
    None (another method or shape)."""
    bound = bind_args(args, kwargs, PARAMS)
    if bound is None:
        return None
    tx, name, call_args, call_kwargs = bound
    if name != "__getitem__" or len(call_args) != arity or call_kwargs:
        return None
    return tx, call_args


@fail_safe(NAME)
def _super_getitem(wrapped, instance, args, kwargs):
    """``SuperVariable.call_method(tx, "__getitem__", [key], {})``."""
    call = _getitem_call(args, kwargs, 1)
    obj = getattr(instance, "objvar", None)
    value = getattr(obj, "value", MISSING)
    if call is None or value is MISSING or not _missing_instance(value):
        return DEFER
    try:
        start = instance.typevar.as_python_constant()
    except NotImplementedError:
        return DEFER
    if super_lookup(start, type(value), "__getitem__") is not _DICT_GETITEM:  # CPython's super_getattro
        return DEFER
    tx, (key,) = call
    return _missing_on_key_error(wrapped, args, kwargs, tx, obj, key)


@fail_safe(NAME)
def _dict_getitem(wrapped, instance, args, kwargs):
    """``BuiltinVariable(dict).call_method(tx, "__getitem__", [obj, key], {})`` (2.13+: ``DictBuiltinVariable``)."""
    call = _getitem_call(args, kwargs, 2)
    if call is None or getattr(instance, "fn", dict) is not dict:  # BuiltinVariable of another builtin
        return DEFER
    tx, (obj, key) = call
    value = getattr(obj, "value", MISSING)
    if value is MISSING or not _missing_instance(value):
        return DEFER
    return _missing_on_key_error(wrapped, args, kwargs, tx, obj, key)


_GETITEM = frozenset({"__getitem__"})

PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`super().__getitem__(k)` / `dict.__getitem__(self, k)` in a dict subclass with `__missing__`, absent "
         "key: `KeyError` in the trace (a graph break; **the `except KeyError` branch** where the frame catches "
         "it) instead of `__missing__`'s value", "2.7–2.15", "(`>=2.7`)"),
    ),
    fixes="super().__getitem__(k) or dict.__getitem__(self, k) in a dict subclass with __missing__ raises "
    "KeyError in the trace for an absent key instead of calling __missing__",
    upstream="torch/_dynamo/variables/misc.py: SuperVariable.call_method; "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_method (2.7-2.12), "
    "DictBuiltinVariable.call_method (2.13+)",
    mirrors="open upstream (docs/upstream/dict-subclass-base-getitem/); the KeyError -> __missing__ fallback of "
    "UserDefinedDictVariable.call_method (2.9+) for d[k]",
    torch=">=2.7",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.misc", "SuperVariable", "call_method",
               routed_gate(_super_getitem, method_name_gate, _GETITEM), params=PARAMS),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_method",
               routed_gate(_dict_getitem, method_name_gate, _GETITEM), params=PARAMS),
        Target("torch._dynamo.variables.builtin", "DictBuiltinVariable", "call_method",
               routed_gate(_dict_getitem, method_name_gate, _GETITEM), params=PARAMS, optional=True),
    ),
    summary="super().__getitem__ of a dict subclass with __missing__ calls __missing__ for an absent key",
    history=(
        ("2.5-2.6", "`super().__getitem__` runs on the real dict at trace time: right; `dict.__getitem__(self, k)` "
         "breaks"),
        ("2.7-2.15", "the plain storage raises KeyError in the trace"),
    ),
)
