"""``d.items() == {("a", 1)}``, ``d.items() <= s``: an items view compared with a set (2.8-2.11).

Symptom: a ``dict_items`` view compared with a ``set``/``frozenset`` (either side of ``==``/``!=``) is **always
unequal** (``d.items() == {("a", 1), ("b", 2)}`` is False for ``d = {"a": 1, "b": 2}``; ``!=`` always True), and
``<``, ``<=``, ``>``, ``>=`` raise an observed ``TypeError`` in the trace (silently taken by ``except
TypeError``, a graph break otherwise). CPython compares an items view with any set or dict view as a set of
pairs (``dictview_richcompare``: the lengths, then each pair ``in`` the other). Measured with the case
``dict_items_compare`` on 2.8.0-2.11.0 (fullgraph and not); right on 2.12+ (pytorch/pytorch#178613); 2.5-2.7
fold ``d.items()`` to a tuple (``dict-items-view`` graph-breaks the comparison there).

Root cause: torch/_dynamo/variables/dicts.py: 2.8-2.9 ``DictItemsVariable`` has no comparison
(``VariableTracker.call_method`` gives ``NotImplemented`` for an operand of another type, and the ``cmp_eq``
polyfill then answers False; ``cmp_lt`` raises ``TypeError``); 2.10-2.11 (pytorch/pytorch#155154) answer
``__eq__`` with another items view by dict equality and with anything else ``False``.

What the handler accepts: ``DictItemsVariable.call_method(tx, name, [other], {})`` for the six comparison dunders,
``self`` an exact ``DictItemsVariable``, ``other`` an exact ``SetVariable``, ``FrozensetVariable``,
``DictKeySetVariable``, ``DictKeysVariable`` or ``DictItemsVariable``, where every element on both sides (the
view's keys and values, the operand's elements) is a constant by value (:mod:`tdcompat.view_values`). It runs
CPython's own operator on a real ``dict_items`` equal to the view and a real ``set`` of the operand's elements.
Sound: ``dictview_richcompare`` reads only the two sizes and ``pair in other`` (a hash and ``==`` of pure values),
which are the same for the copies, whatever kind of set or view the operand is; nothing runs user code; the
answer is a constant computed from values Dynamo guards (the dict's keys are guarded by
``view_values.view_value``, each constant where Dynamo built it from a source). An explicit
``d.items().__eq__(s)`` gives the same bool in CPython. Where an element is not a constant by value: two items
views under ``==``/``!=`` are left to Dynamo (dict equality on 2.10-2.11, a graph break on 2.8-2.9); where the
sizes alone decide (``dictview_richcompare`` compares them before any element: a view and a set of other sizes
are unequal) that answer, from the view's guarded keys and the size of an operand view or of a set made in the
frame; everything else graph-breaks. A user ``set`` subclass that keeps the builtin's ``__len__`` and
``__contains__`` (read statically: the two slots CPython calls on the operand) is computed as a set of the
elements Dynamo holds for it (2.9+'s ``UserDefinedSetVariable._set_vt``); another set-like operand (one that
overrides them) graph-breaks; any other operand (a list, a dict: ``NotImplemented`` both ways, unequal in CPython
too) defers.
``v > s``, ``v >= s``, ``s <= v``, ``s < v`` (keys or items view) all reach Dynamo's ``cmp_lt`` polyfill as
``s.__lt__(v)``, which raises ``TypeError`` on ``NotImplemented`` without trying the view's reflected ``>``
(an observed ``TypeError`` in the trace, natively): ``SetVariable.call_method("__lt__")`` answers CPython's
``s < v`` there only (the polyfill's code object, ``tx.f_code``), by value as above.
"""

from __future__ import annotations

import operator
from typing import Tuple

from ..dynamo_api import bind_args, build_sourceless, graph_break, guard_dict_keys, realize, static_lookup
from ..spec import Patch, Target
from ..view_values import COMPARISONS, NOT_PURE, operand_set, set_value, view_value
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-view-compare"

#: Set-like types CPython compares an items view with by contents (``PyAnySet_Check`` or a dict view).
_SET_LIKE: Tuple[type, ...] = (set, frozenset, type({}.keys()), type({}.items()))


_SETS = ("SetVariable", "FrozensetVariable")


