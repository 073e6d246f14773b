"""The instance-dict model: what a traced frame knows about an object's ``__dict__``.

Shared by the ``__dict__`` patches (``instance-dict-*``, ``dunder-dict-*``, ``readd-order``,
deletions through ``delattr``/``super()``, module attributes): whether a key is in the instance
dict at this point of the frame (a pending store or deletion first, then the real dict of an
object passed in, guarded), the item itself, which names the frame deleted (Dynamo's record
keeps a deleted and re-stored key in its old place, CPython moves it to the end), and whether a
recorded deletion replays as CPython ran it. It sits above the version shims
(:mod:`tdcompat.dynamo_api`) and the handler protocol (:mod:`tdcompat.wrappers`), below the
patches; issue 27 grows it into one model of ``obj.__dict__``.

Named API: :func:`instance_dict_receiver_types`, :func:`instance_dict_contains`,
:func:`instance_dict_item`, :func:`pending_stores`, :func:`deleted_attr_names` (and
:data:`ANY_DELETED`), :func:`deletion_tracker`, :func:`readd_tracker`,
:func:`readd_instance_dict_tracker`, :func:`guard_deletion_replay`,
:func:`refuse_deletion_under_class_attribute`, :func:`deletion_replays_as_recorded`,
:func:`order_module_deletion`; what the frame wrote through ``obj.__dict__`` where Dynamo's replay
would not write it there: :func:`note_dict_write`, :func:`dict_written`, :func:`dict_written_names` (and
:data:`ANY_DICT_WRITE`), :func:`dict_write_replay_plan`, :func:`record_key`; the keys an item operation
takes: :func:`item_key`, :func:`plain_constant_key`.
"""

from __future__ import annotations

import functools
import inspect
import weakref

from .dynamo_api import (
    MISSING,
    const_str,
    graph_break,
    guard_dict_contains,
    guard_dict_keys_in_order,
    is_data_descriptor,
    made_in_frame,
    module_tracker_types,
    realize,
)

#: Attribute names deleted from each object while tracing (``SideEffects.store_attr`` of a
#: ``DeletedVariable``), keyed by the tracker and, on 2.5, by its ``mutable_local`` (the key of
#: ``store_attr_mutations`` there). A key deleted and stored again moves to the end of a
#: CPython instance dict but keeps its place in Dynamo's record. Never cleared within a trace
#: (a restored checkpoint keeps the same keys), so readers can only be more careful.
_DELETED_NAMES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


#: Empty until a deletion was noted (the weak dictionary's own storage): a gate's test that
#: costs no call (``WeakKeyDictionary.__len__`` is Python code).
ANY_DELETED: dict = _DELETED_NAMES.data  # type: ignore[attr-defined]


def pending_stores(side_effects, item) -> dict:
    """``item``'s record in ``SideEffects.store_attr_mutations`` (name -> value, in first-store
    order), or ``{}``: keyed by the tracker, on 2.5 by its ``mutable_local``."""
    table = side_effects.store_attr_mutations
    local = getattr(item, "mutable_local", None)
    return (table.get(local) if local is not None and local in table else table.get(item)) or {}


#: What the frame wrote through ``obj.__dict__`` where Dynamo's own replay of the record would not be
#: a ``__dict__`` write (a key a data descriptor of the class shares, before 2.8): tracker (and, on
#: 2.5, its ``mutable_local``) -> name -> the value trackers written. The replay of such an entry is
#: taken over (:func:`dict_written`); never cleared within a trace (a restored checkpoint's record
#: holds only values noted here or others, which keep Dynamo's replay).
_DICT_WRITES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

#: Empty until a write was noted: a gate's test that costs no call.
ANY_DICT_WRITE: dict = _DICT_WRITES.data  # type: ignore[attr-defined]


def note_dict_write(item, name, value) -> None:
    """Remember that the frame stored ``value`` (a tracker) under ``name`` through ``item.__dict__``."""
    for key in (item, getattr(item, "mutable_local", None)):
        if key is None:
            continue
        try:
            _DICT_WRITES.setdefault(key, {}).setdefault(name, []).append(value)
        except TypeError:  # not weakly referenceable: cannot be a record key
            pass


