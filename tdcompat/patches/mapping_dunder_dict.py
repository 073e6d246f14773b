"""``m.__dict__`` of an input ``MutableMapping`` is a stale copy (torch 2.6-2.11).

Root cause: ``MutableMappingVariable.var_getattr``
(torch/_dynamo/variables/user_defined.py) answers ``m.__dict__`` for a mapping
with a source with ``LazyVariableTracker.create(m.__dict__, AttrSource(source,
"__dict__"))``: a ``ConstDictVariable`` built from the *real* dictionary, kept
as ``generic_dict_vt`` and consulted first by every later attribute read. Two
records of one state then live side by side:

* ``m.k = v`` in the frame is an attribute store in the side-effects table; the
  copy does not see it, so ``m.__dict__["k"]`` (and ``vars(m)["k"]``) read back
  the old value: silently wrong on 2.6-2.11 without tdcompat (e.g. tensordict
  reads ``self.__dict__`` right after ``self._x = ...``).
* ``del m.__dict__["k"]``/``pop`` edit the copy; the real object still has
  ``k``, so ``m.k`` and ``hasattr(m, "k")`` find the stale value.

torch 2.5 returns the same ``GetAttrVariable(m, "__dict__")`` view as for every
other user object; 2.12 made ``__dict__`` a real dictionary backed by the
side-effects table (``DunderDictVariable``, pytorch/pytorch#174570 and
#174941), which fixes both.

The fix makes the copy the one record of ``m``'s instance attributes, as 2.12's
``DunderDictVariable`` is:

* ``m.__dict__`` is Dynamo's copy (every dict operation, view and builtin is then
  Dynamo's own, and its mutations replay onto the real dictionary as
  ``clear()`` + ``update()``), its keys and their order guarded, because that
  replay rewrites the whole dictionary as traced. Attribute stores already pending
  move into it (:func:`_fold`).
* Attribute stores and deletions on ``m`` after that are the copy's
  ``__setitem__``/``__delitem__`` (``SideEffects.store_attr``), in CPython's order.
* ``m.name`` reads the copy after the class's data descriptors (CPython's order);
  a key deleted through the copy is an AttributeError where no class on the MRO
  has the name and nothing runs on a miss (guarded), else a graph break.

Accepted: a mapping with a source that Dynamo tracks for attribute mutation,
whose class has object's ``__getattribute__`` and ``__delattr__`` (so a plain store
or deletion is an instance-dict write and a read finds the dict after data
descriptors). Where stores are pending that cannot move in CPython's order (a
key deleted and stored again, a data descriptor's store) or the class is not
plain, ``m.__dict__`` is the ``GetAttrVariable`` view that every other user
object gets (``instance-dict-writes`` handles its reads and writes; iterating it
graph-breaks). Everything else is Dynamo's.

It needs ``mutable-mapping-setattr`` where that applies (2.6-2.8): the stores
are attribute stores on the mapping, which only reach the real object once the
mapping is tracked.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "mapping-dunder-dict"


def _plain_class(cls: type) -> bool:
    """Attribute access on instances of ``cls`` is object's: reads find the instance dict after
    data descriptors, plain stores and deletions are instance-dict writes."""
    import inspect

    return (inspect.getattr_static(cls, "__getattribute__", None) is object.__getattribute__
            and inspect.getattr_static(cls, "__delattr__", None) is object.__delattr__)


def _dict_record(side_effects, instance):
    """The tracked ``ConstDictVariable`` of the real ``instance.value.__dict__`` (Dynamo's own
    copy, once it was read in this frame), or None."""
    from ..dynamo_api import _real_instance_dict

    real = _real_instance_dict(instance)
    if real is None or real not in side_effects:
        return None
    record = side_effects[real]
    from torch._dynamo.variables import ConstDictVariable

    return record if isinstance(record, ConstDictVariable) else None


def _has_key(record, name) -> bool:
    from torch._dynamo.variables import ConstantVariable

    return record.maybe_getitem_const(ConstantVariable.create(name)) is not None


def _can_fold(instance, pending) -> bool:
    """Can the attribute stores already pending on ``instance`` move into its ``__dict__`` copy in
    CPython's order? Yes when each is a plain store or deletion of a str key and no key was
    deleted and stored again (the record keeps a first-store order, CPython puts it last)."""
    if not pending:
        return True
    from ..dynamo_api import deleted_attr_names, is_data_descriptor

    cls = type(instance.value)
    return not deleted_attr_names(instance) and all(
        isinstance(k, str) and not is_data_descriptor(cls, k) for k in pending)


def _fold(tx, record, pending) -> None:
    """Move the pending stores into the copy (sets in first-store order, deletions as deletions)
    and out of Dynamo's attribute record: one record, replayed once."""
    from torch._dynamo.variables import ConstantVariable, DeletedVariable

    for name, value in list(pending.items()):
        key = ConstantVariable.create(name)
        if isinstance(value, DeletedVariable):
            if _has_key(record, name):
                record.call_method(tx, "__delitem__", [key], {})
        else:
            record.call_method(tx, "__setitem__", [key, value], {})
        del pending[name]


