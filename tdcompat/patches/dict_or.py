"""``a | b`` of two dicts is a graph break (torch 2.5-2.7).

Symptom: ``merged = defaults | overrides`` (PEP 584) in compiled code, or ``a.__or__(b)``: ``Unsupported: builtin: or_
[ConstDictVariable, ConstDictVariable]`` (2.5-2.6), ``Unsupported: Failed to trace builtin operator``
(2.7): an error under ``fullgraph=True``, a graph break without it. Measured with the case ``dict_or``
on 2.5.1-2.15.0 (2.8 traces it).

Root cause: torch/_dynamo/variables/builtin.py, ``BuiltinVariable.call_or_`` handles constants,
symbolic numbers and sets only, and returns ``None`` (no handler) for dicts. 2.8 added the dict branch
(``ConstDictVariable.call_method("__or__")``: a copy of ``a``'s items updated with ``b``'s, both key
sets guarded).

What the handlers accept: ``call_or_(tx, a, b)`` (and ``ConstDictVariable.call_method("__or__", [b])``,
``a.__or__(b)``, which 2.5-2.7 do not trace either) where both operands are exact ``ConstDictVariable``
trackers of a plain ``dict`` (``user_cls is dict``: not an ``OrderedDict``, a ``defaultdict`` or a
subclass, whose ``__or__``/``__ror__`` differ). It returns a new dict tracker (made in the frame, no
source) holding ``a``'s items, then ``b``'s, as 2.8 does. Sound: for two exact dicts CPython's
``dict.__or__`` is ``new = a.copy(); new.update(b)``, a C-level merge that runs no user code: ``a``'s
keys keep their order and their key objects, a key of ``b`` already present takes ``b``'s value in
place, new keys follow in ``b``'s order, which is what ``dict.update`` of the trackers' item maps does
(keys compare as Dynamo compares dict keys). Both key sets are guarded where Dynamo guards keys lazily
(``install_dict_keys_match_guard``, 2.7); 2.5-2.6 guard a dict's keys when they wrap it. Everything
else defers.
"""

from __future__ import annotations

from ..dynamo_api import bind_args, is_plain_dict, merged_items, new_object_kwargs, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-or"


@fail_safe(NAME)
def _call_or(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_or_(tx, a, b)`` of two plain dicts."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    _tx, a, b = bound
    return _merged(realize(a), realize(b))


def _merged(a, b):
    """The new dict ``a | b`` for two plain dicts (``dict.__or__``), else DEFER."""
    if not (is_plain_dict(a) and is_plain_dict(b)):
        return DEFER
    effects_begin()
    return a.clone(items=merged_items(a, b), source=None, **new_object_kwargs())


@fail_safe(NAME)
def _dunder_or(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "__or__", [b], {})``: ``a.__or__(b)`` spelled out (upstream's
    ``test_builtin_or_with_*_keys``). Only a plain dict ``b``: for anything else ``dict.__or__`` returns
    ``NotImplemented``, which this leaves to Dynamo."""
    if len(args) != 4 or kwargs:
        return DEFER
    _tx, name, call_args, call_kwargs = args
    if name != "__or__" or call_kwargs or len(call_args) != 1:
        return DEFER
    return _merged(instance, realize(call_args[0]))


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
    ),
    fixes="`a | b` of two dicts is unsupported (Unsupported: builtin: or_, a graph break; torch 2.5-2.7)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_or_",
    mirrors="torch 2.8: call_or_ sends a ConstDictVariable to ConstDictVariable.call_method('__or__') "
    "(upstream test_dicts.py DictTests::test_dict_or / test_builtin_or_with_invalid_types shapes)",
    torch="<2.8",
    fixed_upstream="2.8: BuiltinVariable.call_or_ handles dicts (ConstDictVariable.__or__)",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_or_", _call_or,
               params=("tx", "a", "b")),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _dunder_or_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    summary="`a | b` of two plain dicts builds the merged dict in the graph",
    history=(
        ("2.5-2.6", "`call_or_` has no dict branch: `Unsupported: builtin: or_ [ConstDictVariable, "
         "ConstDictVariable]`"),
        ("2.7", "the same gap: `Unsupported: Failed to trace builtin operator`"),
        ("2.8+", "traced: `ConstDictVariable.call_method('__or__')` copies `a` and updates it with `b`"),
    ),
)
