"""``for v in d.values(): d[k] = ...`` and ``reversed(d.values())`` yield the values of when the loop began.

Symptom: an iterator over ``d.values()`` or ``d.items()`` (``for`` loop, ``iter()``, ``next()``, ``list(it)`` of
the rest) yields, for a key whose value the frame writes after the iterator was made, the **old value**:
``it = iter(d.values()); next(it); d["b"] = 100; list(it)`` is ``[2, 3]`` compiled, ``[100, 3]`` in CPython (a
dict iterator reads ``d``'s entry when it reaches it). Silently wrong under ``fullgraph=True``, for a dict passed
in or built in the frame, an ``OrderedDict`` or a ``defaultdict``: forward iterators on 2.5.1-2.12.1 (2.13+
iterate the dict itself), ``reversed(d.values())``/``reversed(d.items())`` on every release 2.5.1-2.15.0; on
2.5-2.12 ``reversed(view)`` is even a tuple, which ``next()`` does not advance. Measured with the cases
``dict_view_live_iterator`` and ``dict_view_reversed_live`` and tests/test_dict_view_live_iterator.py.

Root cause: torch/_dynamo/variables/builtin.py: ``BuiltinVariable.call_iter`` (``_call_iter_tuple_list``;
2.12: ``IterBuiltinVariable`` -> variables/dicts.py ``DictViewVariable.call_method("__iter__")``) builds a
``ListIteratorVariable`` of the view's unpacked items: the value trackers (and, for items, new ``(key, value)``
tuples) as they are when the iterator is made. ``BuiltinVariable.call_reversed`` (2.5-2.12) returns a
``TupleVariable`` of them reversed; 2.13+ ``DictViewVariable``'s ``__reversed__`` (2.15: ``dict_view_reversed``
in ``tp_methods``) a ``ListIteratorVariable`` of them.

What the handlers accept: ``iter(view)`` (``call_iter``, 2.5-2.11; the view's ``__iter__``, 2.12) where ``view``
is an exact values or items view (2.5-2.7: dict-items-view's tracker), and ``reversed(view)`` (``call_reversed``,
2.5-2.12; the view's ``__reversed__``, 2.13+) of an exact keys, values or items view, of Dynamo's tracker of an
exact ``dict``, ``OrderedDict`` or ``defaultdict`` (``ConstDictVariable``, ``OrderedDictVariable``,
``DefaultDictVariable``; never a user subclass), where Dynamo's answer is a fresh ``ListIteratorVariable`` (or,
for ``reversed`` on 2.5-2.12, a ``TupleVariable``, made a fresh iterator over the same items) with one item per
key. It gives that iterator the class ``LiveDictViewIterator`` (a subclass: Dynamo's own methods, reads and
reconstruction), whose ``items`` are read from the dict's tracker at each use, in the key order of when the
iterator was made (reversed for ``reversed``). Sound: the dict's tracker is the one its writes update in place
(``__setitem__`` & co.), so reading it when ``next`` runs gives the value CPython's ``dictiter_iternextvalue`` /
``dictreviter_iternext`` reads then, for the same key at the same position; nothing new is guarded (the values
were Dynamo's trackers already; ``reversed`` keeps the key-order guard Dynamo installs). Where the dict's keys
are no longer those of when the iterator was made, in that order (a key added or deleted: CPython raises
``RuntimeError``; a reordering), ``next()`` and unpacking the rest graph-break and every other read falls back to
the old snapshot (Dynamo's own answer). Left as they were: keys views forward, other iterables, a
``defaultdict`` built in the frame on 2.15 (a user-defined dict tracker there), ``enumerate()``/``zip()`` over a
view where they unpack it themselves (2.5-2.6: ``enumerate``'s generator runs eagerly; 2.5-2.8: ``zip`` holds lists),
``list(it)`` that does not consume a list iterator on 2.5-2.8 (every list iterator, not only these).
"""

from __future__ import annotations

import functools
import operator
from typing import Any

from ..dynamo_api import bind_args, graph_break, new_object_kwargs
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate, method_name_gate, routed_gate

NAME = "dict-view-live-iterator"

# values and items views (2.5-2.7's items view is dict-items-view's own tracker); keys views for reversed() only
_VIEW_CLASSES = frozenset({"DictValues", "DictValuesVariable", "DictItemsVariable", "DictItemsViewVariable"})
_REVERSIBLE = _VIEW_CLASSES | {"DictKeys", "DictKeysVariable"}
# Dynamo's trackers of an exact dict, OrderedDict or defaultdict (2.13-2.14: no defaultdict tracker of its own;
# 2.15: OrderedDictVariable, and DefaultDictVariable moved to user_defined.py); never a user subclass's
_DICT_TRACKERS = frozenset({"ConstDictVariable", "DefaultDictVariable", "OrderedDictVariable"})


