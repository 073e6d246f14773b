"""``p in (1, p)`` is False for an object Dynamo treats as a constant but rebuilds (torch 2.13 on).

Symptom: ``h = functools.partial(f, 1); h in (1, "s", h)`` and ``h in [h]`` are ``False``
compiled, ``True`` in eager; ``h not in [h]`` is ``True``. Silently wrong with and without
tdcompat on 2.13.0-2.15.0 (fuzzer seed-0 program 292, once the hash family compared values inside
sequences); right with tdcompat before 2.13.

Root cause: ``BaseListVariable.sq_contains`` (``sq_contains_impl`` from 2.14;
torch/_dynamo/variables/lists.py) calls ``utils.iter_contains``, which for a search value that
``is_python_constant()`` compares ``item.as_python_constant() is search_val or ... ==
search_val``. A ``FunctoolsPartialVariable`` made in the frame is such a constant, but
``as_python_constant()`` builds a new ``functools.partial`` on each call: neither ``is`` nor
``==`` (identity, for a partial) can match.

What the handler accepts (:func:`tdcompat.sequence_identity.contains_itself`, shared with the
<2.13 patch): an exact list or tuple, a search value of a type that compares by identity
(``object.__eq__``) or a scalar constant, found as *the same tracker* after only scalar
constants (or symbolic numbers). One tracker stands for one object, so CPython's identity
shortcut in ``PyObject_RichCompareBool`` finds it, after comparisons with no side effect:
``True``. Anything else: Dynamo's answer, unchanged. Nothing is guarded (the answer reads only
trackers).
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "sequence-contains-identity"


@fail_safe(NAME)
def _sq_contains(wrapped, instance, args, kwargs):
    """``BaseListVariable.sq_contains(tx, item)`` / ``sq_contains_impl(tx, item)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.lists import ListVariable, TupleVariable

    from ..sequence_identity import contains_itself

    if type(instance) not in (ListVariable, TupleVariable) or not contains_itself(instance, args[1]):
        return DEFER
    return ConstantVariable.create(True)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`h = functools.partial(f, 1)` made in the frame: `h in (1, h)`, `h in [h]` are **False**, '
             '`h not in [h]` is **True** (Dynamo compares a rebuilt copy of the partial)',
         '2.13–2.15',
         '(`>=2.13`)'),
    ),
    fixes="`h in (1, h)` / `h in [h]` is False for a functools.partial (or another constant Dynamo rebuilds) "
    "made in the frame (silently wrong, torch 2.13+)",
    upstream="torch/_dynamo/variables/lists.py: BaseListVariable.sq_contains (sq_contains_impl from 2.14); "
    "torch/_dynamo/utils.py: iter_contains",
    mirrors="open upstream (CPython's PyObject_RichCompareBool identity shortcut, as 2.13's "
    "generic_richcompare_bool does for ==)",
    torch=">=2.13",
    targets=(
        Target("torch._dynamo.variables.lists", "BaseListVariable", "sq_contains", _sq_contains,
               params=("tx", "item"), optional=True),
        Target("torch._dynamo.variables.lists", "BaseListVariable", "sq_contains_impl", _sq_contains,
               params=("tx", "item"), optional=True),
    ),
    summary="`v in seq` is True where seq holds v's own tracker after only scalar items",
    history=(
        ("2.5-2.12", "not this gap (`in` over a list or tuple compares through `call_method('__contains__')`; "
         "`sequence-compare-identity` gives it the identity shortcut)"),
        ("2.13+", "`iter_contains` compares a rebuilt constant (`functools.partial` made in the frame) by `is` "
         "and `==` against a fresh object: False (measured on 2.13.0 and 2.15.0). Open upstream"),
    ),
)
