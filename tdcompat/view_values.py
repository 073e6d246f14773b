"""Real Python copies of traced sets and dict views, where every element is a constant by value.

A patch that answers a set or dict-view operator (``s | d.keys()``, ``d.items() == s``) by running CPython's
own operator at trace time needs operands equal to the traced ones in everything the operator reads. That holds
when every element (a set's items, a view's keys, an items view's values) is a Python constant whose hash and
``==`` are pure functions of its value (:func:`tdcompat.pure_values.hashes_by_value`): the result then depends
on those values only, which Dynamo guards, and no user code can run. Anything else is :data:`NOT_PURE`, and
the patch graph-breaks or defers. Used by ``set-view-operator``, ``dict-view-compare`` and ``dict-items-view``.
"""

from __future__ import annotations

import operator
from typing import Collection

from .dynamo_api import guard_dict_keys, realize
from .pure_values import hashes_by_value

#: What the helpers return for a tracker that is not a constant by value.
NOT_PURE = object()

#: The rich comparisons of a dict view (``dictview_richcompare``), by dunder name.
COMPARISONS = {"__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
               "__gt__": operator.gt, "__ge__": operator.ge}


def constant(vt):
    """The value of a tracker that is a constant by value, else :data:`NOT_PURE`."""
    vt = realize(vt)
    if not vt.is_python_constant():
        return NOT_PURE
    value = vt.as_python_constant()
    return value if hashes_by_value(value) else NOT_PURE


def view_value(view):
    """A real ``dict_keys``/``dict_items`` equal to the traced keys or items view, or :data:`NOT_PURE`. Guards
    the dict's keys (each constant key and value is guarded where Dynamo built it from a source)."""
    guard_dict_keys(view.dv_dict)
    copy = {}
    for key, value_vt in view.dv_dict.items.items():
        key_value = constant(key.vt)
        value = constant(value_vt) if view.kv == "items" else None
        if key_value is NOT_PURE or value is NOT_PURE:
            return NOT_PURE
        copy[key_value] = value
    return copy.items() if view.kv == "items" else copy.keys()


def set_value(set_vt, kind=set):
    """A real ``kind`` (``set``/``frozenset``) equal to the traced set, or :data:`NOT_PURE`."""
    items = [constant(item.vt) for item in set_vt.set_items]
    return NOT_PURE if any(item is NOT_PURE for item in items) else kind(items)


def operand_set(vt, sets: Collection[str], views: Collection[str]):
    """A real ``set`` equal to the operand of a view comparison, as ``dictview_richcompare`` sees it: ``vt`` a
    set tracker (its class named in ``sets``) or a keys/items view tracker (named in ``views``). ``NOT_PURE``
    where an element is not a constant by value; None for a tracker of another class (the caller's to decide).
    The caller names the classes it accepts, so sharing this step widens no patch's accepted operands."""
    kind = type(vt).__name__
    if kind in sets:
        return set_value(vt)
    if kind in views:
        value = view_value(vt)
        return NOT_PURE if value is NOT_PURE else set(value)
    return None
