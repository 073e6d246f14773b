"""Writes and deletions through ``obj.__dict__`` replay as ``setattr``/``delattr`` (torch 2.12 only).

Root cause: torch 2.12's ``DunderDictVariable`` (torch/_dynamo/variables/dicts.py,
pytorch/pytorch#174570 and #174941) keeps ``obj.__dict__[k] = v`` and ``del
obj.__dict__[k]`` in the side-effects table as *attribute* mutations of ``obj``
(``SideEffectsProxyDict.__setitem__``/``__delitem__`` -> ``store_attr``), and uses
``ConstDictVariable.call_method`` for the dictionary methods. Three things go
wrong, measured on 2.12.1 for plain objects and ``MutableMapping`` inputs (fuzzer
seeds 60, 83, 238 and 35 "native" programs of a 300-program sweep):

* ``del obj.__dict__[k]`` of a key the instance dict does not have never raises
  ``KeyError`` (``ConstDictVariable``'s ``__delitem__`` does not look); if the
  class has an attribute ``k``, Dynamo replays the deletion as ``del obj.k`` and
  the compiled call raises ``AttributeError`` instead.
* A deletion is replayed as ``del obj.k`` (``SideEffects.codegen_update_mutated``,
  ``DELETE_ATTR`` when ``hasattr(obj, k)`` at compile time): through a property
  of that name (``property 'p' ... has no deleter``), a class ``__delattr__``, or
  on a later input that lacks the key.
* After ``obj.__dict__[k] = v`` for a key a property (any data descriptor)
  shares, ``obj.k`` in the same frame returns ``v``; CPython returns the
  property's value.

torch 2.13 fixed all three with instance-dict mutations of their own kind
(``SideEffects.store_instance_dict_attr``, ``DunderDictVariable.delitem`` raising
``KeyError``). The fix here, for 2.12 only: a missing key raises ``KeyError`` in
the trace (its absence guarded with ``DICT_NOT_CONTAINS`` on an input); a
deletion whose replay would differ from ``del obj.__dict__[k]`` graph-breaks
(:func:`tdcompat.dynamo_api.guard_deletion_replay` plus data descriptors and a
class ``__delattr__``); a write on an input object to a key a data descriptor
shares graph-breaks. Not for an object made in the frame: a graph break with its
``__dict__`` on the stack loses the write (2.12 reconstructs ``DunderDictVariable``
as a new dict), so that read-after-write stays as wrong as it is natively.
Everything else is Dynamo's own code.
"""

from __future__ import annotations

from ..dynamo_api import const_str
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dunder-dict-replay"

_DELETES = frozenset(("__delitem__", "pop"))
_WRITES = frozenset(("__setitem__", "setdefault", "update"))


def _owner(instance):
    """The tracker whose ``__dict__`` this is (``SideEffectsProxyDict.item``), or None."""
    return getattr(getattr(instance, "items", None), "item", None)


