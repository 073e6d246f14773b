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
tuple) of such or of enum members (``EnumVariable``) whose ``__deepcopy__`` is ``Enum``'s own,
recursively, and no ``memo``: ``copy.deepcopy(x)`` is ``x`` itself. That is what CPython does:
``_deepcopy_dispatch`` maps each of those exact types to ``_deepcopy_atomic`` (the object itself:
a NaN stays the same object, ``-0.0`` keeps its sign), an enum member's ``Enum.__deepcopy__``
returns the member, and ``_deepcopy_tuple`` returns the tuple itself when every item copies to
itself. (A tuple holding an enum member was left to Dynamo: under ``fullgraph=False`` the graph
break there rebuilt the tuple twice, once on the stack and once in the local, so
``copy.deepcopy(t) is t`` was False on 2.8-2.11, with and without tdcompat: fresh fuzz seed
1144640398 on 2.10.0.)
Nothing is read that could change between calls (the tracker is the value), so there is
nothing to guard. An input tuple's items not realized yet are realized (guarded: ``CONSTANT_MATCH`` /
``ID_MATCH``) when the value each stands for is such a constant, member or a plain tuple, then
checked as trackers; an int, float or bool Dynamo made dynamic (``SymNodeVariable``) is atomic
as well. Left to Dynamo: subclasses of str/int (``__reduce_ex__`` builds a new object), named
tuples (a new one), a tuple holding a list or any other tracker, a ``memo`` argument, keyword
arguments. Audited
against CPython on 2.5.1, 2.6.0, 2.8.0, 2.11.0 (tests/test_never_worse_classes.py).
Known, not narrowed: on 2.5-2.6 Dynamo itself folds ``a is b`` of two distinct lists of
equal constants to True, so ``dataclasses.asdict(k)['c'] is k.c`` (a list field) is True
once ``asdict`` compiles; ``list(a) is a`` is as wrong with no patch involved.
"""

from __future__ import annotations

import enum
import inspect

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "deepcopy-constant"

_ATOMIC = (type(None), bool, int, float, complex, str, bytes)


_ENUM_DEEPCOPY = enum.Enum.__dict__["__deepcopy__"]


def _immutable(vt, depth=0) -> bool:
    """Does ``copy.deepcopy`` of what ``vt`` stands for return that very object?"""
    from torch._dynamo.variables import ConstantVariable, EnumVariable, SymNodeVariable, TupleVariable

    from ..dynamo_api import is_lazy, peek

    if is_lazy(vt):
        # an input tuple's item not realized yet: realized (and so guarded) only when the value
        # it stands for is an atomic constant, an enum member or a tuple, which the checks below see
        tracker, value = peek(vt)
        if tracker is None:
            if not (type(value) in _ATOMIC or type(value) is tuple or isinstance(value, enum.Enum)):
                return False
            tracker = vt.realize()
        vt = tracker
    kind = type(vt)
    if kind is ConstantVariable:
        return type(vt.value) in _ATOMIC
    if kind is SymNodeVariable:
        # an int/float/bool input Dynamo made dynamic after it changed between calls: atomic too
        return vt.python_type() in (int, float, bool)
    if kind is EnumVariable:
        # an enum member: ``copy.deepcopy`` calls ``member.__deepcopy__(memo)``, which is
        # ``Enum.__deepcopy__`` (returns the member) unless the class or the member overrides it
        member = vt.value
        return isinstance(member, enum.Enum) and inspect.getattr_static(member, "__deepcopy__", None) is _ENUM_DEEPCOPY
    if kind is TupleVariable and depth < 8:
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
    symptoms=(
        ('`Unsupported: copy.deepcopy ConstantVariable(str: ...)` / `Dynamo does not support '
             'copy.deepcopy()` (`copy.deepcopy` of a str, number, `None` or a tuple of them; '
             "`dataclasses.asdict`, e.g. TorchRL's `set_keys`)",
         '2.5–2.11 (2.5 also skips `asdict` itself)',
         '(`<2.12`)'),
    ),
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
    requires=("torch._dynamo.variables:ConstantVariable", "torch._dynamo.variables:TupleVariable",
              "torch._dynamo.variables:EnumVariable"),
    summary="copy.deepcopy of an immutable constant or enum member (or a tuple of them) is the value itself",
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
