"""A dict method called with the wrong number of arguments raises ``TypeError`` (torch 2.7-2.8).

Symptom: ``try: d.keys(1) / except TypeError:`` (or ``d.get()``, ``d.values(1)``, ``d.copy(1)`` ...)
on a dict or a dict subclass in compiled code: ``AssertionError`` or ``InternalTorchDynamoError:
IndexError`` out of Dynamo, also without ``fullgraph`` (the user's program stops). Upstream's
``test_dicts.py`` calls ``self.assertRaises(TypeError, d.keys, 1)`` in ``DictSubclassMethodsTests``;
found when ``dict-subclass-class-method`` let those tests trace that far on 2.8.0. 2.9 raises the
``TypeError`` in the trace. 2.5-2.6 crash the same way on a plain dict, but cannot raise ``TypeError``
in the trace (only a graph break would be left there): not covered, the crash stays native there.

Root cause: ``ConstDictVariable.call_method`` (torch/_dynamo/variables/dicts.py) asserts the
argument count of ``keys``/``values``/``items``/``copy`` (``assert not (args or kwargs)``) and
indexes ``args[0]`` for ``get``, where CPython raises ``TypeError``.

What the handler accepts: ``call_method(tx, name, args, kwargs)`` on an exact ``ConstDictVariable``
whose ``user_cls`` is ``dict`` or ``OrderedDict`` (a dict subclass's own dict part included:
``UserDefinedDictVariable`` sends dict's methods there), ``name`` one of :data:`_ARITY` with
keywords or an argument count outside what ``dict.<name>`` takes, or ``update`` with one constant
number or ``None``. It makes the very call on a new empty instance of ``user_cls`` (``None``
placeholders for the arguments; ``update``'s own immutable constant): CPython parses the
arguments before it reads them or the mapping, and ``update`` of a non-iterable raises before it
changes anything, so the ``TypeError`` it raises is the one the user's call raises, text included;
that error is raised in the trace. Whatever else the probe does (no error, another error) defers.

Keyword calls of ``get``/``pop``/``setdefault`` are ``dict-method-keywords``' (every release), not this patch's.

Why that is sound: the argument count and keyword names are static in the bytecode Dynamo traces,
the receiver's class is ``user_cls`` (guarded with the mapping), ``update``'s constant is guarded
or made in the frame, and for these C methods the error depends on nothing else. ``defaultdict``
(another tracker class), other ``user_cls`` and, for an ``OrderedDict``, dunder methods and keyword
calls (CPython names ``dict`` or ``OrderedDict`` in their text depending on how the method was
reached: ``od.__contains__()`` or a bound ``f = od.__contains__``) are left to Dynamo.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, raise_observed
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "dict-method-arity"

#: The receivers answered: their methods' argument parsing is CPython's own C code.
_RECEIVERS = (dict, collections.OrderedDict)
#: What ``update`` cannot iterate: ``d.update(1)`` raises TypeError before it changes anything.
_NON_ITERABLE = frozenset({int, float, bool, complex, type(None)})
#: Keyword calls of these are dict-method-keywords' gap (every release), not this patch's.
_KEYWORD_METHODS = frozenset({"get", "pop", "setdefault"})
#: dict method -> the positional argument counts CPython accepts (no keywords for any of them).
_ARITY = {
    "keys": (0,), "values": (0,), "items": (0,), "copy": (0,), "clear": (0,),
    "get": (1, 2), "pop": (1, 2), "setdefault": (1, 2),
    "__contains__": (1,), "__getitem__": (1,), "__delitem__": (1,), "__setitem__": (2,), "__len__": (0,),
}


def _refused(cls: type, name: str, call_args, keywords) -> "TypeError | None":
    """The TypeError CPython's ``cls.<name>`` raises for these arguments, read off the same call on
    a new empty ``cls`` (placeholders ``None`` for the arguments, except ``update``'s one constant);
    None when the call is not one this handler answers, raises nothing or raises another error."""
    from torch._dynamo.variables import ConstantVariable

    if cls is not dict and (name.startswith("__") or keywords):
        return None  # CPython words these for an OrderedDict by how it was called (descriptor or bound)
    if keywords and name in _KEYWORD_METHODS:
        return None  # dict-method-keywords' (every release), whatever the positional count
    if name == "update":
        if (len(call_args) != 1 or keywords or type(call_args[0]) is not ConstantVariable
                or type(call_args[0].value) not in _NON_ITERABLE):
            return None
        probe = [call_args[0].value]
    elif name in _ARITY:
        probe = [None] * len(call_args)
    else:
        return None
    try:
        getattr(cls(), name)(*probe, **dict.fromkeys(keywords))
    except TypeError as error:
        return error
    except Exception:  # noqa: BLE001 - a KeyError of the placeholder: the arguments were right
        return None
    return None


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, name, args, kwargs)`` with arguments the method refuses."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    from torch._dynamo.variables import ConstDictVariable

    cls = getattr(instance, "user_cls", None)
    if type(instance) is not ConstDictVariable or cls not in _RECEIVERS:
        return DEFER
    error = _refused(cls, name, call_args, list(call_kwargs))
    if error is None:
        return DEFER
    effects_begin()
    raise_observed(TypeError, tx, f"{cls.__name__}.{name}() with {len(call_args)} arguments", str(error))


@gate(_call_method)
def _call_method_gate(original, handle):
    """What is installed on ``ConstDictVariable.call_method`` (every dict method Dynamo traces): a
    call with keywords or a count the method refuses goes to the handler, all else straight on."""

    def call_method(self, tx, name, args, kwargs):
        counts = _ARITY.get(name)
        if counts is None:
            if name == "update" and len(args) == 1 and type(args[0]).__name__ == "ConstantVariable":
                return handle(self, tx, name, args, kwargs)
            return original(self, tx, name, args, kwargs)
        if not kwargs and len(args) in counts:
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`try: d.keys(1) / except TypeError` (or `d.get()`, `d.copy(1)`, `d.keys(x=1)`) on a dict '
             'or dict subclass: the compile **crashes** (`AssertionError`, `InternalTorchDynamoError: '
             'IndexError`), also without `fullgraph`',
         '2.7–2.8',
         '(`>=2.7,<2.9`)'),
    ),
    fixes="`d.keys(1)`, `d.get()`, `d.copy(1)` in a `try`: `AssertionError` / `InternalTorchDynamoError: IndexError` "
    "out of Dynamo (torch 2.7-2.8), also without fullgraph",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method (asserts the argument count)",
    mirrors="torch 2.9: a wrong argument count raises TypeError in the trace",
    torch=">=2.7,<2.9",
    fixed_upstream="2.9: ConstDictVariable.call_method raises TypeError for a wrong argument count",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    summary="a dict method called with a count or keywords CPython refuses raises CPython's TypeError in the trace",
    history=(
        ("2.5-2.6", "the compile crashes on a plain dict as on 2.7-2.8 (not patched: this torch cannot raise "
         "TypeError in the trace)"),
        ("2.7-2.8", "the compile crashes: `AssertionError` (`keys`/`values`/`items`/`copy`) or "
         "`InternalTorchDynamoError: IndexError` (`get()`)"),
        ("2.9+", "right"),
    ),
)
