"""``Sub.fromkeys(keys, v)`` of a ``dict`` subclass is a plain ``dict`` (2.13-2.15) or a graph break (2.7-2.12).

Symptom (silently wrong, measured on 2.13.0-2.15.0, ``fullgraph=True``, keys passed in or built in the frame):
``Sub.fromkeys(keys, v)`` of any ``dict``, ``OrderedDict`` or ``defaultdict`` subclass returns a plain ``dict``
(eager: a ``Sub``); the class's own ``__init__`` and ``__setitem__`` do not run (a ``__setitem__`` that
transforms the value leaves the wrong values). 2.5-2.12 graph-break ("Attempted to call function marked as
skipped" / "unsupported builtin").

Root cause: ``UserDefinedClassVariable.call_method`` (``torch/_dynamo/variables/user_defined.py``) sends every
method of a ``dict`` subclass but ``__new__`` to ``DictBuiltinVariable.call_method``, whose ``fromkeys`` builds
``dict.fromkeys`` (``call_custom_dict_fromkeys(tx, dict, ...)``); only ``OrderedDict`` and ``defaultdict``
themselves are built as their own type. CPython's ``_PyDict_FromKeys(cls, iterable, value)``
(``Objects/dictobject.c``, reached from ``dict.fromkeys`` and ``OrderedDict.fromkeys``) calls ``cls()`` and, for
a result that is not an exact ``dict``, stores each key with ``PyObject_SetItem(d, key, value)``.

What the handler accepts: ``S.fromkeys(iterable)`` / ``S.fromkeys(iterable, value)`` (and ``value=`` where the
classmethod is ``OrderedDict``'s) of a strict subclass of ``dict`` whose ``fromkeys`` is, read statically on
its MRO, ``dict``'s or ``OrderedDict``'s own classmethod, with metaclass ``type``. It then has Dynamo trace
:func:`_from_keys`, the Python spelling of ``_PyDict_FromKeys`` (``d = cls()``, ``d[key] = value`` per key in
iteration order): sound because nothing is shortcut, Dynamo traces the class call, the iteration and each store
as it traces the same lines in user code (guards on the class and the keys included), and for an exact ``dict``
result the C fast paths store the same items in the same order. Another metaclass graph-breaks (its
``__call__`` or attribute lookup would be the metaclass's). ``dict``, ``OrderedDict``, ``defaultdict``
themselves, a class's own ``fromkeys`` and other call shapes are Dynamo's, except on 2.7-2.12, where Dynamo has
no branch for the class and a call CPython refuses (no iterable, a third argument, ``dict.fromkeys``'s keyword)
raises ``TypeError`` in the trace.

2.7-2.12 read ``Sub.fromkeys`` as a skipped builtin, so the call never reaches ``call_method``: a second handler
on ``UserDefinedClassVariable.var_getattr`` answers the read of such a class's ``fromkeys`` with a
``GetAttrVariable`` (what those releases already answer for ``OrderedDict.fromkeys`` itself, whose call goes to
``call_method``). On every release in range the read (``var_getattr``, ``tp_getattro_impl`` on 2.14+) and the
call of a class reached from a source guard what ``fromkeys`` is: the builtin by type, ``__self__`` and
``__name__`` (``dynamo_api.guard_bound_builtin``), a class's own classmethod by its function
(``dynamo_api.guard_bound_function``), so a ``fromkeys`` set on the class between calls, or deleted again,
recompiles.
"""

from __future__ import annotations

import collections

from ..dynamo_api import (
    bind_args,
    graph_break,
    guard_bound_builtin,
    guard_bound_function,
    raise_observed,
    static_lookup,
    torch_release,
)
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate, method_name_gate, routed_gate

NAME = "dict-subclass-fromkeys"

#: The classes Dynamo builds as themselves (``call_custom_dict_fromkeys``).
_OWN = (dict, collections.OrderedDict, collections.defaultdict)


def _from_keys(cls, iterable, value):
    """CPython's ``_PyDict_FromKeys`` for a class whose instances are not exact dicts (traced by Dynamo)."""
    d = cls()
    for key in iterable:
        d[key] = value
    return d


