"""``a | b`` of two dicts is a graph break (torch 2.5-2.7); with an ``OrderedDict`` operand, a plain dict (2.5-2.8).

Symptom: ``merged = defaults | overrides`` (PEP 584) in compiled code, or ``a.__or__(b)``: ``Unsupported: builtin: or_
[ConstDictVariable, ConstDictVariable]`` (2.5-2.6), ``Unsupported: Failed to trace builtin operator``
(2.7): an error under ``fullgraph=True``, a graph break without it. Measured with the case ``dict_or``
on 2.5.1-2.15.0 (2.8 traces it). With an ``OrderedDict`` operand the result is **silently a plain dict**
where CPython returns an ``OrderedDict``: on 2.5-2.7 whenever both operands are constants (Dynamo folds
``operator.or_`` over ``as_python_constant()``, which is a ``dict``), on 2.8 for ``{...} | od``
(``ConstDictVariable.call_method("__or__")`` clones the left operand and ignores ``OrderedDict.__ror__``).
Measured with the case ``dict_or_ordered``.

Root cause: torch/_dynamo/variables/builtin.py, ``BuiltinVariable.call_or_`` handles constants,
symbolic numbers and sets only, and returns ``None`` (no handler) for dicts. 2.8 added the dict branch
(``ConstDictVariable.call_method("__or__")``: a copy of ``a``'s items updated with ``b``'s, both key
sets guarded).

What the handlers accept: ``call_or_(tx, a, b)`` (and ``ConstDictVariable.call_method("__or__", [b])``,
``a.__or__(b)``, which 2.5-2.7 do not trace either) where both operands are exact ``ConstDictVariable``
trackers of an exact ``dict`` or an exact ``collections.OrderedDict`` (``user_cls``; not a ``defaultdict``
or a subclass, whose ``__or__``/``__ror__`` may run user code). It returns a new dict tracker (made in the
frame, no source) holding ``a``'s items, then ``b``'s, of class ``OrderedDict`` if either operand is one
for ``a | b`` (``OrderedDict.__or__``/``__ror__`` build ``OrderedDict(a)`` and update it with ``b``: the
same items in the same order), of ``type(a)`` for ``a.__or__(b)`` spelled out (``dict.__or__`` accepts any
dict and returns a ``dict``). Sound: for two exact dicts CPython's
``dict.__or__`` is ``new = a.copy(); new.update(b)``, a C-level merge that runs no user code: ``a``'s
keys keep their order and their key objects, a key of ``b`` already present takes ``b``'s value in
place, new keys follow in ``b``'s order, which is what ``dict.update`` of the trackers' item maps does
(keys compare as Dynamo compares dict keys). Both key sets are guarded where Dynamo guards keys lazily
(``install_dict_keys_match_guard``, 2.7); 2.5-2.6 guard a dict's keys when they wrap it; the operands'
classes are fixed by the type guard Dynamo puts on every dict it wraps. On 2.8 the handlers return what
2.8 itself builds for two plain dicts and for ``a.__or__(b)``. Everything else defers.

Left alone: on 2.9-2.12 ``{...}.__or__(od)`` spelled out returns an ``OrderedDict`` (CPython: ``dict``);
Dynamo routes ``a | b`` through the same ``call_method("__or__")`` there, so a handler cannot tell the two
apart.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, merged_items, new_object_kwargs, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-or"


@fail_safe(NAME)
def _call_or(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_or_(tx, a, b)`` of two exact dicts or ``OrderedDict``s."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    _tx, a, b = bound
    a, b = realize(a), realize(b)
    return _merged(a, b, b if _dict_class(b) is collections.OrderedDict else a)


def _dict_class(vt):
    """``dict`` or ``OrderedDict`` for an exact tracker of one, else None."""
    from torch._dynamo.variables import ConstDictVariable

    if type(vt) is not ConstDictVariable:
        return None
    cls = getattr(vt, "user_cls", None)
    return cls if cls is dict or cls is collections.OrderedDict else None


def _merged(a, b, like):
    """The new dict of ``a``'s items updated with ``b``'s, of ``like``'s class, else DEFER."""
    if _dict_class(a) is None or _dict_class(b) is None:
        return DEFER
    effects_begin()
    return like.clone(items=merged_items(a, b), source=None, **new_object_kwargs())


@fail_safe(NAME)
def _dunder_or(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "__or__", [b], {})``: ``a.__or__(b)`` spelled out (upstream's
    ``test_builtin_or_with_*_keys``). Only an exact dict or ``OrderedDict`` ``b`` (for anything else
    ``dict.__or__`` returns ``NotImplemented``, which this leaves to Dynamo); the result has ``a``'s class."""
    if len(args) != 4 or kwargs:
        return DEFER
    _tx, name, call_args, call_kwargs = args
    if name != "__or__" or call_kwargs or len(call_args) != 1:
        return DEFER
    return _merged(instance, realize(call_args[0]), instance)


#: On ``ConstDictVariable.call_method`` (every dict method Dynamo traces): only ``__or__`` reaches the handler,
#: through the name gate it shares with the other dict-method patches.
_dunder_or_gate = routed_gate(_dunder_or, method_name_gate, frozenset({"__or__"}))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`a | b` of two dicts: `Unsupported: builtin: or_ [ConstDictVariable, ConstDictVariable]` / "
         "`Failed to trace builtin operator` (an error under `fullgraph=True`)",
         "2.5–2.7",
         "(`<2.8`)"),
        ("`{...} | od` or `od | {...}` with an `OrderedDict` operand: **silently a plain `dict`** (CPython: an "
         "`OrderedDict`)",
         "2.5–2.8",
         "(`<2.9`)"),
    ),
    fixes="`a | b` of two dicts is unsupported (Unsupported: builtin: or_, a graph break; torch 2.5-2.7); "
    "with an OrderedDict operand it is a plain dict (torch 2.5-2.8)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_or_",
    mirrors="torch 2.8: call_or_ sends a ConstDictVariable to ConstDictVariable.call_method('__or__') "
    "(upstream test_dicts.py DictTests::test_dict_or / test_builtin_or_with_invalid_types shapes)",
    torch="<2.9",
    fixed_upstream="2.9: ConstDictVariable.__or__ takes the OrderedDict operand's class (2.8: call_or_ "
    "handles two plain dicts)",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_or_", _call_or,
               params=("tx", "a", "b")),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _dunder_or_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    summary="`a | b` of two dicts or `OrderedDict`s builds the merged dict, of CPython's class, in the graph",
    history=(
        ("2.5-2.6", "`call_or_` has no dict branch: `Unsupported: builtin: or_ [ConstDictVariable, "
         "ConstDictVariable]`; constant operands are folded over `as_python_constant()` (an `OrderedDict` "
         "operand gives a plain `dict`)"),
        ("2.7", "the same gap: `Unsupported: Failed to trace builtin operator`; the same folding"),
        ("2.8", "traced: `ConstDictVariable.call_method('__or__')` copies `a` and updates it with `b`; "
         "`{...} | od` keeps the left operand's class (`dict`)"),
        ("2.9+", "`__or__` takes the `OrderedDict`/`defaultdict` operand's class"),
    ),
)