def _operand(other):
    """A real ``set`` equal to the set-like tracker ``other``, ``NOT_PURE``, or None for an operand this patch
    does not compute (Dynamo's own answer, or a graph break for another set-like one)."""
    if type(other).__name__ == "UserDefinedSetVariable" and _plain_set_protocol(other):
        inner = getattr(other, "_set_vt", None)  # 2.9+: the set the user object holds, as the frame sees it
        return operand_set(inner, _SETS, ())
    return operand_set(other, _SETS + ("DictKeySetVariable",), ("DictKeysVariable", "DictItemsVariable"))


def _decided_by_size(name, instance, other):
    """CPython's answer where the two sizes alone decide it, else None. ``dictview_richcompare`` compares the
    sizes before any element (``==``/``!=`` need equal sizes, ``<`` a smaller view, ...), so a view and a set of
    different sizes are unequal whatever their elements. Sizes read: the view's dict's (keys guarded) and an
    operand view's, or a set's made in the frame (no source: its size is the frame's own computation)."""
    from torch._dynamo.variables.dicts import DictItemsVariable, DictKeysVariable

    if type(other) in (DictKeysVariable, DictItemsVariable):
        guard_dict_keys(other.dv_dict)
        size = len(other.dv_dict.items)
    elif getattr(other, "source", None) is None:
        size = len(other.set_items)
    else:
        return None
    guard_dict_keys(instance.dv_dict)
    permits = operator.eq if name in ("__eq__", "__ne__") else COMPARISONS[name]
    return None if permits(len(instance.dv_dict.items), size) else name == "__ne__"


def _plain_set_protocol(other) -> bool:
    """Does the user ``set``/``frozenset`` subclass keep the builtin's ``__len__`` and ``__contains__`` (read
    statically), the two slots ``dictview_richcompare`` calls on its operand?"""
    try:
        cls = other.python_type()
    except Exception:  # noqa: BLE001 - a tracker that cannot say: not accepted
        return False
    if not isinstance(cls, type):
        return False
    base = frozenset if issubclass(cls, frozenset) else set
    return issubclass(cls, base) and all(static_lookup(cls, name) is static_lookup(base, name)
                                         for name in ("__len__", "__contains__"))


def _set_like(other) -> bool:
    try:
        cls = other.python_type()
    except Exception:  # noqa: BLE001 - a tracker that cannot say: not known to be set-like
        return False
    return isinstance(cls, type) and issubclass(cls, _SET_LIKE)


@fail_safe(NAME)
def _compare(wrapped, instance, args, kwargs):
    """``DictItemsVariable.call_method(tx, "__eq__" | "__ne__" | "__lt__" | ..., [other], {})``."""
    from torch._dynamo.variables.dicts import DictItemsVariable

    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    op = COMPARISONS.get(name)
    if op is None or call_kwargs or len(call_args) != 1 or type(instance) is not DictItemsVariable:
        return DEFER
    other = realize(call_args[0])
    right = _operand(other)
    if right is None:
        if not _set_like(other):
            return DEFER  # a list, a dict, a number: unequal (NotImplemented both ways) in CPython too
        graph_break(NAME, f"dict_items.{name}({type(other).__name__})",
                    "an items view compared with a set-like object Dynamo does not hold by value: CPython "
                    "compares them as sets (and may call its __contains__), which Dynamo does not (tdcompat)")
    left = NOT_PURE if right is NOT_PURE else view_value(instance)
    if left is NOT_PURE:
        if type(other) is DictItemsVariable and name in ("__eq__", "__ne__"):
            return DEFER  # two items views: dict equality (2.10-2.11) or Dynamo's graph break (2.8-2.9)
        decided = _decided_by_size(name, instance, other)
        if decided is not None:
            effects_begin()
            return build_sourceless(tx, decided)
        graph_break(NAME, f"dict_items.{name}({type(other).__name__})",
                    "an items view compared with a set whose elements (or the view's) are not all constants: "
                    "CPython compares them as sets of pairs, which Dynamo does not (tdcompat)")
    effects_begin()
    return build_sourceless(tx, op(left, right))


_call_method_gate = routed_gate(_compare, method_name_gate, frozenset(COMPARISONS))