class _LiveItems:
    """The iterator's items as a read-only sequence over the dict's current entries."""

    def __init__(self, iterator: Any) -> None:
        self._it = iterator

    def __len__(self) -> int:
        return len(self._it.view_keys)

    def _item(self, i: int) -> Any:
        key = self._it.view_keys[i]
        if self._it.view_kind == "keys":
            return key.vt
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

        _nonvar_fields = {"view_keys", "view_order", "view_kind", *ListIteratorVariable._nonvar_fields}

        def __init__(self, *args: Any, view_dict: Any = None, view_keys: Any = (), view_kind: str = "values",
                     view_order: Any = (), view_values: Any = (), **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)  # a clone: Dynamo's own fields, then ours
            self.view_dict, self.view_keys, self.view_kind = view_dict, list(view_keys), view_kind
            self.view_order, self.view_values = list(view_order), list(view_values)

        @property
        def items(self) -> Any:
            """Dynamo's own list while the dict holds the same key and value trackers as when the iterator
            was made (its items are then what the dict shows: every ``next()`` of an unchanged dict, read
            in C with no tracker made); the dict's current entries once a value was stored again."""
            snapshot = self.__dict__["items"]
            d = self.view_dict
            if d is None or not _same_keys(d.items, self.view_order):
                return snapshot
            if self.view_kind == "keys" or all(map(operator.is_, d.items.values(), self.view_values)):
                return snapshot
            return _LiveItems(self)

        @items.setter
        def items(self, value: Any) -> None:
            self.__dict__["items"] = value

        def _check_keys(self) -> None:
            if self.index < len(self.view_keys) and not _same_keys(self.view_dict.items, self.view_order):
                graph_break(NAME, f"next() or unpacking of a {self.view_kind} iterator",
                            "the dict's keys changed while iterating it (CPython raises RuntimeError), which "
                            "Dynamo's iterator does not model (tdcompat)")

        def unpack_var_sequence(self, tx: Any) -> Any:  # list(it), tuple(it), unpacking: the rest, as next()
            self._check_keys()
            return super().unpack_var_sequence(tx)

        # next() is next_variable up to 2.12, tp_iternext_impl from 2.13 (reversed() only reaches it there)
        if hasattr(ListIteratorVariable, "next_variable"):
            def next_variable(self, tx: Any) -> Any:
                self._check_keys()
                return super().next_variable(tx)
        if hasattr(ListIteratorVariable, "tp_iternext_impl"):
            def tp_iternext_impl(self, tx: Any) -> Any:
                self._check_keys()
                return super().tp_iternext_impl(tx)

    return LiveDictViewIterator


def _snapshot_iterators() -> bool:
    """Dynamo iterates a dict view over a list made when the iterator is (before 2.13's ``DictViewIterator``)."""
    import torch._dynamo.variables.iter as iter_module

    return not hasattr(iter_module, "DictViewIterator")


def _same_keys(items: dict, keys: list) -> bool:
    """The dict has exactly ``keys``, in that order (a reordering - ``move_to_end``, a key popped and stored
    again - is not what the iterator was made over either). Asked on every read of the iterator's items: list
    equality compares by identity first, so the same key trackers in the same order answer in C with no frame
    per key; only a key tracker that was replaced pays Dynamo's ``==`` (2.5.1's neutral dict workload: +60%
    calls with ``==`` on every key, quadratic in the dict's length)."""
    return list(items) == keys


def _view_dict(view: Any, classes: frozenset) -> Any:
    """The exact dict tracker ``view`` is a keys/values/items view of, or None."""
    if type(view).__name__ not in classes or getattr(type(view), "kv", None) not in ("keys", "values", "items"):
        return None
    d = getattr(view, "dv_dict", None)
    cls = type(d)
    return d if cls.__name__ in _DICT_TRACKERS and cls.__module__.startswith("torch._dynamo.variables.") else None


def _make_live(result: Any, d: Any, kind: str, keys: list) -> Any:
    result.__class__ = _live_class()  # Dynamo's own iterator, made to read the dict when used
    result.view_dict, result.view_keys, result.view_kind = d, keys, kind
    result.view_order = list(d.items)  # the dict's own order then: what _same_keys compares with
    result.view_values = list(d.items.values())  # and its value trackers: unchanged, Dynamo's list is right
    return result


def _live(view, wrapped, args, kwargs):
    """Dynamo's iterator over ``view``, made to read the dict when it is used where it is a fresh
    ``ListIteratorVariable`` with one item per key of a plain dict tracker's values or items view."""
    from torch._dynamo.variables.lists import ListIteratorVariable

    d = _view_dict(view, _VIEW_CLASSES)
    if d is None:
        return DEFER
    result = wrapped(*args, **kwargs)
    if type(result) is not ListIteratorVariable or result.index != 0 or len(result.items) != len(d.items):
        return result
    return _make_live(result, d, type(view).kv, list(d.items))


