"""``copy.deepcopy`` of an immutable constant is ``Unsupported`` (torch 2.5-2.11).

Symptom: ``copy.deepcopy("advantage")`` (or of an int, float, bool, None, or a
tuple of those) in compiled code graph-breaks: ``Unsupported: copy.deepcopy
ConstantVariable(str: 'advantage')`` (2.5-2.6), ``Dynamo does not support
copy.deepcopy()`` (2.7-2.11). ``dataclasses.asdict`` reaches it for every field
value (``_asdict_inner`` ends in ``copy.deepcopy(obj)``): TorchRL's
``ValueEstimatorBase.set_keys`` (torchrl/objectives/value/advantages.py) on
every loss's first call, on 2.6-2.11.

Root cause: ``copy.deepcopy`` is mapped to ``BuiltinVariable`` and
``BuiltinVariable.call_deepcopy`` (torch/_dynamo/variables/builtin.py) refuses
every argument. torch 2.12 traces ``copy.deepcopy`` itself (constant-folding
``__reduce_ex__`` for trackers of real Python objects), which returns these
values unchanged.

The fix: for a ``ConstantVariable`` holding exactly (no subclass) ``str``, ``bytes``,
``int``, ``float``, ``complex``, ``bool`` or ``None``, or a ``TupleVariable`` (not a named
tuple) of such, recursively, and no ``memo``: ``copy.deepcopy(x)`` is ``x`` itself. That is
what CPython does: ``_deepcopy_dispatch`` maps each of those exact types to
``_deepcopy_atomic`` (the object itself: a NaN stays the same object, ``-0.0`` keeps its
sign), and ``_deepcopy_tuple`` returns the tuple itself when every item copies to itself.
Nothing is read that could change between calls (the tracker is the value), so there is
nothing to guard. Left to Dynamo: subclasses of str/int (``__reduce_ex__`` builds a new
object), named tuples (a new one), a tuple holding a list or any other tracker (an input
tuple's items not yet realized included), a ``memo`` argument, keyword arguments. Audited
against CPython on 2.5.1, 2.6.0, 2.8.0, 2.11.0 (tests/test_never_worse_classes.py).
Known, not narrowed: on 2.5-2.6 Dynamo itself folds ``a is b`` of two distinct lists of
equal constants to True, so ``dataclasses.asdict(k)['c'] is k.c`` (a list field) is True
once ``asdict`` compiles; ``list(a) is a`` is as wrong with no patch involved.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "deepcopy-constant"

_ATOMIC = (type(None), bool, int, float, complex, str, bytes)


def _immutable(vt, depth=0) -> bool:
    from torch._dynamo.variables import ConstantVariable, TupleVariable

    if type(vt) is ConstantVariable:
        return type(vt.value) in _ATOMIC
    if type(vt) is TupleVariable and depth < 8:
        return all(_immutable(item, depth + 1) for item in vt.items)
    return False


@fail_safe(NAME)
def _call_deepcopy(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_deepcopy(tx, x)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    _tx, x = args
    return x if _immutable(x) else DEFER


PATCH = Patch(
    name=NAME,
    fixes="Unsupported: copy.deepcopy ConstantVariable(str: ...) / Dynamo does not support copy.deepcopy() "
    "(copy.deepcopy of a str/int/float/bool/None/tuple of those; dataclasses.asdict)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_deepcopy",
    mirrors="CPython copy._deepcopy_atomic/_deepcopy_tuple; torch 2.12 traces copy.deepcopy",
    torch="<2.12",
    fixed_upstream="2.12: copy.deepcopy is traced (VariableTracker.call_method constant-folds __reduce_ex__)",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_deepcopy", _call_deepcopy,
               params=("tx", "x")),
    ),
    requires=("torch._dynamo.variables:ConstantVariable", "torch._dynamo.variables:TupleVariable"),
    summary="copy.deepcopy of an immutable constant (or a tuple of them) is the constant itself",
    history=(
        ("2.5-2.6",
         "`BuiltinVariable.call_deepcopy` refuses every argument: `copy.deepcopy('advantage')` (or of a number, "
         "bool, None, a tuple of those) is `Unsupported: copy.deepcopy ConstantVariable(str: 'advantage')`; on "
         "2.6 `dataclasses.asdict` reaches it for every field value (TorchRL's `ValueEstimatorBase.set_keys`; on "
         "2.5 `asdict` itself is skipped)"),
        ("2.7-2.11",
         "`Dynamo does not support copy.deepcopy()`, from `dataclasses.asdict` too (TorchRL's `set_keys`)"),
        ("2.12+",
         "fixed upstream: `copy.deepcopy` is traced (`__reduce_ex__` constant-folded) and returns these values "
         "unchanged"),
    ),
)
