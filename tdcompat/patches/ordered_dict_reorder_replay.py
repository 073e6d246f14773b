"""``od.move_to_end(k)`` on an ``OrderedDict`` passed in is lost after the frame (2.7-2.15).

Symptom (silently wrong, measured on 2.7.1-2.15.0, ``fullgraph=True``): ``od.move_to_end("a")`` (or
``last=False``, or ``OrderedDict.move_to_end(od, k)``) of an ``OrderedDict`` passed in reads right inside
the frame, but after the call the caller's ``od`` keeps its old order; on 2.15 an ``OrderedDict`` subclass too.
2.5-2.6 graph-break on ``move_to_end``.

Root cause: ``torch/_dynamo/side_effects.py: SideEffects.codegen_update_mutated`` replays a mutated dict
passed in as ``od.update(changed items)``, and calls ``od.clear()`` first only when
``ConstDictVariable.should_reconstruct_all`` is set, which Dynamo sets when a key is removed (``pop``,
``popitem``, ``del``) but not when one is moved: an ``update`` of keys already there keeps their places.

What the handler accepts: ``ConstDictVariable.has_new_items()`` of a dict tracker with a source (an input or
something reached from one), whose Python type is ``OrderedDict`` or a subclass defining none of ``clear``,
``update``, ``__setitem__``, ``__getattribute__`` (so the replay runs only ``OrderedDict``'s C code) or one
Dynamo replays past the class's own methods whatever they are (2.15: the subclass's tracker, written back with
``OrderedDict.clear`` and ``OrderedDict.__setitem__`` by ``_manual_dict_setitem``,
:func:`tdcompat.dynamo_api.replayed_past_overrides`), and
whose keys that were there when Dynamo first saw it are now in another relative order, or follow a key the
frame added (what ``update`` of the changed items would not reproduce). Only then it sets
``should_reconstruct_all``: the replay becomes ``od.clear(); od.update(every item in the frame's order)``,
which leaves ``od`` with exactly the items and order the frame computed (the same replay Dynamo uses after
a removal). It reads the tracker's own item lists, by identity of the key trackers, and runs no user code.
Every other dict answers as Dynamo does.
"""

from __future__ import annotations

import collections

from ..dict_classes import overrides_any, python_type
from ..dynamo_api import peek, replayed_past_overrides
from ..pure_values import hashes_by_value
from ..spec import Patch, Target
from ..wrappers import fail_safe

NAME = "ordered-dict-reorder-replay"

#: What the replay (``od.clear()``, ``od.update(items)``: ``od[k] = v`` per item) runs of the class.
_REPLAY_RUNS = ("clear", "update", "__setitem__", "__getattribute__")


def _identity(vt):
    """What a key tracker stands for, read without realizing or running anything: a constant key (a value
    that hashes by value: ``str``, ``int``, ...) by its value, any other (a lazy one not realized yet) by the
    tracker's identity."""
    tracker, _ = peek(vt)
    if tracker is not None:
        try:
            if tracker.is_python_constant():
                value = tracker.as_python_constant()
                if hashes_by_value(value):
                    return (type(value), value)
        except Exception:  # noqa: BLE001 - not a constant after all: by identity
            pass
    return id(vt)


def _reordered(tracker) -> bool:
    """Would ``update(changed items)`` leave another order than the frame's? It leaves the keys the tracker
    started with in their old relative order, then the new keys: the frame's order differs when those keys
    were reordered, or a new key was moved before one of them (``od[k] = v; od.move_to_end(k, last=False)``).

    A constant key is compared by value: 2.7-2.8's ``move_to_end`` re-inserts the moved key under a new
    tracker (the call's argument); 2.9+ move the entry itself. ``original_items`` is keyed by the key
    trackers (2.7-2.8, 2.15) or by the same hashable wrappers as ``items`` (2.9-2.14)."""
    original = [_identity(getattr(k, "vt", k)) for k in getattr(tracker, "original_items", ())]
    if not original:
        return False
    kept = set(original)
    now = [_identity(k.vt) for k in tracker.items]
    still = set(now)
    replayed = [key for key in original if key in still] + [key for key in now if key not in kept]
    return now != replayed


@fail_safe(NAME)
def _has_new_items(wrapped, instance, args, kwargs):
    """``ConstDictVariable.has_new_items()``: asked by the replay of a mutated dict."""
    if getattr(instance, "source", None) is None or getattr(instance, "should_reconstruct_all", True):
        return wrapped(*args, **kwargs)
    cls = python_type(instance)
    if cls is None or not issubclass(cls, collections.OrderedDict):
        return wrapped(*args, **kwargs)
    if (cls is not collections.OrderedDict and overrides_any(cls, collections.OrderedDict, _REPLAY_RUNS)
            and not replayed_past_overrides(instance)):
        return wrapped(*args, **kwargs)
    if _reordered(instance):
        instance.should_reconstruct_all = True
    return wrapped(*args, **kwargs)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`od.move_to_end(k)` on an `OrderedDict` passed in: the caller's `od` keeps its old order after the call",
         "2.7–2.15", "(`>=2.7`)"),
    ),
    fixes="`od.move_to_end(k)` of an OrderedDict passed in is not replayed: the caller's dict keeps its old order "
    "(silently wrong, torch 2.7-2.15)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.has_new_items (read by "
    "torch/_dynamo/side_effects.py: SideEffects.codegen_update_mutated)",
    mirrors="none upstream yet (docs/upstream/ordered-dict-reorder-replay/): Dynamo sets should_reconstruct_all on "
    "removals (pop, popitem, __delitem__), not on move_to_end",
    torch=">=2.7",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "has_new_items", _has_new_items),
    ),
    summary="an OrderedDict passed in whose keys the frame reordered is replayed as clear() + update(all items)",
    history=(
        ("2.5-2.6", "`move_to_end` graph-breaks"),
        ("2.7-2.14", "an exact `OrderedDict` passed in keeps its old order (a subclass is right)"),
        ("2.15", "an `OrderedDict` and its subclasses keep their old order"),
    ),
)
