"""A class attribute stored in the frame is missed by ``hasattr`` and ``cls.__dict__`` (torch 2.13 on).

Root cause: 2.13 tracks user classes for attribute mutation (``cls.v = x`` is a pending store in
``SideEffects.store_attr_mutations``), but only a read of that very attribute on that very class
tracker consults it. Other reads see the real class as it was when the frame started:

* ``KBase.v = 5; hasattr(KSub, "v")``, and on 2.13 ``K.v = 5; hasattr(K, "v")``:
  ``UserDefinedClassVariable.call_obj_hasattr`` answers ``hasattr`` of the real class (False where
  eager says True; 2.14 consults the class's own pending stores, not its bases');
* ``K.w = 1; "w" in K.__dict__`` (``.get``, ``[]``, any use of the mapping proxy):
  ``resolve_meta_data_descriptor`` builds the proxy from the real ``K.__dict__``.

Found by the differential fuzzer's class family (seed-0 programs 131, 234, 319, 446, 504 on 2.13.0
and 2.15.0). What the handlers accept, and why it is CPython's answer:

* ``hasattr(cls, name)``: True when a class on ``cls.__mro__`` holds a pending store of ``name``
  that is not a deletion, and the metaclass looks attributes up and stores them the standard way
  (``type``'s ``__getattribute__`` and ``__setattr__``, no ``__getattr__``, read statically) and
  defines nothing of that name (a data descriptor there would win). ``type.__getattribute__``
  then finds the entry in the class dict, whatever the rest of the MRO holds, so no guard is
  needed. Anything else: Dynamo's answer.
* ``cls.__dict__`` of a class the frame has stored on, under such a metaclass: Dynamo's proxy
  of the real dict (guarded
  on its keys, as before) with the pending stores applied as CPython's dict does: a stored key
  keeps its place and takes the new value, a new key goes last in first-store order, a deleted key
  goes away. Without pending stores: Dynamo's proxy, untouched.

* A read of ``name`` through a subclass (``KBase.v = 5; KSub.v``) or an instance (``C.z = 3;
  C().z``, ``getattr(o, "z", d)``, ``hasattr(o, "z")``) where a class on the MRO, before the one
  whose real dict answers, holds a pending store or deletion of ``name``: Dynamo reads the real
  classes and returns the old value or raises ``AttributeError`` (silently wrong on 2.13 and 2.15,
  fuzzer class family, 2.13.0 seed 958102467). CPython's ``_PyType_Lookup`` with the pending
  stores applied finds the stored value, which a read returns as it is where its type has no
  ``__get__`` (read statically: a constant, a tuple, a tensor; not a function or a descriptor).
  The classes the lookup passed over are guarded to lack the name (``DICT_NOT_CONTAINS`` on each
  one's ``tp_dict``: a subclass that gains its own entry recompiles; fuzzer 2.13 seed-0 program
  592), and a ``hasattr`` answered True keeps Dynamo's own ``HASATTR`` guard (without it a value
  guard on the real class raised ``AttributeError`` from the guard on a call where the entry was
  gone).
  For an instance the lookup must be ``object.__getattribute__``'s, and the instance's own entry,
  which wins over such a value, must be known: a pending store of its own, or its real
  ``__dict__`` (an input's guarded to hold or lack the key; an input that holds it is read by
  Dynamo from there). A read through the class that holds the store is Dynamo's own. Anything
  else the frame's stores change (a stored function or descriptor, a deletion passed over): an
  instance read or ``hasattr`` graph-breaks; a class read stays Dynamo's (``LOAD_ATTR`` on a class
  turns ``Unsupported`` into a read of the real class, so a break cannot be raised there).

Stores through a metaclass ``__setattr__`` of its own are refused by ``metaclass-setattr``.

Left open (with and without tdcompat): a proxy taken before the store and read after it
(``d = K.__dict__; K.w = 1; "w" in d``) shows the class as it was; a class read through a subclass
of a stored function or descriptor (above).
"""

from __future__ import annotations

