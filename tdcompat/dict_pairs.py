"""Storing an iterable of ``(key, value)`` pairs into a dict tracker as CPython does.

``dict.update(pairs)``, ``d |= pairs`` (``PyDict_MergeFromSeq2``) and ``OrderedDict.update`` /
``od |= pairs`` (``mutablemapping_add_pairs``) run one loop: draw an item, check it is a sequence of
two, store ``d[key] = value``, draw the next. Dynamo drains the iterable first and stores after
(``call_custom_dict`` / ``unpack_iterable``), which a generator reading the dict as it grows tells
apart. Used by ``dict-ior-in-place`` (<2.9: ``|=`` has no dict branch) and ``dict-update-lazy-pairs``
(2.7+: ``update`` and ``|=`` drain a generator first).
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from .dynamo_api import graph_break, is_mutable, realize, step_iterator

#: Iterator trackers :func:`store_lazily` steps one item at a time (``next_variable`` after the store of the
#: item before): a generator made in the frame (``LocalGeneratorObjectVariable``, 2.7+, whose body Dynamo inlines
#: step by step), ``zip``/``map`` (a ``map``'s function is called as each item is drawn) and list/tuple
#: iterators. Stepping one gives what draining it first gives wherever its items were computed before (a list
#: iterator Dynamo made by running a generator to its end), and CPython's order wherever they are not.
_GENERATOR = "LocalGeneratorObjectVariable"
_COMBINATORS = frozenset({"ZipVariable", "MapVariable"})
_STEPPED = frozenset({_GENERATOR, "ListIteratorVariable", "TupleIteratorVariable"}) | _COMBINATORS


def pair(item) -> Optional[Tuple[object, object]]:
    """The key and value trackers of an exact 2-tuple or 2-list tracker, else None (CPython accepts any
    sequence of two; those are the ones whose items Dynamo holds without running user code)."""
    from torch._dynamo.variables import ListVariable, TupleVariable

    item = realize(item)
    if type(item) not in (TupleVariable, ListVariable) or len(item.items) != 2:
        return None
    return item.items[0], item.items[1]


#: The class names of a dict's items view tracker: Dynamo's (2.8+) and dict-items-view's (2.5-2.7).
_ITEMS_VIEWS = frozenset({"DictItemsVariable", "DictItemsViewVariable"})


def known_pairs(tx, other) -> Optional[List[Tuple[object, object]]]:
    """The pairs of an exact list or tuple of exact 2-tuples/2-lists, or of a dict's items view (2.8+:
    ``DictItemsVariable``; 2.5-2.7: ``dict-items-view``'s ``DictItemsViewVariable``, a tuple of tuples without
    it), else None. Nothing runs between two items of these, so storing after reading them all is CPython's
    order too."""
    from torch._dynamo.variables import ListVariable, TupleVariable

    if type(other) in (ListVariable, TupleVariable) or type(other).__name__ in _ITEMS_VIEWS:
        pairs = [pair(item) for item in other.unpack_var_sequence(tx)]
        if all(p is not None for p in pairs):
            return pairs  # type: ignore[return-value]
    return None


#: The attribute :func:`mark_drained` sets on a list iterator Dynamo made by running a generator to its end.
_DRAINED = "_tdcompat_drained_generator"


def mark_drained(vt) -> None:
    """Note on ``vt`` (a ``ListIteratorVariable``) that its items come from a generator Dynamo ran to its end
    when it was made (2.5-2.6 inline a generator function that way): its items were computed before anything
    the frame does after, so no consumer can step it as CPython steps the generator."""
    setattr(vt, _DRAINED, True)


def holds_drained_generator(vt, depth: int = 0) -> bool:
    """Is ``vt`` (or an iterable a ``zip``/``map`` tracker steps) a generator :func:`mark_drained` marked?"""
    vt = realize(vt)
    if getattr(vt, _DRAINED, False):
        return True
    kind = type(vt).__name__
    if kind in _COMBINATORS and depth < 8:
        inner = getattr(vt, "iterables", None)
        if inner is None:
            inner = getattr(vt, "iterable", None)
            inner = [inner] if inner is not None and not isinstance(inner, (list, tuple)) else inner
        return isinstance(inner, (list, tuple)) and any(holds_drained_generator(i, depth + 1) for i in inner)
    return False


def is_lazy_iterator(other) -> bool:
    """An iterator tracker of :data:`_STEPPED` that :func:`store_lazily` can step (a generator, or one whose steps
    Dynamo records: ``next_variable`` asserts it is mutable), not one :func:`mark_drained` marked."""
    kind = type(other).__name__
    if kind not in _STEPPED or not (kind == _GENERATOR or is_mutable(other)):
        return False
    return not holds_drained_generator(other)


def generators_step_lazily() -> bool:
    """Does this trace make every generator an object stepped one item at a time, so that no list iterator
    holds a generator's items computed ahead (2.7+: ``enable_faithful_generator_behavior``, on by default)?
    2.5-2.6 have no such objects: :func:`mark_drained` marks what they ran ahead instead (True there)."""
    import torch._dynamo.config as config

    return bool(getattr(config, "enable_faithful_generator_behavior", True))


def store_lazily(tx, target, other, store, patch_name: str) -> None:
    """Draw the items of the lazy iterator ``other`` one at a time and ``store(key, value)`` each before the
    next is drawn. An item that is not an exact pair graph-breaks there (CPython raises ``TypeError`` /
    ``ValueError`` after the items before it were stored: Dynamo's trace is abandoned, nothing half-done
    runs)."""

    def one(item):
        found = pair(item)
        if found is None:
            graph_break("dict update from an iterable", f"{patch_name}: {target} <- item {item}",
                        "an item that is not an exact 2-tuple or 2-list")
        store(*found)

    step_iterator(tx, other, one)
