"""``for v in d.values(): d[k] = ...`` yields the values the dict had when the loop began (torch 2.5-2.12).

Symptom: an iterator over ``d.values()`` (``for`` loop, ``iter()``, ``next()``, ``list(it)`` of the rest) or, on
2.9-2.12, ``d.items()`` yields, for a key whose value the frame writes after the iterator was made, the **old
value**: ``it = iter(d.values()); next(it); d["b"] = 100; list(it)`` is ``[2, 3]`` compiled, ``[100, 3]`` in
CPython (a dict iterator reads ``d``'s entry when it reaches it). Silently wrong under ``fullgraph=True``, for a
dict passed in or built in the frame, an ``OrderedDict`` or a ``defaultdict``; measured with the case
``dict_view_live_iterator`` and tests/test_dict_view_live_iterator.py on 2.5.1-2.12.1; 2.13+ right (its dict
iterators read the dict).

Root cause: torch/_dynamo/variables/builtin.py: ``BuiltinVariable.call_iter`` (``_call_iter_tuple_list``;
2.12: ``IterBuiltinVariable`` -> variables/dicts.py ``DictViewVariable.call_method("__iter__")``) builds a
``ListIteratorVariable`` of the view's unpacked items: a list of the value trackers (and, for items, new
``(key, value)`` tuples) as they are when the iterator is made, not the dict's entries when ``next`` reaches
them.

What the handlers accept: ``BuiltinVariable.call_iter(tx, view)`` (no sentinel; 2.5-2.11) or
``DictViewVariable.call_method(tx, "__iter__", [], {})`` (2.12, and ``DictItemsVariable``'s own; where they exist
earlier, the same answer) where ``view`` is an exact values
view (``DictValues``/``DictValuesVariable``) or, 2.9-2.12, items view (``DictItemsVariable``) of an exact
``ConstDictVariable`` or ``DefaultDictVariable``, and Dynamo's answer is a fresh ``ListIteratorVariable`` with one
item per key. It gives that iterator the class ``LiveDictViewIterator`` (a subclass: Dynamo's own methods, reads
and reconstruction), whose ``items`` are read from the dict's tracker at each use, in the key order of when the
iterator was made. Sound: the dict's tracker is the one its writes update in place (``__setitem__`` &
co.), so reading it when ``next`` runs gives the value CPython's ``dictiter_iternextvalue`` reads then, for the
same key at the same position; nothing new is guarded (the values were Dynamo's trackers already). Where the
dict's keys are no longer those of when it was made (a key added or deleted: CPython raises ``RuntimeError``),
``next`` graph-breaks and every other read falls back to the old snapshot (Dynamo's own answer). Keys views,
other iterables, 2.5-2.8's items (a tuple snapshot of pairs before any iterator exists), ``reversed()``,
``enumerate()``/``zip()`` over a view (they unpack the view themselves) are left as they were.
"""

from __future__ import annotations

import functools
from typing import Any

from ..dynamo_api import bind_args, graph_break
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate, method_name_gate, routed_gate

NAME = "dict-view-live-iterator"

_VIEW_CLASSES = frozenset({"DictValues", "DictValuesVariable", "DictItemsVariable"})


class _LiveItems:
    """The iterator's items as a read-only sequence over the dict's current entries."""

    def __init__(self, iterator: Any) -> None:
        self._it = iterator

    def __len__(self) -> int:
        return len(self._it.view_keys)

    def _item(self, i: int) -> Any:
        key = self._it.view_keys[i]
        value = self._it.view_dict.items[key]
        if self._it.view_kind == "values":
            return value
        from torch._dynamo.variables import TupleVariable

        return TupleVariable([key.vt, value])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._item(index)

    def __iter__(self) -> Any:
        return (self._item(i) for i in range(len(self)))


@functools.lru_cache(maxsize=None)
def _live_class() -> type:
    from torch._dynamo.variables.lists import ListIteratorVariable

    class LiveDictViewIterator(ListIteratorVariable):
        """A ``ListIteratorVariable`` over a dict's values/items that reads the dict when it is used."""

        _nonvar_fields = {"view_keys", "view_kind", *ListIteratorVariable._nonvar_fields}

        def __init__(self, *args: Any, view_dict: Any = None, view_keys: Any = (), view_kind: str = "values",
                     **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)  # a clone: Dynamo's own fields, then ours
            self.view_dict, self.view_keys, self.view_kind = view_dict, list(view_keys), view_kind

        @property
        def items(self) -> Any:
            snapshot = self.__dict__["items"]
            if self.view_dict is None or not _same_keys(self.view_dict.items, self.view_keys):
                return snapshot
            return _LiveItems(self)

        @items.setter
        def items(self, value: Any) -> None:
            self.__dict__["items"] = value

        def next_variable(self, tx: Any) -> Any:
            if self.index < len(self.view_keys) and not _same_keys(self.view_dict.items, self.view_keys):
                graph_break(NAME, f"next() of {self.view_kind} iterator",
                            "the dict's keys changed while iterating it (CPython raises RuntimeError), which "
                            "Dynamo's iterator does not model (tdcompat)")
            return super().next_variable(tx)

    return LiveDictViewIterator