def dict_written(item, name, value) -> bool:
    """Is ``value`` (the record's entry under ``name``) one the frame wrote through ``item.__dict__``?
    By identity: a later store of another value under that name is not."""
    for key in (item, getattr(item, "mutable_local", None)):
        try:
            written = _DICT_WRITES.get(key) if key is not None else None
        except TypeError:
            written = None
        if written and any(v is value for v in written.get(name, ())):
            return True
    return False


def dict_written_names(item) -> frozenset:
    """The names the frame wrote through ``item.__dict__`` (see :func:`note_dict_write`)."""
    names: set = set()
    for key in (item, getattr(item, "mutable_local", None)):
        try:
            names |= set(_DICT_WRITES.get(key, ())) if key is not None else set()
        except TypeError:
            pass
    return frozenset(names)


def note_deleted_attr(item, name) -> None:
    """Remember that ``name`` was deleted from ``item`` in this trace."""
    for key in (item, getattr(item, "mutable_local", None)):
        if key is None:
            continue
        try:
            _DELETED_NAMES.setdefault(key, set()).add(name)
        except TypeError:  # not weakly referenceable or unhashable: cannot be a record key
            pass


def forget_deleted_attr(item, name) -> None:
    """``name`` of ``item`` is back in its CPython place in Dynamo's record (``readd-order`` moved
    it to the end): readers need not treat it as deleted and stored again."""
    for key in (item, getattr(item, "mutable_local", None)):
        try:
            names = _DELETED_NAMES.get(key) if key is not None else None
        except TypeError:
            names = None
        if names:
            names.discard(name)


def _forget_if_last(side_effects, item, name) -> None:
    """A name stored again after its deletion: once the record lists it last (Dynamo 2.14+
    itself, readd-order or the readd tracker), its place is CPython's and readers need not
    refuse it."""
    record = pending_stores(side_effects, item)
    if record and list(record)[-1] == name:
        forget_deleted_attr(item, name)


def deleted_attr_names(obj) -> frozenset:
    """The names deleted from ``obj`` in this trace (see :func:`note_deleted_attr`)."""
    names: set = set()
    for key in (obj, getattr(obj, "mutable_local", None)):
        try:
            names |= _DELETED_NAMES.get(key, set()) if key is not None else set()
        except TypeError:
            pass
    return frozenset(names)


@functools.lru_cache(maxsize=None)
def deletion_tracker():
    """The gate to install on ``SideEffects.store_attr(item, name, value)`` for a patch that
    needs :func:`deleted_attr_names` or :data:`ANY_DELETED`: every store goes straight to
    Dynamo after one type test (and, once something was deleted, one set lookup); a deletion
    is noted first, and a name stored again on an object made in the frame is forgotten
    where the record then lists it last (its CPython place). One object for every patch that
    declares it, which the installer puts on the method once."""
    from .wrappers import fail_safe, gate

    deleted_type = []

    @fail_safe("deletion-tracker")
    def note(wrapped, instance, args, kwargs):
        from torch._dynamo.variables import DeletedVariable

        if not deleted_type:
            deleted_type.append(DeletedVariable)
        item = args[0] if args else kwargs.get("item")
        name = args[1] if len(args) > 1 else kwargs.get("name")
        value = args[2] if len(args) > 2 else kwargs.get("value")
        if type(value) is DeletedVariable and item is not None:
            note_deleted_attr(item, name)
        result = wrapped(*args, **kwargs)
        if type(value) is not DeletedVariable and item is not None and made_in_frame(item):
            # Stored again: where the record now lists it last (Dynamo 2.14+ itself, or
            # readd-order), its place is CPython's and readers need not refuse it.
            _forget_if_last(instance, item, name)
        return result

    @gate(note)
    def store_attr_deletion_gate(original, handle):
        def store_attr(self, *args, **kwargs):  # 2.13 passes the mutation kind after the value
            try:
                other = type(args[2]) is not deleted_type[0] and (
                    not ANY_DELETED or args[1] not in deleted_attr_names(args[0]))
            except Exception:  # noqa: BLE001  (not loaded yet, or an odd call: the handler decides)
                other = False
            if other:
                return original(self, *args, **kwargs)
            return handle(self, *args, **kwargs)

        return store_attr

    return store_attr_deletion_gate


def _real_instance_dict(item):
    """The real ``__dict__`` of the object behind ``item`` (read without running user code), or None."""
    value = getattr(item, "value", None)
    try:
        real = object.__getattribute__(value, "__dict__")
    except Exception:  # noqa: BLE001  (no instance dict, or an odd object)
        return None
    return real if type(real) is dict else None


