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
(:func:`tdcompat.instance_dict.guard_deletion_replay` plus data descriptors and a
class ``__delattr__``). Reads after such a write or deletion are answered as CPython
answers them (``UserDefinedObjectVariable.var_getattr`` and
``BuiltinVariable.call_getattr``, which both consult the record first): a Python
property of the class wins over the written key (traced as Dynamo traces it on an
untouched object), and after a deletion a class attribute of that name shows again
(``hasattr`` was False). That holds for objects made in the frame too (where a break
at the write would lose it: 2.12 reconstructs their ``DunderDictVariable`` as a new
dict) and lets a write under a property on an object passed in compile (it was a
break). A slot or C descriptor of that name is left to Dynamo (its record cannot tell
a slot store from an instance-dict write), and so is a tracker with its own
``var_getattr`` (modules: their writes under a data descriptor still break).
Everything else is Dynamo's own code.
"""

from __future__ import annotations

import functools

from ..dynamo_api import const_str
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

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
        if obj.source is None or _plain(type(obj)):
            # A plain object's reads of the key are answered by the class (`_var_getattr`,
            # `_call_getattr`). No break either for an object made in the frame: its `__dict__`
            # on the stack would be reconstructed as a fresh dict and the write lost.
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
    from ..dynamo_api import raise_observed
    from ..instance_dict import deletion_replays_as_recorded, instance_dict_contains

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
        from ..instance_dict import guard_deletion_replay

        guard_deletion_replay(tx, obj, key)
    return DEFER


@functools.lru_cache(maxsize=None)
def _plain(tracker_type) -> bool:
    """Are attribute reads of this tracker ``UserDefinedObjectVariable.var_getattr`` itself (plain
    objects, context managers, ``MutableMapping``s: ``MutableMappingVariable`` only adds ``get``)?"""
    from torch._dynamo.variables.user_defined import MutableMappingVariable, UserDefinedObjectVariable

    if not issubclass(tracker_type, UserDefinedObjectVariable):
        return False
    below = tracker_type.__mro__[:tracker_type.__mro__.index(UserDefinedObjectVariable)]
    return not any("var_getattr" in vars(klass) and klass is not MutableMappingVariable for klass in below)


def _pending_value(tx, obj, name):
    """The frame's pending store of ``obj.name``, or None."""
    pending = tx.output.side_effects.store_attr_mutations.get(obj)  # keyed by tracker on 2.12
    return None if not pending or name not in pending else pending[name]


def _class_answers(tx, obj, name):
    """What CPython would answer ``obj.name`` from after the frame wrote or deleted
    ``obj.__dict__[name]``, where 2.12 answers from its record of that mutation: ``"property"``
    (a Python property of the class: a data descriptor wins over the instance dict) or
    ``"class"`` (the key was deleted and the class has the name: its attribute shows again);
    None when Dynamo's answer stands."""
    if not _plain(type(obj)) or not isinstance(name, str) or obj._object_has_getattribute:
        return None
    pending = _pending_value(tx, obj, name)
    if pending is None:
        return None
    from torch._dynamo.variables import DeletedVariable
    from torch._dynamo.variables.user_defined import NO_SUCH_SUBOBJ, is_data_descriptor

    type_attr = obj.lookup_class_mro_attr(name)
    if type_attr is NO_SUCH_SUBOBJ:
        return None
    if isinstance(type_attr, property) and not obj._is_c_defined_property(type_attr):
        return "property"
    # Another kind of data descriptor (a slot, a C getset): a pending store there may be the
    # descriptor's own store as well as an instance-dict write, which the record cannot tell
    # apart, so Dynamo's answer stands.
    if is_data_descriptor(type_attr):
        return None
    return "class" if isinstance(pending, DeletedVariable) else None


def _from_class(tx, obj, name, answer):
    """Trace ``obj.name`` as CPython answers it from the class (``answer`` from :func:`_class_answers`),
    as Dynamo does for an object whose ``__dict__`` the frame did not touch."""
    from torch._dynamo.source import AttrSource

    source = AttrSource(obj.source, name) if obj.source is not None else None
    type_attr = obj.lookup_class_mro_attr(name)
    if answer == "property":
        return obj.resolve_data_descriptor(tx, name, type_attr, source)
    return obj.resolve_type_attr(tx, name, type_attr, source)