def _live_reversed(view, wrapped, args, kwargs):
    """``reversed(view)``: Dynamo's answer (2.5-2.12: a tuple of the view's items reversed; 2.13+: a
    ``ListIteratorVariable`` over them) as the live iterator, in reversed key order."""
    from torch._dynamo.variables import TupleVariable
    from torch._dynamo.variables.lists import ListIteratorVariable

    d = _view_dict(view, _REVERSIBLE)
    if d is None:
        return DEFER
    result = wrapped(*args, **kwargs)
    if type(result) is TupleVariable and len(result.items) == len(d.items):
        result = ListIteratorVariable(list(result.items), **new_object_kwargs())
    elif type(result) is not ListIteratorVariable or result.index != 0 or len(result.items) != len(d.items):
        return result
    return _make_live(result, d, type(view).kv, list(reversed(list(d.items))))


def _builtin(name: str, live: Any, doc: str) -> Any:
    """A handler of ``BuiltinVariable.call_<name>(tx, view)`` that hands ``view`` to ``live``."""
    def handler(wrapped, instance, args, kwargs):
        bound = bind_args(args, kwargs, ("tx", "obj"))
        return DEFER if bound is None else live(bound[1], wrapped, args, kwargs)

    handler.__name__ = handler.__qualname__ = name  # what a fail-safe report names
    handler.__doc__ = doc
    return fail_safe(NAME)(handler)


_iter = _builtin("_iter", _live,
                 "``BuiltinVariable.call_iter(tx, view)`` (2.5-2.11) for a dict's values or items view.")
_reversed = _builtin("_reversed", _live_reversed,
                     "``BuiltinVariable.call_reversed(tx, view)`` (2.5-2.12) for a dict's keys, values or items view.")
_VIEW_METHODS = {"__iter__": _live, "__reversed__": _live_reversed}


@fail_safe(NAME)
def _view_method(wrapped, instance, args, kwargs):
    """``DictViewVariable.call_method(tx, "__iter__" | "__reversed__", [], {})`` (2.12: ``iter()`` calls the
    view's ``__iter__``; 2.13+: ``reversed()`` its ``__reversed__``)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    live = _VIEW_METHODS.get(bound[1]) if bound is not None else None
    if live is None or bound[2] or bound[3]:
        return DEFER
    return live(instance, wrapped, args, kwargs)


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
         "**the old values** (also `d.items()`)", "2.5–2.12", "(`<2.13`)"),
        ("`it = reversed(d.values()); next(it); d['a'] = 9; list(it)` (or `for k, v in reversed(d.items())` "
         "writing a later key): **the old values**; 2.5-2.12: `next()` does not advance `reversed(d.keys())`",
         "2.5–2.15", "(`>=2.5`)"),
    ),
    fixes="an iterator over d.values() or d.items(), forward (torch 2.5-2.12) or reversed() (every release), "
    "yields the values of when it was made, not the dict's current ones",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_iter/call_reversed (a ListIteratorVariable "
    "or a tuple of the view's unpacked items); 2.13+ variables/dicts.py: DictViewVariable's __reversed__",
    mirrors="CPython's dictiter_iternextvalue/dictiter_iternextitem and dictreviter_iternext (read the entry at "
    "next()); 2.13's forward dict iterators; open upstream for reversed()",
    torch=">=2.5",
    targets=(
        # 2.5-2.12: iter() and GET_ITER reach BuiltinVariable.call_iter (2.12's IterBuiltinVariable calls the
        # view's __iter__ instead); 2.13+ iterate the dict itself
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_iter", _call_iter_gate, optional=True,
               when=_snapshot_iterators),
        # reversed(view): 2.5-2.12 BuiltinVariable.call_reversed (a tuple), 2.13+ the view's __reversed__
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_reversed", _reversed,
               params=("tx", "obj"), optional=True, when=_snapshot_iterators),
        # 2.15 answers __reversed__ from a tp_methods table through the call_method it inherits
        *(Target("torch._dynamo.variables.dicts", cls, "call_method",
                 routed_gate(_view_method, method_name_gate, frozenset({"__iter__", "__reversed__"})),
                 params=("tx", "name", "args", "kwargs"), optional=True, inherited=inherited)
          for cls, inherited in (("DictViewVariable", True),
                                 ("DictItemsVariable", False))),  # 2.12's items view answers __iter__ itself
    ),
    summary="an iterator over a dict's values or items, forward or reversed(), reads the dict when it advances, "
    "as CPython",
    history=(
        ("2.5-2.12", "iter()/for: the snapshot of when the iterator was made; reversed(view): a tuple of the "
         "view's items (next() does not advance it)"),
        ("2.13-2.15", "iter()/for: right (Python iterators over the dict tracker); reversed(view): a list "
         "iterator over a snapshot"),
    ),
)