def _last_key_in_place(side_effects, item, name, real) -> bool:
    """Does the replay's "keep ``name`` in its old place" equal CPython's "move it to the end"
    here? Yes where every key after ``name`` in the real ``__dict__`` is deleted at this store
    (the record holds a deletion; ``name`` is then the last real key still there) and no key the
    real dict lacks is present in the record (added by the frame and not deleted since): CPython's
    dict is then the real keys still there, in their order, with ``name`` after them, which is
    where the replay leaves it. (A real key before ``name`` deleted and stored again already was
    asked the same; one after it stored again later is asked then, and breaks.) Read from the
    record and the real ``__dict__`` only; the caller guards the real keys and their order."""
    keys = list(real)
    if name not in real:
        return False
    from torch._dynamo.variables import DeletedVariable

    record = pending_stores(side_effects, item)
    after = keys[keys.index(name) + 1:]
    if not all(isinstance(record.get(k), DeletedVariable) for k in after):
        return False
    return not any(k not in real and not isinstance(v, DeletedVariable) for k, v in record.items() if k != name)


def _readd_on_input(side_effects, item, name, value):
    """The common test of both re-store gates: ``value`` stored under ``name`` on an object
    passed in whose record holds a deletion of ``name``. Returns False (leave it to Dynamo:
    a deletion stored, no recorded deletion, an object made in the frame), True where the
    caller must remove the record's entry before Dynamo stores (a key the real ``__dict__``
    lacks, guarded), or None where the record may keep it in place (its last key, guarded in
    order: :func:`_last_key_in_place`); graph-breaks for anything else."""
    from torch._dynamo.variables import DeletedVariable

    if isinstance(value, DeletedVariable):
        return False
    record = pending_stores(side_effects, item)
    if not isinstance(record.get(name), DeletedVariable) or made_in_frame(item):
        return False
    real = _real_instance_dict(item)
    source = getattr(item, "source", None)
    if real is not None and source is not None and name in real and _last_key_in_place(
            side_effects, item, name, real):
        from torch._dynamo.source import AttrSource
        from torch._dynamo.symbolic_convert import InstructionTranslator

        from .wrappers import effects_begin

        effects_begin()
        guard_dict_keys_in_order(InstructionTranslator.current_tx(), AttrSource(source, "__dict__"))
        return None
    if real is None or source is None or name in real:
        graph_break(
            "attribute deleted and stored again on an object passed in",
            f"{item}.{name}",
            "CPython moves the key to the end of the instance dict; Dynamo would replay the "
            "store into the key's old place",
        )
    from torch._dynamo.source import AttrSource

    from .wrappers import effects_begin

    effects_begin()
    guard_dict_contains(AttrSource(source, "__dict__"), name, False)
    return True


def _store_again(wrapped, side_effects, args, kwargs, defer):
    """The re-store rules' verdict on ``args`` = ``(item, name, value, ...)``, acted on: ``defer`` where
    Dynamo's store stands as it is; else the store, moved last in the record where that is the key's
    CPython place (:func:`_readd_on_input` guards what it read), and the deletion forgotten."""
    item, name, value = args[:3]
    verdict = _readd_on_input(side_effects, item, name, value)
    if verdict is False:
        return defer
    if verdict:
        del pending_stores(side_effects, item)[name]  # the store below appends it: CPython's place
    result = wrapped(*args, **kwargs)
    _forget_if_last(side_effects, item, name)
    return result


