"""``d.update(gen)`` / ``d |= gen`` store every pair only after the generator is drained (torch 2.7-2.15).

Symptom: a generator (or ``map``/``zip`` over one) that reads the dict it fills sees it unchanged:
``d.update((k, len(d)) for k in "xyz")`` gives ``x``, ``y``, ``z`` the same value compiled and 2, 3, 4 in
eager. Silently wrong with ``fullgraph=True``, measured on 2.7.1-2.15.0 for ``dict.update``,
``OrderedDict.update`` and (2.9+) ``d |= gen`` / ``d.__ior__(gen)`` (case ``dict_update_lazy_pairs``).
2.5-2.6 run a generator function to its end where it is called: ``dict-update-drained-generator``.

Root cause: torch/_dynamo/variables/dicts.py: ``ConstDictVariable.call_method``, branch ``update`` (2.7-2.14;
``__ior__`` calls it on 2.9-2.14), builds ``dict(arg)`` with ``BuiltinVariable.call_custom_dict``, which
unpacks the whole iterable first; 2.15's ``ConstDictVariable.dict_update`` (also under ``d |= b``,
``nb_inplace_or_impl``) loops over ``unpack_iterable(tx, other)``, the same drained list. CPython's
``PyDict_MergeFromSeq2`` (and ``mutablemapping_add_pairs`` for an ``OrderedDict``) draws an item, stores
it, then draws the next.

What the handlers accept: ``update`` (with keywords or not) and ``__ior__`` on an exact ``ConstDictVariable``
of a ``dict`` or an ``OrderedDict``, an exact ``DefaultDictVariable`` or (2.15) ``UserDefinedDefaultDictVariable``
of the class ``collections.defaultdict`` itself, mutable, with one positional
argument that ``tdcompat.dict_pairs.is_lazy_iterator`` accepts (a generator made in the frame, ``zip``,
``map``, a list or tuple iterator). Each item is drawn with Dynamo's own ``next_variable`` and stored with Dynamo's own
``d[key] = value`` before the next is drawn, then the keywords in order: CPython's loop, step for step
(``OrderedDict.update``'s ``MutableMapping`` path stores ``self[key] = value`` in the same order). No new
guard: what the generator reads is guarded by Dynamo as it inlines it. An item that is not an exact 2-tuple
or 2-list graph-breaks where it is drawn (CPython: ``TypeError``/``ValueError`` after the earlier stores).
A list iterator whose items Dynamo computed ahead (a generator it ran to its end) gives, stepped, exactly
what Dynamo's own drain gives, so stepping is never worse than Dynamo and right wherever the items are
computed as they are drawn. Everything else (a list, a dict, a mapping, a user iterator, a dict subclass) is
Dynamo's, which already stores a list's pairs in order.
"""

from __future__ import annotations

import collections

from ..dict_pairs import is_lazy_iterator, store_lazily
from ..dynamo_api import bind_args, dict_class, is_mutable, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-update-lazy-pairs"

_PLAIN = (dict, collections.OrderedDict, collections.defaultdict)


#: Dynamo's trackers of a dict, an ``OrderedDict`` (its own class from 2.14) and a ``defaultdict`` (a
#: ``ConstDictVariable`` subclass before 2.13; 2.13-2.14 model it as a user object over a dict tracker, whose
#: ``update`` lands here as that dict's; 2.15 makes one built in the frame a ``UserDefinedDefaultDictVariable``,
#: a user object that is itself a ``ConstDictVariable``, whose ``update`` goes from the user-object
#: ``call_method`` straight to the ``tp_methods`` table, past both targets above: fuzzer program 438).
_TRACKERS = frozenset({"ConstDictVariable", "OrderedDictVariable", "DefaultDictVariable",
                       "UserDefinedDefaultDictVariable"})


def _target(vt) -> bool:
    """A mutable tracker of an exact ``dict``, ``OrderedDict`` or ``defaultdict`` (no subclass: its
    ``__setitem__`` could be its own)."""
    from torch._dynamo.variables import ConstDictVariable

    return (type(vt).__name__ in _TRACKERS and isinstance(vt, ConstDictVariable) and dict_class(vt) in _PLAIN
            and is_mutable(vt))


