"""A list or tuple compares an item with itself by identity first, as CPython does (torch <2.13).

Symptom: ``h = (1, float("nan")); h == h`` is ``False`` compiled and ``True`` in eager;
``n in [1, n]`` (``n`` a NaN) is ``False``; ``(x, 1) == (x, 2)`` of a tensor ``x`` is a
data-dependent graph break. Silently wrong with and without tdcompat on 2.5.1-2.12.1; found by
the differential fuzzer on 2.6.0 (seed 1119370061104037) once ``unhashable-module`` let the frame
trace that far.

Root cause: CPython's ``list_richcompare``/``tuplerichcompare`` and ``list_contains`` compare
items with ``PyObject_RichCompareBool``, which answers "equal" for one object compared with
itself before calling ``__eq__``. Dynamo's ``polyfills.list_cmp`` (reached from
``BaseListVariable.list_compare`` on 2.5-2.6 and ``BaseListVariable.call_method`` on 2.7-2.12)
tests ``a != b`` only, and ``utils.iter_contains`` tests ``==`` only. Upstream added the identity
checks in pytorch/pytorch#183073 (2.13: ``generic_richcompare_bool``).

What the handlers accept, and why it is sound:

- **Comparison** (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``) of two exact ``ListVariable``\\ s
  or two exact ``TupleVariable``\\ s where at least one pair of items at the same index is *the
  same tracker*. One tracker stands for one object (2.13 relies on the same fact in
  ``vt_identity_compare``), so CPython skips that pair without calling ``__eq__``. The handler
  drops those pairs from both sides and runs Dynamo's own ``list_cmp`` on the rest: the first
  pair that differs is the same pair as in CPython, and the lengths are both shorter by the
  number of pairs dropped, which leaves their comparison unchanged. Nothing is guarded: the
  answer reads only trackers Dynamo already guards.
- **Containment** ``v in seq`` of an exact list or tuple where ``v`` is an exact
  ``ConstantVariable`` of a scalar (``int``, ``float``, ``complex``, ``str``, ``bytes``,
  ``bool``, ``None``) or of a type that compares by identity (``object.__eq__``, read
  statically: a ``functools.partial``, a plain object), an item is the same tracker as ``v``,
  and every item before it is a scalar constant (or a symbolic number). CPython compares those
  earlier items with ``==`` (pure for these types, no side effect, no exception) and then finds
  the identical one: ``True`` whatever the earlier comparisons said.

- **Identity** ``a is b`` / ``a is not b`` of two exact lists on 2.5-2.6, where Dynamo ran the
  same ``list_cmp`` with ``operator.is_`` (True for any two lists of equal items): the same tracker
  is the same object; a list the frame built (``ValueMutationNew``/``MutableLocal``) is no other
  object; two lists from outside the frame with different trackers graph-break (which object each
  is on a later call is not guarded; 2.7+ answer False there unguarded).

Everything else (subclasses, ``torch.Size``, a list against a tuple, tuples under ``is``,
non-constant items before the identical one, no identical item) defers to Dynamo unchanged.
"""

from __future__ import annotations

import operator

from ..sequence_identity import contains_itself
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate

NAME = "sequence-compare-identity"

_CMP = {"__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
        "__gt__": operator.gt, "__ge__": operator.ge}


def _exact_sequences(left, right):
    from torch._dynamo.variables.lists import ListVariable, TupleVariable

    return type(left) is type(right) and type(left) in (ListVariable, TupleVariable)


def _compare_without_identical_pairs(tx, op, left, right):
    """Dynamo's ``list_cmp`` on the items left once pairs of one tracker are dropped; DEFER if
    there is no such pair."""
    from torch._dynamo import polyfills
    from torch._dynamo.variables import BuiltinVariable, UserFunctionVariable
    from torch._dynamo.variables.lists import TupleVariable

    a, b = left.items, right.items
    n = min(len(a), len(b))
    keep = [i for i in range(n) if a[i] is not b[i]]
    if len(keep) == n:
        return DEFER
    kept_left = TupleVariable([a[i] for i in keep] + list(a[n:]))
    kept_right = TupleVariable([b[i] for i in keep] + list(b[n:]))
    return UserFunctionVariable(polyfills.list_cmp).call_function(
        tx, [BuiltinVariable(op), kept_left, kept_right], {})


