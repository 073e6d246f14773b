"""When CPython's ``x in seq`` meets ``x`` itself: the identity shortcut the sequence patches share.

``PyObject_RichCompareBool`` answers True for the same object before calling ``__eq__``. Dynamo
compares rebuilt constants (a ``functools.partial`` made in the frame) by value, and they never
match. One tracker stands for one object, so meeting *the same tracker* after only comparisons
that run nothing is CPython's answer. Used by ``sequence-compare-identity`` (<2.13) and
``sequence-contains-identity`` (2.13+).
"""

from __future__ import annotations

from .dynamo_api import static_lookup

_SCALARS = (int, float, complex, str, bytes, bool, type(None))

_OBJECT_EQ = vars(object)["__eq__"]


def _identity_eq(vt) -> bool:
    """``vt``'s type compares by identity (``object.__eq__``, read statically): comparing it with
    a scalar runs nothing and is False, as CPython's reflected ``object.__eq__`` is."""
    try:
        cls = vt.python_type()
    except Exception:  # noqa: BLE001 - a tracker that cannot say: not accepted
        return False
    return isinstance(cls, type) and static_lookup(cls, "__eq__") is _OBJECT_EQ


def contains_itself(seq, search) -> bool:
    """True when CPython's ``search in seq`` meets ``search`` itself after only pure comparisons:
    ``search`` a scalar constant, or of a type that compares by identity (a ``functools.partial``,
    a plain object), and every item before it a scalar constant or a symbolic number."""
    from torch._dynamo.variables import ConstantVariable, SymNodeVariable

    def scalar(vt):
        return type(vt) is ConstantVariable and type(vt.value) in _SCALARS

    if not scalar(search) and not _identity_eq(search):
        return False
    for item in seq.items:
        if item is search:
            return True
        # an input's item is realized as Dynamo's own containment test does; a symbolic number
        # compares with a scalar without side effect (and the answer does not depend on it)
        item = item.realize()
        if not (scalar(item) or type(item) is SymNodeVariable):
            return False
    return False
