"""``Sub.fromkeys(keys, v)`` of a ``dict`` subclass is a plain ``dict`` when compiled (2.13-2.15).

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
themselves, a class's own ``fromkeys`` and other call shapes are Dynamo's.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, graph_break, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-subclass-fromkeys"

#: The classes Dynamo builds as themselves (``call_custom_dict_fromkeys``).
_OWN = (dict, collections.OrderedDict, collections.defaultdict)


def _from_keys(cls, iterable, value):
    """CPython's ``_PyDict_FromKeys`` for a class whose instances are not exact dicts (traced by Dynamo)."""
    d = cls()
    for key in iterable:
        d[key] = value
    return d


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
    found = _arguments(cls, list(call_args), dict(call_kwargs))
    if found is None:
        return DEFER  # Dynamo's: its own fromkeys, or a call CPython refuses (Dynamo raises its TypeError)
    if type(cls) is not type:
        graph_break("fromkeys of a dict subclass with a metaclass", f"{cls.__qualname__}.fromkeys(...)",
                    "CPython calls cls() through the metaclass; Dynamo would build a plain dict")
    iterable, value = found
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.functions import UserFunctionVariable

    if value is None:
        value = ConstantVariable.create(None)
    effects_begin()  # traces cls() and the stores: from here a failure graph-breaks
    return tx.inline_user_function_return(UserFunctionVariable(_from_keys), [instance, iterable, value], {})


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`Sub.fromkeys(keys, v)` of a `dict`/`OrderedDict`/`defaultdict` subclass is a plain `dict`, built "
         "past the class's own `__init__`/`__setitem__` (eager: a `Sub`)", "2.13–2.15", "(`>=2.13`)"),
    ),
    fixes="Sub.fromkeys(keys, v) of a dict subclass silently returns a plain dict (and skips the class's own "
    "__init__/__setitem__)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_method ('fromkeys'); "
    "torch/_dynamo/variables/builtin.py: DictBuiltinVariable.call_custom_dict_fromkeys",
    mirrors="none upstream yet (docs/upstream/dict-subclass-fromkeys/): CPython's _PyDict_FromKeys calls cls() "
    "and stores each key through PyObject_SetItem",
    torch=">=2.13",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_method",
               routed_gate(_fromkeys, method_name_gate, frozenset({"fromkeys"})),
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=("torch._dynamo.variables:ConstantVariable",
              "torch._dynamo.variables.functions:UserFunctionVariable"),
    summary="Sub.fromkeys(...) of a dict subclass builds a Sub as CPython does (cls() and a store per key)",
    history=(
        ("2.5-2.12", "a graph break: the classmethod is a skipped builtin"),
        ("2.13-2.15", "`UserDefinedClassVariable.call_method` builds `dict.fromkeys` for any dict subclass"),
    ),
)
