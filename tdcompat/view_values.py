"""Real Python copies of traced sets and dict views, where every element is a constant by value.

A patch that answers a set or dict-view operator (``s | d.keys()``, ``d.items() == s``) by running CPython's
own operator at trace time needs operands equal to the traced ones in everything the operator reads. That holds
when every element (a set's items, a view's keys, an items view's values) is a Python constant whose hash and
``==`` are pure functions of its value (:func:`tdcompat.pure_values.hashes_by_value`): the result then depends
on those values only, which Dynamo guards, and no user code can run. Anything else is :data:`NOT_PURE`, and
the patch graph-breaks or defers. Used by ``set-view-operator`` and ``dict-view-compare``.
"""

from __future__ import annotations

from .dynamo_api import guard_dict_keys, realize
from .pure_values import hashes_by_value

#: What the helpers return for a tracker that is not a constant by value.
NOT_PURE = object()


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