@fail_safe(NAME)
def _var_getattr(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.var_getattr(tx, name)``: the property is traced as on an
    object whose ``__dict__`` the frame did not touch (2.12 returns the written value, or raises
    AttributeError after a deletion)."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    answer = _class_answers(tx, instance, name)
    if answer is None:
        return DEFER
    effects_begin()
    return _from_class(tx, instance, name, answer)


@fail_safe(NAME)
def _call_getattr(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_getattr(tx, obj, name_var, default=None)``: 2.12 answers a pending
    store before asking the tracker; here the class answers, with ``getattr``'s default handled
    as Dynamo handles it for an unwritten object (``hasattr`` first, through the patched
    ``var_getattr``)."""
    if kwargs or len(args) not in (3, 4):
        return DEFER
    tx, obj, name_var = args[:3]
    name = const_str(name_var)
    answer = None if name is None else _class_answers(tx, obj, name)
    if answer is None:
        return DEFER
    effects_begin()
    default = args[3] if len(args) == 4 else None
    if default is not None:
        present = instance.call_hasattr(tx, obj, name_var)
        if present is None or not present.as_python_constant():
            return default
    return _from_class(tx, obj, name, answer)


@gate(_var_getattr)
def _var_getattr_gate(original, handle):
    """What is installed on ``UserDefinedObjectVariable.var_getattr``: a read of an attribute
    the frame has not stored (nearly every read) goes straight to Dynamo after one dict lookup."""

    def var_getattr(self, tx, name):
        try:
            if _pending_value(tx, self, name) is None:
                return original(self, tx, name)
        except Exception:  # noqa: BLE001  (not what this torch was expected to be: the handler decides)
            pass
        return handle(self, tx, name)

    return var_getattr


@gate(_call_getattr)
def _call_getattr_gate(original, handle):
    """What is installed on ``BuiltinVariable.call_getattr`` (every ``obj.name`` Dynamo traces):
    anything but a plain user object goes straight to Dynamo after one type test."""

    def call_getattr(self, tx, obj, name_var, default=None):
        try:
            if not _plain(type(obj)):
                return original(self, tx, obj, name_var, default)
        except Exception:  # noqa: BLE001
            pass
        if default is None:  # as Dynamo called it
            return handle(self, tx, obj, name_var)
        return handle(self, tx, obj, name_var, default)

    return call_getattr


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`del o.__dict__[k]` of a missing key **does not raise `KeyError`** (an `AttributeError` '
             'out of compiled code when the class has `k`); `o.__dict__.pop(k)` / `del` replayed through '
             "a property (`property 'p' ... has no deleter`); `o.k` after `o.__dict__[k] = v` **silently "
             'returns `v`** where a property wins',
         '2.12 (fixed in 2.13)',
         '(`==2.12.*`): `KeyError` in the trace, a graph break where the replay would differ'),
    ),
    fixes="`del obj.__dict__[k]` of a missing key does not raise KeyError (AttributeError out of compiled code "
    "when the class has `k`); deletions replayed through a property or `__delattr__`; `obj.k` after "
    "`obj.__dict__[k] = v` returns v where a property wins, `hasattr(obj, k)` False after deleting a key the "
    "class also has (silently wrong, torch 2.12, objects passed in or made in the frame)",
    upstream="torch/_dynamo/variables/dicts.py: DunderDictVariable (ConstDictVariable.call_method: "
    "__delitem__, pop, __setitem__, setdefault, update); torch/_dynamo/variables/user_defined.py: "
    "UserDefinedObjectVariable.var_getattr; torch/_dynamo/variables/builtin.py: BuiltinVariable.call_getattr",
    mirrors="torch 2.13: SideEffects.store_instance_dict_attr and DunderDictVariable.delitem "
    "(instance-dict mutations, KeyError for a missing key)",
    torch=">=2.12,<2.13",
    fixed_upstream="2.13: instance-dict mutations (SideEffects.store_instance_dict_attr)",
    targets=(
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "call_method", _call_method,
               inherited=True, params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "var_getattr",
               _var_getattr_gate, params=("tx", "name")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_getattr", _call_getattr_gate,
               params=("tx", "obj", "name_var", "default")),
    ),
    requires=(
        "torch._dynamo.variables.dicts:SideEffectsProxyDict",
        "torch._dynamo.side_effects:SideEffects.has_pending_mutation_of_attr",
        "torch._dynamo.side_effects:SideEffects.load_attr",
        "torch._dynamo.guards:GuardBuilder.DICT_CONTAINS",
    ),
    summary="__dict__ deletions on 2.12: KeyError in the trace or a graph break; reads of a written or deleted "
    "key answered by the class's property or attribute",
    history=(
        ("2.5-2.11",
         "not this gap: no `DunderDictVariable` before 2.12 (deletions through `obj.__dict__` there: "
         "`instance-dict-writes`)"),
        ("2.12",
         "`DunderDictVariable` keeps `obj.__dict__` writes and deletions as attribute mutations: `del "
         "obj.__dict__[k]` of a missing key raises no `KeyError` (`AttributeError` out of compiled code when the "
         "class has `k`); a deletion replays as `del obj.k`, through a property (`property 'p' ... has no "
         "deleter`), a class `__delattr__` or on a later input that lacks the key; `obj.k` after "
         "`obj.__dict__[k] = v` returns `v` where a property wins, and `hasattr(obj, k)` is False after deleting "
         "a key the class also has (silently wrong, on objects passed in and made in the frame alike; measured on "
         "2.12.1, fuzzer seeds 60, 83, 238 of seed 0 and 11000058, 11000424, 11000746 of seed 11)"),
        ("2.13+",
         "fixed upstream: instance-dict mutations of their own kind (`SideEffects.store_instance_dict_attr`; "
         "`DunderDictVariable.delitem` raises `KeyError`)"),
    ),
)