@functools.lru_cache(maxsize=None)
def readd_tracker():
    """The gate to install on ``SideEffects.store_attr(item, name, value)`` for a store, on an object
    passed in, of a name deleted earlier in the frame. CPython moves the key to the end of the
    instance dict; Dynamo's record (``store_attr_mutations``, one entry per name in first-store
    order) overwrites the deletion in place, and the replay after the graph (``setattr`` on the
    real object) leaves a key the object had in its old place (silently wrong order, measured
    on 2.5.1-2.15.0). So:

    * a key the real ``__dict__`` did not have on entry (added, deleted, added again in the
      frame) is appended by the replay in record order: the entry is removed before the store
      so that it lands last in the record, its CPython place, under a guard that the real
      ``__dict__`` still lacks the key (``DICT_CONTAINS`` inverted);
    * the LAST key of the real ``__dict__`` still there (the keys after it deleted), where no key the
      frame added is present at the store: its old place is its CPython place
      (:func:`_last_key_in_place`); the record keeps it, under a guard on the real keys and their
      order (2.13.0 is natively right there: the fuzzer's CI program #588 broke with tdcompat only);
    * any other key it had, or an object whose real ``__dict__`` is not a plain dict or that has
      no source: a graph break (the frame then runs the deletion and the store for real).

    Objects made in the frame are ``readd-order``'s (2.5-2.13; right natively from 2.14). One
    object for every patch that declares it (readd-order, instance-dict-writes, dunder-dict-order:
    each can bring a deletion and a store of one name into one frame), which the installer puts on
    the method once. Dynamo 2.14+ stores an instance-dict write through
    ``SideEffects.store_instance_dict_attr``, which drops the recorded deletion before
    ``store_attr``: :func:`readd_instance_dict_tracker` asks the same question there."""
    from .wrappers import DEFER, fail_safe, gate

    deleted_type = []

    @fail_safe("readd-tracker")
    def restore(wrapped, instance, args, kwargs):
        from torch._dynamo.variables import DeletedVariable

        if not deleted_type:
            deleted_type.append(DeletedVariable)
        if len(args) < 3:
            return DEFER
        return _store_again(wrapped, instance, args, kwargs, DEFER)

    @gate(restore)
    def store_attr_readd_gate(original, handle):
        def store_attr(self, *args, **kwargs):  # 2.13 passes the mutation kind after the value
            try:
                entry = pending_stores(self, args[0]).get(args[1])
                other = (entry is None or type(entry) is not deleted_type[0]
                         or type(args[2]) is deleted_type[0])
            except Exception:  # noqa: BLE001  (not loaded yet, or an odd call: the handler decides)
                other = False
            if other:
                return original(self, *args, **kwargs)
            return handle(self, *args, **kwargs)

        return store_attr

    return store_attr_readd_gate


@functools.lru_cache(maxsize=None)
def readd_instance_dict_tracker():
    """:func:`readd_tracker`'s question on ``SideEffects.store_instance_dict_attr(item, name, value)``
    (2.13+; every instance-dict write of 2.14+ goes there). 2.14+ drop a recorded deletion of ``name``
    there before ``store_attr`` (so that the record lists the key last, CPython's place), but the
    replay then only ``setattr``s it on an object passed in, which keeps a key the object had in its
    old place: ``del o.a; o.a = v`` left ``a`` first (silently wrong natively, measured on 2.15.0, and
    the fuzzer's CI program #107 there, where tdcompat's break at a later ``list(o.__dict__)`` replayed
    the same record). The same rules as :func:`readd_tracker`, asked before Dynamo drops the entry."""
    from .wrappers import DEFER, fail_safe, gate

    deleted_type = []

    @fail_safe("readd-tracker")
    def restore(wrapped, instance, args, kwargs):
        from torch._dynamo.variables import DeletedVariable

        if not deleted_type:
            deleted_type.append(DeletedVariable)
        if len(args) != 3 or kwargs:
            return DEFER
        return _store_again(wrapped, instance, args, kwargs, DEFER)

    @gate(restore)
    def store_instance_dict_attr_readd_gate(original, handle):
        def store_instance_dict_attr(self, item, name, value):
            try:
                entry = pending_stores(self, item).get(name)
                other = entry is None or type(entry) is not deleted_type[0] or type(value) is deleted_type[0]
            except Exception:  # noqa: BLE001  (not loaded yet, or an odd call: the handler decides)
                other = False
            if other:
                return original(self, item, name, value)
            return handle(self, item, name, value)

        return store_instance_dict_attr

    return store_instance_dict_attr_readd_gate


def instance_dict_contains(tx, obj, name: str):
    """Is ``name`` in ``obj``'s instance dict at this point of the frame (None: unknown)?

    A store or deletion made earlier in the frame decides; else the real
    ``obj.__dict__`` of an object passed in, under a ``DICT_CONTAINS`` guard
    (recorded as an effect: a handler that fails later must not fall back). An
    object made in the frame has exactly the keys stored in it, as long as the
    placeholder Dynamo made for it is still empty, or (a module) holds only what
    ``nn.Module.__init__`` put there.
    """
    from torch._dynamo.variables import DeletedVariable

    from .wrappers import effects_begin

    side_effects = tx.output.side_effects
    if side_effects.has_pending_mutation_of_attr(obj, name):
        return not isinstance(side_effects.load_attr(obj, name, deleted_ok=True), DeletedVariable)
    real = getattr(getattr(obj, "value", None), "__dict__", None)
    if not isinstance(real, dict):
        return None
    if obj.source is None:
        if not real:
            return False
        return name in real if _is_module_placeholder(obj.value, real) else None
    from torch._dynamo.source import AttrSource

    present = name in real
    effects_begin()
    guard_dict_contains(AttrSource(obj.source, "__dict__"), name, present)
    return present