@fail_safe(NAME)
def _list_compare(wrapped, instance, args, kwargs):
    """``BaseListVariable.list_compare(tx, op, left, right)`` (a staticmethod, 2.5-2.6)."""
    if len(args) != 4 or kwargs:
        return DEFER
    tx, op, left, right = args
    if not _exact_sequences(left, right):
        return DEFER
    if op is operator.is_ or op is operator.is_not:
        return _list_identity(op, left, right)
    return _compare_without_identical_pairs(tx, op, left, right)


def _list_identity(op, left, right):
    """``a is b`` of two lists on 2.5-2.6, which ran ``list_cmp(operator.is_, ...)``: True for any two
    lists of equal items. One tracker is one object; a list the frame built is no other object; two
    lists passed in, of equal items, may or may not be one object on a later call (no guard says
    which): a graph break there. Tuples defer (``tuple(t)``, ``t[:]`` may return ``t`` itself)."""
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.lists import ListVariable

    from ..dynamo_api import graph_break, list_made_in_frame

    if type(left) is not ListVariable:
        return DEFER
    if left is right or list_made_in_frame(left) or list_made_in_frame(right):
        return ConstantVariable.create((left is right) == (op is operator.is_))
    graph_break("list identity", f"{left} is {right}",
                "two lists from outside the frame: whether they are one object is not guarded")


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``BaseListVariable.call_method(tx, name, args, kwargs)``: comparisons (2.7-2.12) and
    ``__contains__`` of an exact list or tuple (the gate below sends only those here)."""
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.lists import BaseListVariable, ListVariable, TupleVariable

    if len(args) != 4:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if call_kwargs or len(call_args) != 1 or type(instance) not in (ListVariable, TupleVariable):
        return DEFER
    if name == "__contains__":
        return ConstantVariable.create(True) if contains_itself(instance, call_args[0]) else DEFER
    if hasattr(BaseListVariable, "list_compare") or not _exact_sequences(instance, call_args[0]):
        return DEFER  # 2.5-2.6 compare in list_compare (the other target)
    return _compare_without_identical_pairs(tx, _CMP[name], instance, call_args[0])


@gate(_call_method)
def _call_method_gate(original, handle):
    """Every method call on a list or tuple passes here: only ``__contains__`` and the rich
    comparisons of an exact list or tuple go to the handler, after one name test."""
    names = frozenset(("__contains__", *_CMP))

    def call_method(self, tx, name, args, kwargs):
        if name not in names:
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


def _has_list_compare() -> bool:
    """``BaseListVariable.list_compare`` exists (2.5-2.6)."""
    from torch._dynamo.variables.lists import BaseListVariable

    return hasattr(BaseListVariable, "list_compare")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`h = (o.a, float("nan"))`: `h == h` is **False**, `n in [1, n]` of a NaN is **False**; '
             "`(x, 1) == (x, 2)` of one tensor is a data-dependent graph break, and an item's own "
             '`__eq__` runs when it meets itself (CPython compares an item with itself by identity '
             'first)',
         '2.5–2.12',
         '(`<2.13`)'),
    ),
    fixes="`h == h` False for a tuple holding a NaN, `nan in [nan]` False, `(x, 1) == (x, 2)` a data-dependent "
    "graph break (torch <2.13: items compared without CPython's identity shortcut)",
    upstream="torch/_dynamo/variables/lists.py: BaseListVariable.list_compare (2.5-2.6), "
    "BaseListVariable.call_method (comparisons 2.7-2.12, __contains__); torch/_dynamo/polyfills/__init__.py: "
    "list_cmp; torch/_dynamo/utils.py: iter_contains",
    mirrors="pytorch/pytorch#183073 ([dynamo] Fix __contains__ and container equality to check identity first)",
    torch="<2.13",
    fixed_upstream="2.13: pytorch/pytorch#183073, #184606 (generic_richcompare_bool)",
    targets=(
        Target("torch._dynamo.variables.lists", "BaseListVariable", "list_compare", _list_compare,
               optional=True, when=_has_list_compare),
        Target("torch._dynamo.variables.lists", "BaseListVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=("torch._dynamo.polyfills:list_cmp",),
    summary="list and tuple items compare by identity first (`==`, ordering, `in`), as CPython's "
    "PyObject_RichCompareBool does",
    history=(
        ("2.5-2.12", "`polyfills.list_cmp` and `iter_contains` compare items with `==` only: `(nan,) == (nan,)` "
         "of one NaN and `nan in [nan]` are False, `(x, 1) == (x, 2)` of a tensor is a data-dependent break"),
        ("2.13+", "right (`generic_richcompare_bool`, pytorch/pytorch#183073)"),
    ),
)