@fail_safe(NAME)
def _set_method(wrapped, instance, args, kwargs):
    """``SetVariable.call_method(tx, "__eq__" | "__lt__", [dict view], {})``.

    ``__eq__``: ``NotImplemented``, as CPython's ``set_richcompare`` for any operand that is not a set (2.9-2.11
    answer False), so that ``s == view`` runs the view's reflected ``__eq__``. ``__lt__`` only where Dynamo's
    ``cmp_lt`` polyfill calls it (``a.__lt__(b)`` standing for ``a < b``; ``v > s``, ``v >= s``, ``s <= v`` and
    ``s < v`` all end there, and the polyfill raises ``TypeError`` on ``NotImplemented`` without trying the
    reflected operator): CPython's ``s < v`` (the view's reflected ``>``, a proper-superset test), computed on real
    copies where every element on both sides is a constant by value, where the polyfill's left operand ``a`` is
    this very set (not a user subclass holding it: ``a <= view`` asks ``a == view`` first, which Dynamo answers
    False for a keys view and a user set on 2.9-2.11, so a computed ``<`` would turn that ``TypeError`` into a
    wrong ``False``). An explicit ``s.__lt__(v)`` (CPython: ``NotImplemented``) and anything else defer."""
    from torch._dynamo import polyfills
    from torch._dynamo.variables.dicts import DictItemsVariable, DictKeysVariable, FrozensetVariable, SetVariable

    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if call_kwargs or len(call_args) != 1 or type(instance) not in (SetVariable, FrozensetVariable):
        return DEFER
    other = realize(call_args[0])
    if type(other) not in (DictKeysVariable, DictItemsVariable):
        return DEFER
    if name == "__eq__":
        effects_begin()
        return build_sourceless(tx, NotImplemented)
    cmp_lt = getattr(polyfills, "cmp_lt", None)
    if name != "__lt__" or cmp_lt is None or getattr(tx, "f_code", None) is not cmp_lt.__code__:
        return DEFER
    left_operand = getattr(tx, "symbolic_locals", {}).get("a")
    if left_operand is None or realize(left_operand) is not instance:
        return DEFER  # a user set subclass holding this set (its __eq__/__len__/__iter__ may differ): Dynamo's
    left = set_value(instance)
    right = NOT_PURE if left is NOT_PURE else operand_set(other, (), ("DictKeysVariable", "DictItemsVariable"))
    if right is NOT_PURE or right is None:
        return DEFER
    effects_begin()
    return build_sourceless(tx, left < right)


_set_call_method_gate = routed_gate(_set_method, method_name_gate, frozenset({"__eq__", "__lt__"}))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d.items() == {(\"a\", 1), (\"b\", 2)}` (a set or frozenset, either side): **always `False`** (`!=` "
         "always `True`), `{\"a\", \"b\"} == d.keys()` too (2.9–2.11); `d.items() <= s` raises `TypeError` in the "
         "trace",
         "2.8–2.11",
         "(`>=2.8,<2.12`): compared as sets of pairs, as CPython"),
    ),
    fixes="an items view compared with a set, frozenset or another view: == always False, != always True, "
    "< and <= a TypeError inside the trace; s == d.keys() always False on 2.9-2.11 (torch 2.8-2.11)",
    upstream="torch/_dynamo/variables/dicts.py: DictItemsVariable.call_method (2.8-2.9: inherited from "
    "DictViewVariable)",
    mirrors="pytorch/pytorch#178613 (2.12: DictItemsVariable handles the comparison ops with set-like operands); "
    "#155154 (2.10: __eq__ between items views)",
    torch=">=2.8,<2.12",
    fixed_upstream="2.12: pytorch/pytorch#178613",
    targets=(
        Target("torch._dynamo.variables.dicts", "DictItemsVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs"), inherited=True),
        # 2.12 moved the class to variables/sets.py; variables/dicts.py imports it under this name
        Target("torch._dynamo.variables.dicts", "SetVariable", "call_method", _set_call_method_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    summary="an items view compared with a set or another view: as sets of pairs, as CPython",
    history=(
        ("2.5-2.7", "not this gap: `d.items()` is a tuple (`dict-items-view` graph-breaks its comparisons)"),
        ("2.8-2.9", "no comparison on `DictItemsVariable`: `==` with a set is False (NotImplemented both ways), "
         "`<` & co. raise `TypeError`"),
        ("2.10-2.11", "`__eq__` answers False for anything but another items view (#155154)"),
        ("2.12+", "right (#178613)"),
    ),
)
