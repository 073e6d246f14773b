"""A dict subclass's ``__missing__``: ``d.get(k)`` calls it (2.6), ``d[k]`` does not (2.7-2.8).

Symptom: for a ``dict``/``OrderedDict`` subclass that defines ``__missing__``, passed to the compiled function:
on 2.6, ``d.get("z")`` returns ``__missing__``'s value where CPython's ``dict.get`` returns the default
(``None``), silently under ``fullgraph=True``; on 2.7-2.8, ``d["z"]`` raises ``KeyError`` inside the trace where
CPython calls ``__missing__``: a graph break, and a silently wrong branch where the frame catches it
(``try: v = d[k] except KeyError: ...``). Measured with the cases ``dict_subclass_missing_get`` and
``dict_subclass_missing_getitem`` on 2.5.1-2.15.0 (2.9+ right).

Root cause: 2.6: torch/_dynamo/variables/user_defined.py ``MutableMappingVariable.var_getattr("get")`` answers
with ``polyfills.mapping_get``, which reads ``obj.__getitem__(key)``: for a ``dict`` subclass that is
``dict.__getitem__``, which calls ``__missing__``. 2.7-2.8: ``UserDefinedDictVariable.call_method`` sends
``__getitem__`` to its ``ConstDictVariable`` storage, which raises ``KeyError`` for an absent key
(pytorch/pytorch: 2.9 catches it there and calls ``__missing__``).

What the handlers accept, on an object whose class (a strict ``dict`` subclass, ``OrderedDict`` included)
defines ``__missing__`` and keeps ``dict``'s ``__getitem__`` and ``__contains__``:
- 2.6, ``MutableMappingVariable.var_getattr(tx, "get")`` where the class's ``get`` is ``dict.get``: a method
  that traces ``_dict_get`` (``obj[key] if key in obj else default``). Sound: ``dict.get`` looks the key up in
  the table and never calls ``__missing__``; ``key in obj`` is ``dict.__contains__`` (Dynamo answers it with
  its own guard) and ``obj[key]`` of a present key is the table's value, so ``__missing__`` is not reached.
- 2.7-2.8, ``UserDefinedDictVariable.call_method(tx, "__getitem__", [key], {})``: asks the storage
  ``__contains__`` first (Dynamo's answer, with its ``DICT_CONTAINS`` guard on an input); for an absent key it
  calls ``__missing__`` as 2.9 does (``self.call_method(tx, "__missing__", ...)``, Dynamo inlines it), for a
  present key Dynamo's own ``__getitem__``. Sound: CPython's ``dict.__getitem__`` of a subclass is exactly
  that (``dict_subscript``: the table's value, else ``__missing__(key)``, else ``KeyError``).
Everything else defers: other names and arities, classes without ``__missing__`` or with their own
``__getitem__``/``__contains__``/``get``.
"""

from __future__ import annotations

import collections
from typing import Any

from ..dict_classes import instance_attribute
from ..dynamo_api import MISSING, bind_args, static_lookup, user_dict_storage
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate, method_name_gate, routed_gate

NAME = "dict-subclass-missing"


def _dict_get(obj, key, default=None, /):
    """CPython's ``dict.get`` for a subclass that keeps ``dict``'s lookups: ``__missing__`` is never called
    (positional only, as ``dict.get``: ``get(k, default=v)`` is CPython's TypeError, here a failed binding)."""
    if key in obj:
        return obj[key]
    return default


def _missing_class(value: Any) -> bool:
    """A strict ``dict`` subclass (metaclass ``type``) with a ``__missing__`` of its own and ``dict``'s lookups
    (read without running anything: ``static_lookup``, ``instance_attribute``)."""
    cls = type(value)
    if type(cls) is not type or not issubclass(cls, dict) or cls in (dict, collections.OrderedDict):
        return False
    if instance_attribute(value, "__missing__") or static_lookup(cls, "__missing__") is MISSING:
        return False
    return (static_lookup(cls, "__getitem__") is dict.__getitem__
            and static_lookup(cls, "__contains__") is dict.__contains__)


def _subclasses_are_mappings() -> bool:
    """Dynamo tracks a dict subclass passed in as a ``MutableMappingVariable`` (before 2.7's
    ``UserDefinedDictVariable``)."""
    from torch._dynamo.variables import user_defined

    return not hasattr(user_defined, "UserDefinedDictVariable")


@fail_safe(NAME)
def _get(wrapped, instance, args, kwargs):
    """``MutableMappingVariable.var_getattr(tx, "get")`` (2.6)."""
    from torch._dynamo.variables import UserMethodVariable

    bound = bind_args(args, kwargs, ("tx", "name"))
    if bound is None or bound[1] != "get" or not _missing_class(instance.value) \
            or static_lookup(type(instance.value), "get") is not dict.get:
        return DEFER
    return UserMethodVariable(_dict_get, instance)


@gate(_get)
def _get_gate(original, handle):
    """Every attribute read of a mapping Dynamo tracks as a user object: only ``get`` goes on."""

    def var_getattr(self, tx, name):
        if name != "get":
            return original(self, tx, name)
        return handle(self, tx, name)

    return var_getattr


@fail_safe(NAME)
def _getitem(wrapped, instance, args, kwargs):
    """``UserDefinedDictVariable.call_method(tx, "__getitem__", [key], {})`` (2.7-2.8)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if name != "__getitem__" or len(call_args) != 1 or call_kwargs or not _missing_class(instance.value):
        return DEFER
    storage = user_dict_storage(instance)
    if storage is None:
        return DEFER
    present = storage.call_method(tx, "__contains__", list(call_args), {})
    if not present.is_python_constant() or present.as_python_constant():
        return DEFER
    return instance.call_method(tx, "__missing__", list(call_args), {})


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d.get('z')` of a dict subclass with `__missing__`, passed in: **`__missing__`'s value** instead of "
         "the default", "2.6", ""),
        ("`d['z']` of a dict subclass with `__missing__`, passed in: `KeyError` in the trace (a graph break; "
         "**the `except KeyError` branch** where the frame catches it) instead of `__missing__`'s value",
         "2.7–2.8", "(`>=2.6,<2.9`)"),
    ),
    fixes="a dict subclass's __missing__ is called by d.get(k) (torch 2.6) and not by d[k] (2.7-2.8), unlike "
    "CPython",
    upstream="torch/_dynamo/variables/user_defined.py: MutableMappingVariable.var_getattr (2.6: the "
    "polyfills.mapping_get answer), UserDefinedDictVariable.call_method (2.7-2.8: __getitem__)",
    mirrors="2.9: UserDefinedDictVariable.call_method calls __missing__ on the storage's KeyError",
    torch=">=2.6,<2.9",
    fixed_upstream="2.9: UserDefinedDictVariable.call_method calls __missing__ (measured)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "MutableMappingVariable", "var_getattr", _get_gate,
               params=("tx", "name"), optional=True, when=_subclasses_are_mappings),
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method",
               routed_gate(_getitem, method_name_gate, frozenset({"__getitem__"})),
               params=("tx", "name", "args", "kwargs"), optional=True),
    ),
    summary="a dict subclass's __missing__ is called by d[k] and not by d.get(k), as in CPython",
    history=(
        ("2.5", "`d.get(k)` of such a subclass passed in: a graph break; `d[k]`: right"),
        ("2.6", "`d.get(k)` calls `__missing__` (wrong); `d[k]`: right"),
        ("2.7-2.8", "`d.get(k)` right; `d[k]` of an absent key raises KeyError in the trace"),
        ("2.9+", "right"),
    ),
)