@fail_safe(NAME)
def _var_getattr(wrapped, instance, args, kwargs):
    """``MutableMappingVariable.var_getattr`` for a mapping with a source, tracked for attribute
    mutation.

    ``m.__dict__``: Dynamo's copy of the real dictionary (a ``ConstDictVariable`` under
    ``AttrSource(m, "__dict__")``, its keys guarded, its mutations replayed onto the real
    dictionary), made the one record of ``m``'s instance attributes: attribute stores after it
    was read go into it (:func:`_store_attr`) and attribute reads answer from it below. Every
    dict operation is then Dynamo's own on a dict. Where attribute stores are already pending
    (the copy would miss them), the object's ``GetAttrVariable`` view as before.

    ``m.name`` once the copy exists: a data descriptor of the class wins (CPython), then the
    copy; a key the real dictionary has but the copy no longer has (deleted through it) is a
    graph break (the real object would answer it); anything else is Dynamo's.
    """
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    if instance.source is None or not isinstance(name, str):
        return DEFER
    side_effects = tx.output.side_effects
    if not side_effects.is_attribute_mutation(instance) or instance.value not in side_effects:
        return DEFER  # untracked: its stores would not be replayed
    from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

    from ..dynamo_api import guard_dict_keys_in_order, is_data_descriptor, pending_stores, realize

    plain = _plain_class(type(instance.value))
    record = _dict_record(side_effects, instance) if plain else None
    if name == "__dict__":
        pending = pending_stores(side_effects, instance) if record is None else {}
        if record is None and (not plain or not _can_fold(instance, pending)):
            effects_begin()
            return UserDefinedObjectVariable.var_getattr(instance, tx, name)
        effects_begin()
        record = realize(wrapped(*args))
        if record.source is not None:
            # Dynamo replays a mutated dict as clear() + update(its items): right only for the key set
            # (and order) it was traced with, which it guards only partly (2.6-2.11: pop(k) guards k).
            guard_dict_keys_in_order(tx, record.source)
        if pending:
            _fold(tx, record, pending)
        instance.generic_dict_vt = record
        return record
    if record is None:
        return DEFER
    if is_data_descriptor(type(instance.value), name):
        effects_begin()
        return UserDefinedObjectVariable.var_getattr(instance, tx, name)
    if not _has_key(record, name):
        from ..dynamo_api import _real_instance_dict

        if name in (_real_instance_dict(instance) or ()):
            _deleted_read(tx, instance, name)
    return DEFER


def _deleted_read(tx, instance, name: str):
    """``m.name`` after ``name`` left the copy: the real object still holds it until the replay,
    so Dynamo would answer the old value. CPython looks on the class next: where no class of the
    MRO has ``name`` and nothing runs on a miss (no ``__getattr__``), it is an AttributeError, the
    class's absence of ``name`` guarded (``hasattr(type(m), name)`` on ``TypeSource(m)``); any
    other case graph-breaks."""
    from torch._dynamo.source import TypeSource

    from ..dynamo_api import MISSING, graph_break, guard_hasattr, raise_observed, static_lookup

    cls = type(instance.value)
    side_effects = tx.output.side_effects
    table = getattr(side_effects, "id_to_variable", None) or {}
    stored_on_class = any(id(k) in table for k in cls.__mro__[:-1])
    if static_lookup(cls, name) is MISSING and static_lookup(cls, "__getattr__") is MISSING and not stored_on_class:
        effects_begin()
        guard_hasattr(TypeSource(instance.source), name)
        raise_observed(AttributeError, tx, f"{instance}.{name}",
                       f"{cls.__name__!r} object has no attribute {name!r}")
    graph_break("attribute deleted through __dict__ read again", f"{instance}.{name}",
                "the real object still holds the key until Dynamo replays the deletion, and the class may answer it")