@functools.lru_cache(maxsize=None)
def _module_placeholder_keys() -> frozenset:
    """The instance dict of a fresh ``nn.Module``: what Dynamo's placeholder for a module made in
    the frame holds (``torch._dynamo.utils.nn_module_new`` runs ``nn.Module.__init__`` on it for
    real; every other attribute the frame sets is a pending store)."""
    import torch

    fresh = object.__new__(torch.nn.Module)
    torch.nn.Module.__init__(fresh)
    return frozenset(vars(fresh))


def _is_module_placeholder(value, real: dict) -> bool:
    """Does ``real``, the instance dict of ``value`` made in the frame, hold only nn.Module's bookkeeping?"""
    import torch

    return isinstance(value, torch.nn.Module) and real.keys() <= _module_placeholder_keys()


def guard_deletion_replay(tx, obj, name: str) -> None:
    """Make a deletion recorded on an input object replay as it was traced.

    Dynamo decides at compile time, from the object it compiled for and under no
    guard, whether the replay deletes: ``hasattr(obj, name)`` (up to 2.12, then
    ``del obj.name``) or ``name in obj.__dict__`` (2.13 instance-dict deletions).
    So: guard the input's key presence at frame entry, and graph-break where
    ``hasattr`` and the instance dict disagree (a class attribute of that name:
    the replay would raise ``AttributeError``, or skip a key a later input has).
    """
    if obj.source is None:
        return
    real = getattr(obj.value, "__dict__", None)
    if not isinstance(real, dict):
        return
    from torch._dynamo.source import AttrSource

    from .wrappers import effects_begin

    present = name in real
    instance_dict_kind = hasattr(tx.output.side_effects, "store_instance_dict_attr")
    if not instance_dict_kind and hasattr(obj.value, name) != present:
        graph_break(
            "deletion replay would differ",
            f"{type(obj.value).__qualname__}.{name}",
            "the class defines this name too: Dynamo would replay the deletion as `del obj.name` "
            "on an instance that does not have it",
        )
    effects_begin()
    guard_dict_contains(AttrSource(obj.source, "__dict__"), name, present)


def refuse_deletion_under_class_attribute(tx, obj, name: str) -> None:
    """Graph-break before recording the deletion of instance key ``name`` when the class has an
    attribute of that name: before 2.13 Dynamo answers later reads in the frame from the
    deletion record (``read deleted attribute``; ``hasattr`` silently ``False``), CPython finds
    the class attribute. 2.13 models instance-dict deletions (``store_instance_dict_attr``)."""
    if hasattr(tx.output.side_effects, "store_instance_dict_attr"):
        return
    cls = type(getattr(obj, "value", None))
    if inspect.getattr_static(cls, name, _ABSENT) is not _ABSENT:
        graph_break(
            "deletion of an instance key the class also defines",
            f"{cls.__qualname__}.{name}",
            "after the deletion CPython reads the class attribute; Dynamo would read the deletion record",
        )


_ABSENT = object()


#: What ``nn.Module.__delattr__`` looks into before it deletes from the instance dict.
BOOKKEEPING = ("_parameters", "_buffers", "_modules")


def instance_dict_receiver_types() -> frozenset:
    """The trackers of objects whose ``__dict__`` is plain attribute storage: user objects,
    unspecialized modules, ``MutableMapping``s and user context managers (those that exist
    on this torch)."""
    types = _RECEIVERS.get("types")
    if types is None:
        import importlib

        found = []
        for module, name in (
            ("user_defined", "UserDefinedObjectVariable"),
            ("user_defined", "MutableMappingVariable"),
            ("nn_module", "UnspecializedNNModuleVariable"),
            ("nn_module", "UnspecializedBuiltinNNModuleVariable"),
            ("ctx_manager", "GenericContextWrappingVariable"),
        ):
            cls = getattr(importlib.import_module(f"torch._dynamo.variables.{module}"), name, None)
            if cls is not None:
                found.append(cls)
        types = _RECEIVERS["types"] = frozenset(found)
    return types