def _update(tx, instance, args, kwargs):
    """Store the pairs of ``args[0]`` lazily, then ``kwargs``; DEFER for any other call."""
    from torch._dynamo.variables import ConstantVariable

    if len(args) != 1 or not _target(instance):
        return DEFER
    other = realize(args[0])
    if not is_lazy_iterator(other):
        return DEFER
    effects_begin()

    def store(key, value):
        instance.call_method(tx, "__setitem__", [key, value], {})

    store_lazily(tx, instance, other, store, NAME)
    for word, value in kwargs.items():  # CPython merges the keywords after the positional argument, in order
        store(ConstantVariable.create(word), value)
    return ConstantVariable.create(None)


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "update" | "__ior__", [it], kwargs)`` (2.7-2.14)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    call_kwargs = dict(call_kwargs or {})
    if name == "update":
        return _update(tx, instance, list(call_args), call_kwargs)
    if name == "__ior__" and not call_kwargs:
        result = _update(tx, instance, list(call_args), {})
        return DEFER if result is DEFER else instance
    return DEFER


@fail_safe(NAME)
def _dict_update(wrapped, instance, args, kwargs):
    """``ConstDictVariable.dict_update(self, tx, args, kwargs)`` (2.15: ``d.update(...)`` and ``d |= b``)."""
    bound = bind_args(args, kwargs, ("tx", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, call_args, call_kwargs = bound
    return _update(tx, instance, list(call_args), dict(call_kwargs or {}))


#: On ``ConstDictVariable.call_method`` (every dict method Dynamo traces) and on a dict-subclass user object's
#: (2.15, where ``_target`` accepts only an exact ``defaultdict``): only ``update`` and ``__ior__`` reach the
#: handler, through the name gate it shares with the other dict-method patches. One gate for both targets: a
#: routed gate is a stateless factory, built once per target by the installer.
_call_method_gate = routed_gate(_call_method, method_name_gate, frozenset({"update", "__ior__"}))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d.update(gen)` / `d |= gen` / `od.update(gen)` where the generator (or a `map`/`zip`) reads the dict "
         "it fills: **it sees the dict unchanged** (every pair stored only after the generator is drained)",
         "2.7–2.15 (`|=`: 2.9–2.15)",
         "(`>=2.7`): each pair stored before the next is drawn"),
    ),
    fixes="`d.update(gen)` / `d |= gen`: a generator that reads the dict sees it unchanged, every pair is stored "
    "after the generator is drained (silently wrong, torch 2.7-2.15)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method, branch update (2.7-2.14); "
    "ConstDictVariable.dict_update (2.15)",
    mirrors="CPython Objects/dictobject.c PyDict_MergeFromSeq2 (no upstream issue yet: docs/upstream/"
    "dict-update-lazy-pairs/PR.md)",
    torch=">=2.7",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "dict_update", _dict_update,
               params=("tx", "args", "kwargs"), optional=True),  # 2.15+
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method",
               _call_method_gate, params=("tx", "name", "args", "kwargs"), optional=True,
               inherited=True),  # 2.13+; 2.15: a defaultdict built in the frame
    ),
    summary="d.update(gen) / d |= gen store each pair before the generator's next item is drawn, as "
    "PyDict_MergeFromSeq2",
    history=(
        ("2.5-2.6", "a generator function is run to its end where it is called: nothing to step "
         "(`dict-update-drained-generator` breaks an update from one)"),
        ("2.7-2.8", "`update` drains the generator through `call_custom_dict`, then stores (silently wrong); "
         "`d |= gen` is a graph break there (`dict-ior-in-place` steps it)"),
        ("2.9-2.14", "`update` and `__ior__` drain it through `call_custom_dict` (silently wrong)"),
        ("2.15", "`dict_update` loops over `unpack_iterable(tx, other)`, drained first (silently wrong)"),
    ),
)