def _written_keys(name, args, kwargs):
    """The constant keys a write stores, or None when it cannot be told here."""
    if name == "update":
        keys = list(kwargs)
        if args:
            if len(args) != 1 or not hasattr(args[0], "items") or not isinstance(args[0].items, dict):
                return None
            for hashable in args[0].items:
                key = const_str(getattr(hashable, "vt", hashable))
                if key is None:
                    return None
                keys.append(key)
        return keys
    if kwargs or not args:
        return None
    key = const_str(args[0])
    return None if key is None else [key]


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``DunderDictVariable.call_method(tx, name, args, kwargs)`` (inherited from ConstDictVariable)."""
    if kwargs or len(args) != 4:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if name not in _DELETES and name not in _WRITES:
        return DEFER
    obj = _owner(instance)
    value = getattr(obj, "value", None)
    if obj is None or value is None:
        return DEFER
    from ..dynamo_api import graph_break, is_data_descriptor

    if name in _WRITES:
        if obj.source is None:
            # No break for an object made in the frame: its `__dict__` on the stack would be
            # reconstructed as a fresh dict (ConstDictVariable.reconstruct) and the write lost.
            return DEFER
        keys = _written_keys(name, call_args, call_kwargs or {})
        if keys is None:
            return DEFER
        for key in keys:
            if name == "setdefault" and key in instance.items:
                continue  # a read of a present key
            if is_data_descriptor(type(value), key):
                graph_break("__dict__ write shadowed by a data descriptor", f"{obj}.__dict__[{key!r}]",
                            f"{type(value).__qualname__}.{key} is a data descriptor: a later `obj.{key}` in "
                            "this frame would return the written value")
        return DEFER

    if call_kwargs or not call_args or len(call_args) > (2 if name == "pop" else 1):
        return DEFER
    key = const_str(call_args[0])
    if key is None:
        return DEFER
    from ..dynamo_api import deletion_replays_as_recorded, instance_dict_contains, raise_observed

    present = instance_dict_contains(tx, obj, key)
    if present is None:
        return DEFER
    if not present:
        if name == "pop" and len(call_args) == 2:
            return DEFER  # Dynamo returns the default
        effects_begin()
        raise_observed(KeyError, tx, f"{obj}.__dict__.{name}({key!r})")
    if obj.source is not None:
        if is_data_descriptor(type(value), key) or not deletion_replays_as_recorded(tx, obj, key):
            graph_break("__dict__ deletion replayed through the class", f"del {obj}.__dict__[{key!r}]",
                        f"Dynamo replays the deletion as `del obj.{key}`, which runs "
                        f"{type(value).__qualname__}'s descriptor or __delattr__")
        from ..dynamo_api import guard_deletion_replay

        guard_deletion_replay(tx, obj, key)
    return DEFER


PATCH = Patch(
    name=NAME,
    fixes="`del obj.__dict__[k]` of a missing key does not raise KeyError (AttributeError out of compiled code "
    "when the class has `k`); deletions replayed through a property or `__delattr__`; `obj.k` after "
    "`obj.__dict__[k] = v` returns v where a property wins (silently wrong, torch 2.12)",
    upstream="torch/_dynamo/variables/dicts.py: DunderDictVariable (ConstDictVariable.call_method: "
    "__delitem__, pop, __setitem__, setdefault, update)",
    mirrors="torch 2.13: SideEffects.store_instance_dict_attr and DunderDictVariable.delitem "
    "(instance-dict mutations, KeyError for a missing key)",
    torch=">=2.12,<2.13",
    fixed_upstream="2.13: instance-dict mutations (SideEffects.store_instance_dict_attr)",
    targets=(
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "call_method", _call_method,
               inherited=True, params=("tx", "name", "args", "kwargs")),
    ),
    requires=(
        "torch._dynamo.variables.dicts:SideEffectsProxyDict",
        "torch._dynamo.side_effects:SideEffects.has_pending_mutation_of_attr",
        "torch._dynamo.side_effects:SideEffects.load_attr",
        "torch._dynamo.guards:GuardBuilder.DICT_CONTAINS",
    ),
    summary="__dict__ deletions and descriptor-shadowed writes on 2.12: KeyError in the trace or a graph break",
    history=(
        ("2.5-2.11",
         "not this gap: no `DunderDictVariable` before 2.12 (deletions through `obj.__dict__` there: "
         "`instance-dict-writes`)"),
        ("2.12",
         "`DunderDictVariable` keeps `obj.__dict__` writes and deletions as attribute mutations: `del "
         "obj.__dict__[k]` of a missing key raises no `KeyError` (`AttributeError` out of compiled code when the "
         "class has `k`); a deletion replays as `del obj.k`, through a property (`property 'p' ... has no "
         "deleter`), a class `__delattr__` or on a later input that lacks the key; `obj.k` after "
         "`obj.__dict__[k] = v` returns `v` where a property wins (silently wrong; measured on 2.12.1, fuzzer "
         "seeds 60, 83, 238)"),
        ("2.13+",
         "fixed upstream: instance-dict mutations of their own kind (`SideEffects.store_instance_dict_attr`; "
         "`DunderDictVariable.delitem` raises `KeyError`)"),
    ),
)