_RECEIVERS: dict = {}


def order_module_deletion(tx, obj, key, reorder: bool = True) -> bool:
    """Can ``del module.__dict__[key]`` replay as that deletion (``nn.Module.__setattr__``'s
    ``remove_from``: ``del self.__dict__[name]`` then ``self._modules[name] = value``)?

    A module made in the frame is rebuilt from its final attributes: the deleted key is
    simply not stored. An input module's deletion is replayed as ``del m.key``, which runs
    ``nn.Module.__delattr__``: it deletes from ``_parameters``/``_buffers``/``_modules``
    whichever has ``key`` *at replay time*, and only otherwise from the instance dict.
    ``SideEffects.codegen_update_mutated`` applies the objects' mutations in the reverse of
    the order they were first tracked, and a module is tracked before its bookkeeping dicts,
    so those dicts' ``clear(); update(...)`` would run first and the deletion would then
    remove the entry just registered (leaving the stale instance attribute). So: the
    bookkeeping dicts are tracked, the module is moved right after them (its own mutations
    then replay before theirs, on the dicts it had on entry; with ``reorder=False`` it must
    already be there), and ``key`` is guarded absent from each of them on entry. False (no
    effects yet) for a bookkeeping dict replaced in the frame or holding ``key`` on entry.
    """
    if made_in_frame(obj):
        return True
    side_effects = tx.output.side_effects
    table = getattr(side_effects, "id_to_variable", None)
    value = obj.value
    attrs = getattr(value, "__dict__", None)
    if not isinstance(table, dict) or id(value) not in table or obj.source is None or not isinstance(attrs, dict):
        return False
    reals = [attrs.get(attr) for attr in BOOKKEEPING]
    for attr, real in zip(BOOKKEEPING, reals):
        if side_effects.has_pending_mutation_of_attr(obj, attr) or type(real) is not dict or key in real:
            return False
        if not reorder and id(real) not in table:
            return False
    keys = list(table)
    if not reorder and keys.index(id(value)) < max(keys.index(id(real)) for real in reals):
        return False
    from .wrappers import effects_begin

    effects_begin()
    for attr, real in zip(BOOKKEEPING, reals):
        dict_vt = realize(obj.var_getattr(tx, attr))
        source = getattr(dict_vt, "source", None)
        if source is None or id(real) not in table:
            graph_break("module __dict__ deletion replay", f"del {obj}.__dict__[{key!r}]", f"{attr} is not tracked")
        guard_dict_contains(source, key, False)
    keys = list(table)
    here, last = keys.index(id(value)), max(keys.index(id(real)) for real in reals)
    if last > here:
        items = list(table.items())
        items.insert(last, items.pop(here))
        table.clear()
        table.update(items)
    return True


def deletion_replays_as_recorded(tx, obj, key) -> bool:
    """Before 2.13 Dynamo replays a recorded deletion as ``del obj.key``: the same as
    ``del obj.__dict__[key]`` for ``object.__delattr__``, and for ``nn.Module.__delattr__``
    where :func:`order_module_deletion` can order the replay (it then guards and reorders).
    False for any other ``__delattr__``: the caller graph-breaks."""
    delattr_ = inspect.getattr_static(type(obj.value), "__delattr__", None)
    if delattr_ is object.__delattr__:
        return True
    import torch

    return delattr_ is torch.nn.Module.__delattr__ and order_module_deletion(tx, obj, key)