from ..dynamo_api import MISSING, graph_break, guard_dict_contains, guard_hasattr, realize, static_lookup
from ..instance_dict import pending_stores
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "class-stored-attrs"

_TYPE_GETATTRIBUTE = type.__dict__["__getattribute__"]
_TYPE_SETATTR = type.__dict__["__setattr__"]
_OBJECT_GETATTRIBUTE = object.__dict__["__getattribute__"]
_MRO = type.__dict__["__mro__"].__get__
_CLASS_DICT = type.__dict__["__dict__"].__get__


def _pending(side_effects, cls: type, name: str):
    """The pending store of ``name`` on ``cls`` in this trace (a tracker), or MISSING."""
    vt = side_effects.id_to_variable.get(id(cls))
    if vt is None or not side_effects.is_attribute_mutation(vt):
        return MISSING
    return pending_stores(side_effects, vt).get(name, MISSING)


def _standard_meta(cls: type, name) -> bool:
    """``type``'s attribute protocol on ``cls``'s metaclass (read statically): its lookup, its
    ``__setattr__`` (a metaclass ``__setattr__`` writes what the pending stores do not show, and
    Dynamo 2.13 replays such stores wrongly: fuzzer 2.13.0 seed 2111980313932197), no
    ``__getattr__``, nothing named ``name``."""
    meta = type(cls)
    return (static_lookup(meta, "__getattribute__") is _TYPE_GETATTRIBUTE
            and static_lookup(meta, "__setattr__") is _TYPE_SETATTR
            and static_lookup(meta, "__getattr__") is MISSING
            and (name is None or static_lookup(meta, name) is MISSING))


def _is_deleted(vt) -> bool:
    return type(vt).__name__ == "DeletedVariable"