def _dict_subclass(cls) -> bool:
    """A strict ``dict`` subclass with metaclass ``type`` (not one Dynamo builds as itself)."""
    return isinstance(cls, type) and type(cls) is type and cls not in _OWN and issubclass(cls, dict)


def _builtin_fromkeys(cls) -> bool:
    """Is ``cls`` such a subclass whose ``fromkeys``, read statically on its MRO, is ``dict``'s or
    ``OrderedDict``'s own classmethod (what :func:`_from_keys` spells)?"""
    return _dict_subclass(cls) and static_lookup(cls, "fromkeys") in (
        vars(dict)["fromkeys"], vars(collections.OrderedDict)["fromkeys"])


def _guard_fromkeys(instance):
    """Guard what ``<class>.fromkeys`` gives, for a class tracker with a source: the builtin by type,
    ``__self__`` and ``__name__``, the class's own classmethod by its function. Dynamo guards neither, so
    without it a ``fromkeys`` assigned on the class between calls, or deleted again, keeps the traced call.
    Returns the read's source (None for a class without one)."""
    source = getattr(instance, "source", None)
    if source is None:
        return None
    from torch._dynamo.source import AttrSource

    source = AttrSource(source, "fromkeys")
    if _builtin_fromkeys(instance.value):
        guard_bound_builtin(source)
    elif isinstance(static_lookup(instance.value, "fromkeys"), classmethod):
        guard_bound_function(source)
    return source