def instance_dict_item(tx, obj, name: str):
    """``obj.__dict__[name]`` for a key the object's real instance dict has and the frame has not
    stored (the caller checked both): Dynamo's attribute read where that is the item (a user
    object, no data descriptor of the class under that name), else the item itself under
    ``DictGetItemSource(AttrSource(obj.source, "__dict__"), name)``.

    A module's attribute read is not its item: 2.8/2.9's ``UnspecializedNNModuleVariable.var_getattr``
    answers an empty hook dict (``_backward_hooks``, ``_forward_pre_hooks``...) with a sourceless
    ``ConstDictVariable({})`` (guarded ``EMPTY_NN_MODULE_HOOKS_DICT``), a plain ``dict`` where the
    item is an ``OrderedDict`` (``dict(m.__dict__)``, ``MyDict(m.__dict__)``, ``m.__dict__[k]``:
    issue 26, measured). A property (a data descriptor) would answer its getter. Graph break for
    either without a source to read the item from. Shared by dunder-dict-views and
    instance-dict-writes."""
    if not is_data_descriptor(type(obj.value), name) and type(obj) not in module_tracker_types():
        return obj.var_getattr(tx, name)
    source = getattr(obj, "source", None)
    if source is None:
        graph_break("__dict__ item read", f"{obj}.__dict__[{name!r}]",
                    "the object has no source to read its instance dictionary item from")
    from torch._dynamo import source as sources
    from torch._dynamo.variables.builder import VariableBuilder

    item_source = getattr(sources, "DictGetItemSource", sources.GetItemSource)  # 2.8 insists on the former
    return VariableBuilder(tx, item_source(sources.AttrSource(source, "__dict__"), name))(
        object.__getattribute__(obj.value, "__dict__")[name])


#: Replay operations: ``obj.__dict__[key] = value``; ``object.__setattr__(obj, key, value)`` (what Dynamo's
#: ``STORE_ATTR`` / ``object.__setattr__`` replay runs); ``delattr(obj, key)`` (its ``DELETE_ATTR``).
SET_ITEM, SET_ATTR, DEL_ATTR = "setitem", "setattr", "delattr"


def plain_constant_key(key) -> bool:
    """``None``, a ``bool``, ``int``, ``bytes`` or non-NaN ``float``, or a tuple of these: a key whose hash
    and ``==`` are pure functions of its value (so Dynamo's record, itself a Python dict, files it as
    CPython's instance dict does: ``1``, ``True`` and ``1.0`` one entry), that compiled code loads as a
    constant. Not a ``str`` subclass, a NaN (found by identity), a user object."""
    if key is None or type(key) in (bool, int, bytes):
        return True
    if type(key) is float:
        return key == key
    return type(key) is tuple and all(plain_constant_key(k) for k in key)


def item_key(obj, vt):
    """The key of an item operation on ``obj.__dict__`` (``d[k]``, ``d[k] = v``, ``del d[k]``, ``k in d``,
    ``get``/``pop``/``setdefault``): a ``str`` constant; for a plain user object made in the frame (exact
    ``UserDefinedObjectVariable``: its whole instance dict is in Dynamo's record, nothing to guard) also a
    :func:`plain_constant_key`, whose writes :func:`dict_write_replay_plan` replays as ``__dict__`` writes
    (``STORE_ATTR`` needs a ``str``); else :data:`tdcompat.dynamo_api.MISSING` (``None`` is a key)."""
    key = const_str(vt)
    if key is not None:
        return key
    from torch._dynamo.variables import UserDefinedObjectVariable

    if type(obj) is not UserDefinedObjectVariable or not made_in_frame(obj):
        return MISSING
    try:
        if not vt.is_python_constant():
            return MISSING
        key = vt.as_python_constant()
    except Exception:  # noqa: BLE001 - not a constant after all
        return MISSING
    return key if plain_constant_key(key) else MISSING


def _replay_differs(var, name) -> bool:
    """Would Dynamo's replay of a store under ``name`` differ from a ``__dict__`` write? For a name that
    is not a ``str`` (``STORE_ATTR`` cannot replay it at all) and, before 2.8, for a name a data descriptor
    of the class shares (``STORE_ATTR`` runs the descriptor; 2.8 on replays those that the frame wrote
    through ``__dict__`` with ``object_setattr_ignore_descriptor``)."""
    if type(name) is not str:
        return True
    return not hasattr(var, "should_skip_descriptor_setter") and is_data_descriptor(type(var.value), name)


def _dynamo_writes_dict(var, name) -> bool:
    """2.8-2.11: does Dynamo replay a store under ``name`` as a ``__dict__`` write
    (``should_skip_descriptor_setter``: a descriptor with a traced ``__set__``, or a name written through
    ``__dict__``)?"""
    skip = getattr(var, "should_skip_descriptor_setter", None)
    return bool(skip is not None and skip(name))