def _same_keys(items: dict, keys: list) -> bool:
    return len(items) == len(keys) and all(k in items for k in keys)


def _live(view, wrapped, args, kwargs):
    """Dynamo's iterator over ``view``, made to read the dict when it is used where it is a fresh
    ``ListIteratorVariable`` with one item per key of a plain dict tracker's values or items view."""
    from torch._dynamo.variables import ConstDictVariable
    from torch._dynamo.variables.dicts import DefaultDictVariable
    from torch._dynamo.variables.lists import ListIteratorVariable

    kind = getattr(type(view), "kv", None)
    if type(view).__name__ not in _VIEW_CLASSES or kind not in ("values", "items"):
        return DEFER
    d = getattr(view, "dv_dict", None)
    if type(d) not in (ConstDictVariable, DefaultDictVariable):
        return DEFER
    result = wrapped(*args, **kwargs)
    if type(result) is not ListIteratorVariable or result.index != 0 or len(result.items) != len(d.items):
        return result
    result.__class__ = _live_class()  # Dynamo's own iterator, made to read the dict when used
    result.view_dict, result.view_keys, result.view_kind = d, list(d.items), kind
    return result


@fail_safe(NAME)
def _iter(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_iter(tx, view)`` (2.5-2.11) for a dict's values or items view."""
    bound = bind_args(args, kwargs, ("tx", "obj"))
    if bound is None:
        return DEFER
    return _live(bound[1], wrapped, args, kwargs)


@fail_safe(NAME)
def _view_iter(wrapped, instance, args, kwargs):
    """``DictViewVariable.call_method(tx, "__iter__", [], {})`` (2.12: ``iter()`` calls it directly)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or bound[1] != "__iter__" or bound[2] or bound[3]:
        return DEFER
    return _live(instance, wrapped, args, kwargs)


@gate(_iter)
def _call_iter_gate(original, handle):
    """Every ``iter()`` and ``for`` loop: only a dict values/items view goes on."""

    def call_iter(self, tx, obj, *args, **kwargs):
        if type(obj).__name__ not in _VIEW_CLASSES:
            return original(self, tx, obj, *args, **kwargs)
        return handle(self, tx, obj, *args, **kwargs)

    return call_iter


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`it = iter(d.values()); next(it); d['b'] = 100; list(it)` (or a `for` loop that writes a later key): "
         "**the old values** (2.9-2.12: also `d.items()`)", "2.5–2.12", "(`<2.13`)"),
    ),
    fixes="an iterator over d.values() (2.9-2.12: d.items()) yields the values of when it was made, not the dict's "
    "current ones (torch 2.5-2.12)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_iter (_call_iter_tuple_list: a "
    "ListIteratorVariable of the view's unpacked items)",
    mirrors="CPython's dictiter_iternextvalue/dictiter_iternextitem (read the entry at next()); 2.13's dict "
    "iterators",
    torch="<2.13",
    fixed_upstream="2.13: dict view iterators read the dict (measured)",
    targets=(
        # 2.5-2.11: iter() and GET_ITER reach BuiltinVariable.call_iter; 2.12's IterBuiltinVariable calls the
        # view's __iter__ instead
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_iter", _call_iter_gate, optional=True),
        *(Target("torch._dynamo.variables.dicts", cls, "call_method",
                 routed_gate(_view_iter, method_name_gate, frozenset({"__iter__"})),
                 params=("tx", "name", "args", "kwargs"), optional=True)
          for cls in ("DictViewVariable", "DictItemsVariable")),  # 2.12's items view answers __iter__ itself
    ),
    summary="an iterator over a dict's values (2.9-2.12: items) reads the dict when it advances, as CPython",
    history=(
        ("2.5-2.8", "values: the snapshot of when the iterator was made (items: a tuple snapshot of pairs)"),
        ("2.9-2.12", "values and items: the snapshot of when the iterator was made"),
        ("2.13-2.15", "right (reversed(d.values()) still reads a snapshot)"),
    ),
)