@fail_safe(NAME)
def _call_obj_hasattr(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.call_obj_hasattr(tx, name)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    cls = getattr(instance, "value", None)
    if not isinstance(cls, type) or not isinstance(name, str):
        return DEFER
    if not _standard_meta(cls, name):
        return DEFER
    side_effects = tx.output.side_effects
    for klass in cls.__mro__:
        value = _pending(side_effects, klass, name)
        if value is MISSING:
            continue
        if _is_deleted(value):
            return DEFER
        from torch._dynamo.variables import ConstantVariable

        if instance.source is not None:
            # Dynamo's own HASATTR guard on the real class, as without the patch: a later read
            # of the class's real entry is guarded through AttrSource, which raises instead of
            # failing on a call where the entry is gone unless this guard fails first
            effects_begin()
            guard_hasattr(instance.source, name)
        return ConstantVariable.create(True)
    return DEFER


def _lookup(side_effects, cls: type, name: str):
    """``_PyType_Lookup(cls, name)`` with this frame's pending class stores applied, read
    statically: ``(owner, value, touched)``. ``owner`` is the class that answers (None where none
    does), ``value`` a pending store's tracker or the real entry, ``touched`` whether a pending
    store or deletion on the way decided it (where it did not, Dynamo's real lookup is right)."""
    touched = False
    for klass in _MRO(cls):
        value = _pending(side_effects, klass, name)
        if value is not MISSING:
            touched = True
            if _is_deleted(value):
                continue
            return klass, value, True
        real = _CLASS_DICT(klass)
        if name in real:
            return klass, MISSING, touched
    return None, MISSING, touched


def _class_source(tx, cls: type, instance=None):
    """A source naming exactly ``cls`` on every call the guards let through, or None: an input
    object's ``type(o)`` (Dynamo's ``TYPE_MATCH`` on it), the class's own tracker's source, or
    the class an object made in the frame was made from (``ID_MATCH`` added here)."""
    if instance is not None and instance.source is not None:
        from torch._dynamo.source import TypeSource

        return TypeSource(instance.source)
    tracked = tx.output.side_effects.id_to_variable.get(id(cls))
    if tracked is not None and getattr(tracked, "value", None) is cls and tracked.source is not None:
        return tracked.source
    from ..dynamo_api import guard_class_source, made_object_class_source

    source = made_object_class_source(tx, cls)
    if source is not None:
        effects_begin()
        guard_class_source(source)
    return source


def _guard_passed_over(tx, cls: type, owner: type, name: str, source) -> bool:
    """Guard that each class on ``cls``'s MRO before ``owner`` (the class whose pending store
    answers) lacks ``name`` in its own dict, as it did when traced: ``DICT_NOT_CONTAINS`` on
    ``type->tp_dict`` (``TypeDictSource``) of ``cls`` and of ``cls.__mro__[i]``. False where a
    class passed over holds a pending entry (a deletion: not answered here) or no source is known."""
    from torch._dynamo.source import GetItemSource, TypeDictSource, TypeMROSource

    if source is None:
        return False
    side_effects = tx.output.side_effects
    for index, klass in enumerate(_MRO(cls)):
        if klass is owner:
            return True
        if _pending(side_effects, klass, name) is not MISSING:
            return False
        klass_source = source if index == 0 else GetItemSource(TypeMROSource(source), index)
        effects_begin()
        guard_dict_contains(TypeDictSource(klass_source), name, False)
    return False


def _plain(vt) -> bool:
    """A stored value a read returns as it is: its type has no ``__get__`` (read statically),
    so neither a class nor an instance read runs a descriptor on it."""
    try:
        kind = vt.python_type()
    except Exception:  # noqa: BLE001 - a tracker that cannot say: not plain
        return False
    return isinstance(kind, type) and static_lookup(kind, "__get__") is MISSING


def _stale(cls, name: str, why: str):
    graph_break("class attribute read after a store in the frame", f"{cls.__qualname__}.{name}",
                f"{why}; Dynamo would read the class as it was before the store")


#: An input's own entry, in its real dict (guarded present): Dynamo's own read finds it.
_INPUT_OWN = object()


def _own_entry(tx, instance, name: str):
    """The instance's own ``name`` as the frame sees it: a tracker, MISSING (absent, guarded for
    an input), _INPUT_OWN (an input's real entry, guarded present), or None where it cannot be
    told."""
    side_effects = tx.output.side_effects
    if side_effects.is_attribute_mutation(instance) and name in pending_stores(side_effects, instance):
        value = pending_stores(side_effects, instance)[name]
        return MISSING if _is_deleted(value) else value
    try:
        real = object.__getattribute__(instance.value, "__dict__")
    except AttributeError:
        return MISSING  # no instance dict (slots only)
    if type(real) is not dict:
        return None
    if instance.source is None:
        return None if name in real else MISSING  # made in the frame: its stores are pending
    from torch._dynamo.source import AttrSource

    present = name in real
    effects_begin()
    guard_dict_contains(AttrSource(instance.source, "__dict__"), name, present)
    return _INPUT_OWN if present else MISSING


@fail_safe(NAME)
def _object_getattr(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.var_getattr`` (2.13) / ``tp_getattro_impl(tx, name)`` (2.14+)
    where a class on the MRO has a pending store or deletion of ``name`` (the gate sends no other)."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    cls = type(instance.value)
    owner, value, touched = _lookup(tx.output.side_effects, cls, name)
    if not touched:
        return DEFER
    if value is MISSING or not _plain(value):
        _stale(cls, name, "the class value that answers is not a plain constant or tensor")
    if static_lookup(cls, "__getattribute__") is not _OBJECT_GETATTRIBUTE:
        _stale(cls, name, "the class has its own __getattribute__")
    if not _guard_passed_over(tx, cls, owner, name, _class_source(tx, cls, instance)):
        _stale(cls, name, "the classes before the store on the MRO cannot be guarded")
    own = _own_entry(tx, instance, name)
    if own is None:
        _stale(cls, name, "the instance's own entry cannot be told")
    if own is _INPUT_OWN:
        # the instance dict wins over a value without __get__; Dynamo's read takes it from there
        # unless the class it reads (as it was) has a data descriptor of that name
        real = static_lookup(cls, name)
        if real is not MISSING and static_lookup(type(real), "__get__") is not MISSING:
            _stale(cls, name, "the class held a descriptor of that name before the store")
        return DEFER
    return value if own is MISSING else own


@fail_safe(NAME)
def _object_hasattr(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.call_obj_hasattr(tx, name)``: True where a pending store of a
    plain value answers on the MRO (an instance entry cannot turn that False)."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    value = getattr(instance, "value", None)
    if not isinstance(name, str) or value is None:
        return DEFER
    cls = type(value)
    owner, found, touched = _lookup(tx.output.side_effects, cls, name)
    if not touched:
        return DEFER
    if (found is MISSING or not _plain(found) or static_lookup(cls, "__getattribute__") is not _OBJECT_GETATTRIBUTE
            or not _guard_passed_over(tx, cls, owner, name, _class_source(tx, cls, instance))):
        _stale(cls, name, "hasattr after a store or deletion it cannot answer exactly")
    from torch._dynamo.variables import ConstantVariable

    if instance.source is not None:
        guard_hasattr(instance.source, name)  # Dynamo's own guard (see _call_obj_hasattr)
    return ConstantVariable.create(True)


@fail_safe(NAME)
def _class_getattr(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.var_getattr`` (2.13) / ``tp_getattro_impl(tx, name)`` (2.14+):
    a read through a subclass of the class that holds the pending store (the gate sends no other)."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    cls = instance.value
    owner, value, touched = _lookup(tx.output.side_effects, cls, name)
    if not touched or (owner is cls and value is not MISSING):
        return DEFER  # the receiver's own pending store: Dynamo's load_attr answers it
    if (value is MISSING or not _plain(value) or not _standard_meta(cls, name)
            or not _guard_passed_over(tx, cls, owner, name, instance.source)):
        # Dynamo's stale read: a graph break raised here is not one (LOAD_ATTR on a class
        # catches Unsupported and reads the real class instead)
        return DEFER
    return value


def _touched(side_effects, cls, name) -> bool:
    """Cheap (it runs for every attribute read of a user object or class): does a class on
    ``cls``'s MRO hold a pending entry for ``name``? No calls but dict lookups."""
    stores = side_effects.store_attr_mutations  # keyed by tracker from 2.6 (this patch: 2.13+)
    if not stores:
        return False
    tracked = side_effects.id_to_variable
    for klass in _MRO(cls):
        vt = tracked.get(id(klass))
        if vt is not None and name in stores.get(vt, _NONE):
            return True
    return False


_NONE: dict = {}


@gate(_object_getattr)
def _object_gate(original, handle):
    def getattr_(self, tx, name):
        try:  # no pending attribute store at all (most reads): no call
            side_effects = tx.output.side_effects
            hit = bool(side_effects.store_attr_mutations) and _touched(side_effects, type(self.value), name)
        except Exception:  # noqa: BLE001 - the handler meets the same question under the fail-safe
            hit = True
        return handle(self, tx, name) if hit else original(self, tx, name)

    return getattr_


@gate(_class_getattr)
def _class_gate(original, handle):
    def getattr_(self, tx, name):
        try:  # no pending attribute store at all (most reads): no call
            side_effects = tx.output.side_effects
            value = self.value
            hit = (bool(side_effects.store_attr_mutations) and isinstance(value, type)
                   and _touched(side_effects, value, name))
        except Exception:  # noqa: BLE001 - the handler meets the same question under the fail-safe
            hit = True
        return handle(self, tx, name) if hit else original(self, tx, name)

    return getattr_


@fail_safe(NAME)
def _resolve_meta_data_descriptor(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.resolve_meta_data_descriptor(tx, name, meta_attr, source)``
    for ``name == "__dict__"`` (the gate sends nothing else)."""
    if len(args) != 4 or kwargs:
        return DEFER
    tx = args[0]
    cls = getattr(instance, "value", None)
    if not isinstance(cls, type) or not _standard_meta(cls, None):
        return DEFER
    side_effects = tx.output.side_effects
    vt = side_effects.id_to_variable.get(id(cls))
    if vt is None or not side_effects.is_attribute_mutation(vt):
        return DEFER
    stores = pending_stores(side_effects, vt)
    if not stores:
        return DEFER
    proxy = realize(wrapped(*args))  # built with its source: lazy until realized (guarded)
    real = getattr(proxy, "dv_dict", None)
    if type(proxy).__name__ != "MappingProxyVariable" or real is None:
        return proxy
    # CPython's class dict after the stores: a stored key keeps its place, a new one goes last
    # (in first-store order, as the side-effects table keeps them); a deleted one goes away.
    from torch._dynamo.variables import ConstantVariable

    items = {}
    seen = set()
    for key, value in real.items.items():
        name = key.vt.as_python_constant() if key.vt.is_python_constant() else MISSING
        if isinstance(name, str) and name in stores:
            seen.add(name)
            value = stores[name]
            if _is_deleted(value):
                continue
        items[key.vt] = value
    for name, value in stores.items():
        if name not in seen and not _is_deleted(value):
            items[ConstantVariable.create(name)] = value
    return type(proxy)(type(real)(items, source=None), source=proxy.source)


@gate(_resolve_meta_data_descriptor)
def _resolve_gate(original, handle):
    def resolve_meta_data_descriptor(self, tx, name, meta_attr, source):
        if name != "__dict__":
            return original(self, tx, name, meta_attr, source)
        return handle(self, tx, name, meta_attr, source)

    return resolve_meta_data_descriptor


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Base.w = v` in the frame, then `hasattr(Sub, "w")` (on 2.13 also `hasattr(Base, "w")`) is '
             '**False**, `"w" in Base.__dict__` is **False** and `Base.__dict__.get("w")` the default; '
             '`Sub.v`, `Sub().v`, `o.v` and `hasattr(o, "w")` after `Base.v = x` **read the class as it '
             "was**: reads of the class ignore the frame's stores",
         '2.13–2.15',
         '(`>=2.13`)'),
    ),
    fixes="`KBase.v = 5` then `KSub.v`, `KSub().v`, `o.v`, `hasattr(KSub, 'v')`, `'v' in KBase.__dict__` in the "
    "same frame read the class as it was before the store (silently wrong or AttributeError, torch 2.13+)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_obj_hasattr, var_getattr "
    "(tp_getattro_impl from 2.14), resolve_meta_data_descriptor; UserDefinedObjectVariable.var_getattr "
    "(tp_getattro_impl from 2.14), call_obj_hasattr",
    mirrors="torch 2.14: VariableTracker._hasattr_check_side_effects (the class's own pending stores); the bases "
    "and __dict__ are open upstream (UserDefinedClassVariable.ban_mutation is never set)",
    torch=">=2.13",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_obj_hasattr",
               _call_obj_hasattr, params=("tx", "name")),
        # attribute reads: var_getattr on 2.13, tp_getattro_impl from 2.14
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "var_getattr", _object_gate,
               params=("tx", "name"), optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "tp_getattro_impl",
               _object_gate, params=("tx", "name"), optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "call_obj_hasattr",
               _object_hasattr, params=("tx", "name")),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "var_getattr", _class_gate,
               params=("tx", "name"), optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "tp_getattro_impl",
               _class_gate, params=("tx", "name"), optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "resolve_meta_data_descriptor",
               _resolve_gate, params=("tx", "name", "meta_attr", "source")),
    ),
    requires=("torch._dynamo.side_effects:SideEffects.is_attribute_mutation",),
    summary="class attribute stores in the frame: reads through subclasses and instances, hasattr and "
    "cls.__dict__ see them, or the read breaks",
    history=(
        ("2.5-2.12", "not this gap: a store on a class is a graph break there (`class-setattr` accepts only "
         "stores that change nothing)"),
        ("2.13", "classes tracked for attribute mutation; `hasattr(K, v)`, `K.__dict__` and reads through a "
         "subclass or an instance ignore the frame's pending stores (silently wrong, or AttributeError in the "
         "trace)"),
        ("2.14+", "`hasattr` on the class itself fixed upstream (`_hasattr_check_side_effects`); through a "
         "subclass, `K.__dict__`, subclass and instance reads as on 2.13 (measured on 2.15.0)"),
    ),
)
