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

Left open (with and without tdcompat): a proxy taken before the store and read after it
(``d = K.__dict__; K.w = 1; "w" in d``) shows the class as it was; a graph break cannot be raised
from a class attribute read (``BuiltinVariable.call_getattr`` constant-folds the real
``getattr(cls, name)`` on ``Unsupported``), so ``KBase.v = 5; KSub.v`` stays Dynamo's (an
``AttributeError`` in the trace: a graph break, wrong only inside ``try: ... except AttributeError``).
"""

from __future__ import annotations

from ..dynamo_api import MISSING, pending_stores, realize, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate

NAME = "class-stored-attrs"

_TYPE_GETATTRIBUTE = type.__dict__["__getattribute__"]
_TYPE_SETATTR = type.__dict__["__setattr__"]


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
    if not isinstance(cls, type) or not isinstance(name, str) or not _standard_meta(cls, name):
        return DEFER
    side_effects = tx.output.side_effects
    for klass in cls.__mro__:
        value = _pending(side_effects, klass, name)
        if value is MISSING:
            continue
        if _is_deleted(value):
            return DEFER
        from torch._dynamo.variables import ConstantVariable

        return ConstantVariable.create(True)
    return DEFER


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
    fixes="`KBase.v = 5` then `KSub.v`, `hasattr(KSub, 'v')`, `'v' in KBase.__dict__` in the same frame read "
    "the class as it was before the store (silently wrong or AttributeError, torch 2.13+)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_obj_hasattr, var_getattr "
    "(tp_getattro_impl from 2.14), resolve_meta_data_descriptor",
    mirrors="torch 2.14: VariableTracker._hasattr_check_side_effects (the class's own pending stores); the bases "
    "and __dict__ are open upstream (UserDefinedClassVariable.ban_mutation is never set)",
    torch=">=2.13",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_obj_hasattr",
               _call_obj_hasattr, params=("tx", "name")),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "resolve_meta_data_descriptor",
               _resolve_gate, params=("tx", "name", "meta_attr", "source")),
    ),
    requires=("torch._dynamo.side_effects:SideEffects.is_attribute_mutation",),
    summary="class attribute stores in the frame: hasattr on the MRO answers them, other stale reads break",
    history=(
        ("2.5-2.12", "not this gap: a store on a class is a graph break there (`class-setattr` accepts only "
         "stores that change nothing)"),
        ("2.13", "classes tracked for attribute mutation; `hasattr(K, v)`, `K.__dict__` and reads through a "
         "subclass ignore the frame's pending stores (silently wrong, or AttributeError in the trace)"),
        ("2.14+", "`hasattr` on the class itself fixed upstream (`_hasattr_check_side_effects`); through a "
         "subclass, `K.__dict__` and subclass reads as on 2.13 (measured on 2.15.0)"),
    ),
)