def dict_write_replay_plan(side_effects, var):
    """``[(op, key, value tracker or None)]`` replaying ``var``'s whole record in its order
    (:data:`SET_ITEM`, :data:`SET_ATTR`, :data:`DEL_ATTR`), or None where Dynamo's own replay stands:
    ``var`` is an exact ``UserDefinedObjectVariable`` and its record holds a value the frame wrote
    through ``var.__dict__`` (:func:`dict_written`) under a name whose ``STORE_ATTR`` replay would not
    be that write. Every other entry is what Dynamo emits for it (``codegen_update_mutated``):
    ``object_setattr_ignore_descriptor`` where 2.8-2.11 use it, else a store replayed as
    ``object.__setattr__`` (what ``STORE_ATTR`` runs on a class without its own ``__setattr__``, and
    Dynamo's call where it has one), a deletion as ``delattr`` on an object passed in that had the
    attribute when traced, nothing for a deletion on an object made in the frame."""
    from torch._dynamo.variables import DeletedVariable, UserDefinedObjectVariable

    if type(var) is not UserDefinedObjectVariable or not ANY_DICT_WRITE:
        return None
    record = pending_stores(side_effects, var)
    if not any(_replay_differs(var, name) and dict_written(var, name, value) for name, value in record.items()):
        return None
    existing = not made_in_frame(var)
    plan = []
    for name, value in record.items():
        if isinstance(value, DeletedVariable):
            if existing and type(name) is str and hasattr(var.value, name):
                plan.append((DEL_ATTR, name, None))
        elif _replay_differs(var, name) and dict_written(var, name, value):
            plan.append((SET_ITEM, name, value))
        elif type(name) is not str:
            return None  # not written through __dict__ and not replayable: leave it to Dynamo
        elif _dynamo_writes_dict(var, name):
            plan.append((SET_ITEM, name, value))
        else:
            plan.append((SET_ATTR, name, value))
    return plan


def record_key(side_effects, var):
    """The key of ``var``'s record in ``SideEffects.store_attr_mutations`` (its ``mutable_local`` on 2.5)."""
    table = side_effects.store_attr_mutations
    local = getattr(var, "mutable_local", None)
    return local if local is not None and local in table else var


def replayable_non_str_key(item, key) -> bool:
    """Is an instance-dict write of ``key`` (not a ``str``) into ``item`` replayed as CPython writes it?
    Only from 2.13 (``SideEffects.store_instance_dict_attr``: the replay is a plain ``d[k] = v`` on the real
    ``__dict__``, ``object_setattr_ignore_descriptor``), for a plain user object made in the frame (no
    source: no ``AttrSource(obj, key)`` is built, nothing to guard), with a key the replay loads: on 2.13
    (whose ``SideEffectsProxyDict.__setitem__`` asserts a ``str``; ``dunder-dict-non-str-key`` records these)
    an ``int``, ``bool``, non-NaN ``float``, ``bytes`` or ``None`` (a tuple crashes its replay; a NaN's lookup
    is by identity); from 2.14, which takes non-str keys itself, those, NaN, ``complex`` and tuples of them
    (measured right on 2.14.1 and 2.15.0). Never a ``str`` subclass (its replay crashes on every release)."""
    from torch._dynamo.side_effects import SideEffects
    from torch._dynamo.variables import UserDefinedObjectVariable

    if not hasattr(SideEffects, "store_instance_dict_attr"):
        return False
    if type(item) is not UserDefinedObjectVariable or getattr(item, "source", None) is not None:
        return False
    if not made_in_frame(item):
        return False
    native = not proxy_asserts_str_key()
    return _constant_key(key, native)


def _constant_key(key, native: bool) -> bool:
    import math

    if key is None or type(key) in (int, bool, bytes):
        return True
    if type(key) is float:
        return native or not math.isnan(key)
    if native and type(key) is complex:
        return True
    if native and type(key) is tuple:  # flat: 2.14-2.15 crash on a nested tuple (measured)
        return all(type(k) is not tuple and _constant_key(k, native) for k in key)
    return False


@functools.lru_cache(maxsize=None)
def proxy_asserts_str_key() -> bool:
    """Does ``SideEffectsProxyDict.__setitem__`` (2.12+) assert a ``str`` key? 2.12-2.13 do; 2.14 records
    any constant key. False where there is no proxy (before 2.12)."""
    import inspect

    from torch._dynamo.variables import dicts

    proxy = getattr(dicts, "SideEffectsProxyDict", None)
    if proxy is None:
        return False
    try:
        source = inspect.getsource(proxy.__setitem__)
    except (OSError, TypeError):
        return True
    return "istype(name, str)" in source