@fail_safe(NAME)
def _read(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.var_getattr(tx, "fromkeys")`` (``tp_getattro_impl`` on 2.14+; the gate sends no
    other name) of a dict subclass.

    Its builtin ``fromkeys``: on 2.7-2.12 the read is a ``GetAttrVariable`` whose call comes back to
    ``call_method`` (:func:`_fromkeys`), as Dynamo reads ``OrderedDict.fromkeys`` itself; 2.13+ read it as Dynamo
    does. A class reached from a source has what the read gives guarded, so a ``fromkeys`` assigned on the class
    between calls, or deleted again, recompiles: the builtin by type, ``__self__`` and ``__name__``, the class's
    own classmethod by its function (Dynamo guards neither: without these, the traced call is kept)."""
    bound = bind_args(args, kwargs, ("tx", "name"))
    if bound is None or not _dict_subclass(getattr(instance, "value", None)):
        return DEFER
    source = _guard_fromkeys(instance)
    if not (_reads_by_name() and _builtin_fromkeys(instance.value)):
        return DEFER
    from torch._dynamo.variables.misc import GetAttrVariable

    return GetAttrVariable(instance, "fromkeys", source=source)


@gate(_read)
def _read_gate(original, handle):
    """Dynamo's read for every name but ``fromkeys`` (one string comparison per class attribute read)."""

    def read(self, tx, name):
        if name != "fromkeys":
            return original(self, tx, name)
        return handle(self, tx, name)

    return read


def _arguments(cls: type, call_args, call_kwargs):
    """``(iterable, value)`` trackers of a ``fromkeys`` call CPython accepts for ``cls``, or None: ``value`` is
    None when not given. ``dict.fromkeys`` is positional-only; ``OrderedDict.fromkeys`` also takes ``value=``."""
    found = static_lookup(cls, "fromkeys")
    if found is vars(collections.OrderedDict)["fromkeys"]:
        keywords = {"value"}
    elif found is vars(dict)["fromkeys"]:
        keywords = set()
    else:
        return None  # the class's own fromkeys
    if not set(call_kwargs) <= keywords or not 1 <= len(call_args) + len(call_kwargs) <= 2:
        return None
    if len(call_args) == 2:
        return call_args[0], call_args[1]
    if not call_args:
        return None
    return call_args[0], call_kwargs.get("value")


def _not_iterable(vt) -> bool:
    """A constant tracker of a scalar (``None``, ``bool``, ``int``, ``float``, ``complex``): ``iter()`` of it
    raises ``TypeError``."""
    try:
        return vt.is_python_constant() and type(vt.as_python_constant()) in (type(None), bool, int, float, complex)
    except Exception:  # noqa: BLE001 - not a constant after all
        return False


@fail_safe(NAME)
def _fromkeys(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.call_method(tx, "fromkeys", args, kwargs)`` (the gate sends no other name)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, _name, call_args, call_kwargs = bound
    cls = getattr(instance, "value", None)
    if not isinstance(cls, type) or cls in _OWN or not issubclass(cls, dict):
        return DEFER
    if _dict_subclass(cls):
        _guard_fromkeys(instance)  # what this handler read (static_lookup): guarded where it is relied on
    found = _arguments(cls, list(call_args), dict(call_kwargs))
    if found is None:
        if _reads_by_name() and _builtin_fromkeys(cls):  # 2.7-2.12: Dynamo has no branch for it (a break)
            raise_observed(TypeError, tx, f"{cls.__qualname__}.fromkeys(...)",
                           f"fromkeys() takes 1 or 2 arguments ({len(call_args) + len(call_kwargs)} given)")
        return DEFER  # Dynamo's: its own fromkeys, or a call CPython refuses (Dynamo raises its TypeError)
    if type(cls) is not type:
        graph_break("fromkeys of a dict subclass with a metaclass", f"{cls.__qualname__}.fromkeys(...)",
                    "CPython calls cls() through the metaclass; Dynamo would build a plain dict")
    iterable, value = found
    if _not_iterable(iterable):  # before any effect: 2.7-2.8 cannot raise it inside the trace (a clean break)
        raise_observed(TypeError, tx, f"{cls.__qualname__}.fromkeys(...)",
                       f"'{type(iterable.as_python_constant()).__name__}' object is not iterable")
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.functions import UserFunctionVariable

    if value is None:
        value = ConstantVariable.create(None)
    effects_begin()  # traces cls() and the stores: from here a failure graph-breaks
    return tx.inline_user_function_return(UserFunctionVariable(_from_keys), [instance, iterable, value], {})


def _reads_by_name() -> bool:
    """2.7-2.12: ``Sub.fromkeys`` is read as a skipped builtin (the read needs :func:`_read`); 2.13 reads it
    through ``call_method`` itself."""
    return torch_release() < (2, 13)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`Sub.fromkeys(keys, v)` of a `dict`/`OrderedDict` subclass graph-breaks: the classmethod is read as a "
         "skipped builtin", "2.7–2.12", "(`>=2.7,<2.13`)"),
        ("`Sub.fromkeys(keys, v)` of a `dict`/`OrderedDict`/`defaultdict` subclass is a plain `dict`, built "
         "past the class's own `__init__`/`__setitem__` (eager: a `Sub`)", "2.13–2.15", "(`>=2.13`)"),
    ),
    fixes="Sub.fromkeys(keys, v) of a dict subclass silently returns a plain dict (and skips the class's own "
    "__init__/__setitem__)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_method ('fromkeys'); "
    "torch/_dynamo/variables/builtin.py: DictBuiltinVariable.call_custom_dict_fromkeys",
    mirrors="none upstream yet (docs/upstream/dict-subclass-fromkeys/): CPython's _PyDict_FromKeys calls cls() "
    "and stores each key through PyObject_SetItem",
    torch=">=2.7",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_method",
               routed_gate(_fromkeys, method_name_gate, frozenset({"fromkeys"})),
               params=("tx", "name", "args", "kwargs")),
        # the read: guarded; on 2.7-2.12 a GetAttrVariable, so that the call reaches call_method
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "var_getattr", _read_gate,
               params=("tx", "name"), optional=True),
        # 2.14+: the class's own attribute lookup (only guarded there: 2.14+ read it as Dynamo does)
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "tp_getattro_impl", _read_gate,
               params=("tx", "name"), optional=True),
    ),
    requires=("torch._dynamo.variables:ConstantVariable",
              "torch._dynamo.variables.functions:UserFunctionVariable"),
    summary="Sub.fromkeys(...) of a dict subclass builds a Sub as CPython does (cls() and a store per key)",
    history=(
        ("2.5-2.6", "a graph break: the classmethod is a skipped builtin (and a dict subclass cannot be built in "
                    "the frame)"),
        ("2.7-2.12", "a graph break: the classmethod is a skipped builtin"),
        ("2.13-2.15", "`UserDefinedClassVariable.call_method` builds `dict.fromkeys` for any dict subclass"),
    ),
)