@fail_safe(NAME)
def _store_attr(wrapped, instance, args, kwargs):
    """``SideEffects.store_attr(item, name, value)`` on a mapping whose ``__dict__`` copy is the
    record (see :func:`_var_getattr`): a plain store or deletion is that dictionary's
    ``__setitem__``/``__delitem__``, replayed onto the real dictionary with the rest of its
    mutations, in CPython's order. A data descriptor's store, a store on any other object and a
    deletion of a missing key are Dynamo's."""
    if len(args) < 3 or kwargs:
        return DEFER
    item, name, value = args[:3]
    from torch._dynamo.variables.user_defined import MutableMappingVariable

    if type(item) is not MutableMappingVariable or not isinstance(name, str) or item.source is None:
        return DEFER
    if not _plain_class(type(item.value)):
        return DEFER
    record = _dict_record(instance, item)
    if record is None or item.generic_dict_vt is not record:
        return DEFER
    from ..dynamo_api import is_data_descriptor

    if is_data_descriptor(type(item.value), name):
        return DEFER
    from torch._dynamo.symbolic_convert import InstructionTranslator
    from torch._dynamo.variables import ConstantVariable, DeletedVariable

    tx = InstructionTranslator.current_tx()
    key = ConstantVariable.create(name)
    if isinstance(value, DeletedVariable):
        if not _has_key(record, name):
            return DEFER
        effects_begin()
        record.call_method(tx, "__delitem__", [key], {})
    else:
        effects_begin()
        record.call_method(tx, "__setitem__", [key, value], {})
    return None


def _still_broken() -> bool:
    """For a pre-release at the upper edge: ``var_getattr`` still builds the copy."""
    import inspect

    from torch._dynamo.variables.user_defined import MutableMappingVariable

    return "generic_dict_vt" in inspect.getsource(MutableMappingVariable.var_getattr)


PATCH = Patch(
    name=NAME,
    fixes="m.__dict__[k] / vars(m)[k] after m.k = v in the same compiled frame returns the old value; "
    "m.k still found after del m.__dict__[k]; d = m.__dict__ misses later stores m.k = v; a pop replayed onto "
    "a later input with other keys drops them (input MutableMapping, e.g. TensorDict)",
    upstream="torch/_dynamo/variables/user_defined.py: MutableMappingVariable.var_getattr (the __dict__ branch)",
    mirrors="pytorch/pytorch#174570 and #174941 (DunderDictVariable, 2.12)",
    torch=">=2.6,<2.12",
    fixed_upstream="2.12: DunderDictVariable (pytorch/pytorch#174570, #174941)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "MutableMappingVariable", "var_getattr", _var_getattr,
               params=("tx", "name")),
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", _store_attr,
               params=("item", "name", "value")),
    ),
    requires=(
        "torch._dynamo.side_effects:SideEffects.is_attribute_mutation",
        "torch._dynamo.side_effects:SideEffects.__contains__",
        "torch._dynamo.variables.user_defined:UserDefinedObjectVariable.var_getattr",
        "torch._dynamo.side_effects:SideEffects.store_attr",
        "torch._dynamo.side_effects:SideEffects.__getitem__",
        "torch._dynamo.variables.dicts:ConstDictVariable.maybe_getitem_const",
        "torch._dynamo.source:TypeSource",
    ),
    # The view it returns answers `k in m.__dict__` / `.get` / `[k]` through instance-dict-writes'
    # guarded reads: without them Dynamo's own has_key_in_generic_dict is unguarded, and a later
    # input with other keys reuses the first call's answer (silently wrong on 2.8 with
    # TDCOMPAT_DISABLE=module-deleted-attr, which turns instance-dict-writes off; test_dependencies).
    needs=("mutable-mapping-setattr", "instance-dict-writes"),
    probe=_still_broken,
    summary="an input MutableMapping's __dict__ is one record with its attributes (Dynamo's copy, kept in step)",
    history=(
        ("2.5",
         "fine: an input mapping's `m.__dict__` is the same `GetAttrVariable(m, '__dict__')` view as every other "
         "user object's"),
        ("2.6-2.11",
         "`MutableMappingVariable.var_getattr` answers `m.__dict__` of an input mapping with a "
         "`ConstDictVariable` copy of the real dictionary: `m.__dict__[k]` / `vars(m)[k]` after `m.k = v` read "
         "the old value, and `m.k` / `hasattr(m, 'k')` still find `k` after `del m.__dict__[k]` (silently wrong, "
         "e.g. TensorDict)"),
        ("2.12+",
         "fixed upstream: `__dict__` is a real dictionary backed by the side-effects table "
         "(`DunderDictVariable`, pytorch/pytorch#174570, #174941)"),
    ),
)
