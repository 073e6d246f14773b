"""Writes to an object's attributes through its ``__dict__`` (gap 3, issue 5).

Root cause. Dynamo does not model ``obj.__dict__`` as a dictionary: for a user
object (``UserDefinedObjectVariable`` and its subclasses
``UnspecializedNNModuleVariable``, ``MutableMappingVariable`` and
``GenericContextWrappingVariable``) ``var_getattr(tx, "__dict__")`` returns
``GetAttrVariable(obj, "__dict__")``, an indirection whose ``call_method`` in
``torch/_dynamo/variables/misc.py`` (``GetAttrVariable.call_method``) only knows
the reads ``__getitem__``/``get``/``__contains__``, which it answers from the
object's attribute state (the side-effects table first, then the real object).
Every write falls through to ``VariableTracker.call_method`` and graph-breaks.
Version history: ``PATCH.history`` (rendered in docs/compatibility.md).

``vars(obj)`` is the same dictionary; before 2.9 ``BuiltinVariable`` has no
``call_vars`` at all (``Unsupported: builtin: vars``). 2.9 added
``BuiltinVariable.call_vars`` = ``obj.var_getattr(tx, "__dict__")``.

The fix, mirroring what upstream 2.7 does for ``__setitem__``: a write to key
``k`` of the ``__dict__`` of a tracked user object is an attribute store of
``k`` on that object (``SideEffects.store_attr``; a deletion stores
``DeletedVariable``), because the instance dictionary *is* the attribute
storage. Dynamo's own reads (``obj.k``, ``obj.__dict__[k]``, ``k in
obj.__dict__``, and ``nn.Module.__getattr__`` consulting a replaced
``_parameters``/``_buffers``/``_modules``) already look in the side-effects
table first, and after the frame Dynamo replays the stores with
``object.__setattr__`` (bypassing ``nn.Module.__setattr__``), which for a key
without a data descriptor on the class is exactly a ``__dict__`` write.

Related registry entries (the installer cannot revert two entries that wrap
one method independently, so each owns its own methods):

* ``instance-dict-writes`` (this module, torch <2.12) wraps
  ``GetAttrVariable.call_method`` on ``GetAttrVariable(<user object>, "__dict__")``:
  - writes: ``__setitem__``, ``update``, ``setdefault``, ``pop`` and
    ``__delitem__``. Where Dynamo handles ``__setitem__`` itself
    (``method_setattr_standard`` has ``directly_update_dict``: 2.7 on) that call
    is left to Dynamo, and the other writes store through that same method, as
    upstream's ``__setitem__`` does.
  - reads: ``__getitem__``, ``get`` and ``__contains__``. Dynamo answers them
    with ``has_key_in_generic_dict`` (no guard: a key added to or removed from
    an input object's ``__dict__`` between calls reuses stale code) and
    ``obj.var_getattr(tx, key)`` (for a key a property or other data descriptor
    of the class shadows, that is the descriptor's value, not the dictionary's).
    The reads here guard the presence test (``DICT_CONTAINS``) and read a
    shadowed key from the dictionary item itself. ``setdefault``/``pop`` of a
    present key read the same way.
* ``mapping-dunder-dict`` (``mapping_dunder_dict.py``, 2.6-2.11): an input
  ``MutableMapping``'s ``m.__dict__`` is that same ``GetAttrVariable`` view
  instead of a stale ``ConstDictVariable`` copy.
* ``instance-dict-vars`` (``instance_dict_vars.py``, torch <2.9): ``vars(<user
  object>)`` returns what 2.9's ``BuiltinVariable.call_vars`` returns.

Modules (``nn.Module.__setattr__``'s ``remove_from``: ``del self.__dict__[name]`` before
registering a parameter, buffer or submodule under that name): Dynamo replays the
deletion of an input module as ``del m.name`` *after* the ``_modules``/``_parameters``
update, and ``nn.Module.__delattr__`` then deletes the new entry. The deletion is
recorded only where it replays right (:func:`tdcompat.instance_dict.order_module_deletion`: the module's
mutations are moved to replay before its bookkeeping dicts', ``name`` guarded absent
from them on entry; a module made in the frame has nothing to replay); a later
``m.name`` going through ``__getattr__`` is ``module-deleted-attr``'s. Any other
class ``__delattr__`` graph-breaks.

Writes under a name a data descriptor of the class shares (a property backed by the
instance dict: its setter writes ``self.__dict__[name]``). CPython writes the dict and
leaves the descriptor alone; a later ``obj.name`` runs the descriptor. Dynamo 2.8-2.11
replays such a write as a ``__dict__`` write (``object_setattr_ignore_descriptor``) but
answers ``obj.name`` from its record; 2.5-2.7 replay it as ``obj.name = v``, through the
setter (``RecursionError`` for a setter that writes the dict, its effect twice for
another). Accepted: on 2.8-2.11 any such write; on 2.5-2.7 one on a plain user object
(exact ``UserDefinedObjectVariable``) under an exact ``property`` of its class while
``property-setattr`` traces ``obj.name = v`` through the setter (so the record's entry
under that name can only be a ``__dict__`` write; the replay also checks the value's
identity against the writes noted, :func:`tdcompat.instance_dict.note_dict_write`).
There the object's whole record is replayed after Dynamo's replay
(:func:`_codegen_update_mutated`): each entry as Dynamo emits it (``object.__setattr__``,
``delattr``) except the noted ``__dict__`` writes, which are
``object.__getattribute__(obj, "__dict__")[name] = v``, in the record's order, with
values built before any store. A later ``obj.name`` (``BuiltinVariable.call_getattr``)
traces the property's getter where it is a Python function (:func:`_trace_property`),
else graph-breaks. Slots, other descriptors and property subclasses, deletions of such
a name, and ``getattr(obj, name, default)`` graph-break.

Keys that are not a ``str`` (``o.__dict__[1] = v``, ``vars(o)[2.5]``): CPython's instance
dict takes any hashable key through the mapping API; Dynamo records the write as an
attribute store that ``STORE_ATTR`` cannot replay (``non-str-attr-store`` breaks there).
Accepted on a plain user object made in the frame (exact ``UserDefinedObjectVariable``:
its whole instance dict is Dynamo's record, nothing to guard) for a key whose hash and
``==`` are pure functions of its value (``None``, ``bool``, ``int``, ``bytes``, non-NaN
``float``, tuples of them: :func:`tdcompat.instance_dict.item_key`), so that the record,
a Python dict, files them as CPython's dict does (``1``/``True``/``1.0`` one entry). Every
item method above takes them; the object's record is replayed by
:func:`_codegen_update_mutated` as above, the non-str keys as ``__dict__`` writes, the
other entries as Dynamo would. Objects passed in, NaN, ``str`` subclasses and user
objects as keys: a graph break.

Everything else defers to Dynamo: other receivers (class ``__dict__``,
specialized ``NNModuleVariable``, frozen dataclasses, ...), non-constant keys,
``update`` from anything but a dict display/kwargs, and objects with a custom
``__getattribute__``. A missing key in ``pop`` without
default or ``del`` graph-breaks instead of emulating ``KeyError``. Decisions on
whether a key is present in an input object's ``__dict__`` are guarded
(``DICT_CONTAINS`` on ``obj.__dict__``).
"""

from __future__ import annotations

import builtins

from ..dynamo_api import (
    LAZY_MODULE,
    MISSING,
    bind_args,
    const_str,
    is_data_descriptor,
    peek,
    realize,
    shadows_instance_dict,
)
from ..instance_dict import (
    ANY_DICT_WRITE,
    dict_write_replay_plan,
    dict_written_names,
    instance_dict_receiver_types,
    item_key,
    note_dict_write,
    readd_tracker,
    record_key,
)
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

_WRITES = frozenset(("__setitem__", "update", "setdefault", "pop", "__delitem__"))
_READS = frozenset(("__getitem__", "get", "__contains__"))

_cache: dict = {}


def _native_setitem() -> bool:
    """True when Dynamo itself handles ``obj.__dict__[k] = v`` (2.7 on)."""
    native = _cache.get("native_setitem")
    if native is None:
        import inspect

        from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

        params = inspect.signature(UserDefinedObjectVariable.method_setattr_standard).parameters
        native = _cache["native_setitem"] = "directly_update_dict" in params
    return native


def _guard_contains(tx, obj, key, present) -> None:
    """Guard that ``key in obj.__dict__`` stays ``present`` (input objects only)."""
    source = getattr(obj, "source", None)
    if source is None or tx.output.side_effects.has_pending_mutation_of_attr(obj, key):
        return
    from torch._dynamo.source import AttrSource

    from ..dynamo_api import guard_dict_contains

    guard_dict_contains(AttrSource(source, "__dict__"), key, present)


def _has_key(tx, obj, key) -> bool:
    present = bool(obj.has_key_in_generic_dict(tx, key))
    _guard_contains(tx, obj, key, present)
    return present


def _replay_ignores_descriptor() -> bool:
    """Only where a ``__dict__`` store replays past a data descriptor (2.8-2.12; the patch ends at 2.11).

    There Dynamo replays a store made through ``obj.__dict__`` (``method_setattr_standard(...,
    directly_update_dict=True)``) with ``utils.object_setattr_ignore_descriptor``, a ``__dict__``
    write that leaves a data descriptor alone (``should_skip_descriptor_setter``). 2.7 replays it
    with ``setattr``, which would run a property's setter."""
    ignores = _cache.get("replay_ignores_descriptor")
    if ignores is None:
        from torch._dynamo import utils
        from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

        ignores = _cache["replay_ignores_descriptor"] = (
            _native_setitem() and hasattr(utils, "object_setattr_ignore_descriptor")
            and hasattr(UserDefinedObjectVariable, "should_skip_descriptor_setter"))
    return ignores


def _own_replay(obj, key) -> bool:
    """Before 2.8: is a write of ``key`` (a name a data descriptor of the class shares) into this
    object's ``__dict__`` replayed by this patch as a ``__dict__`` write (:func:`_codegen_update_mutated`)?
    For a plain user object (exact ``UserDefinedObjectVariable``) whose class has an exact ``property``
    there, while ``property-setattr`` is in place: it traces ``obj.key = v`` through the setter, so every
    entry the record holds under ``key`` is a ``__dict__`` write (the replay also checks each value's
    identity). Slots and other descriptors, whose own stores the record would hold under the same name,
    are not taken."""
    from torch._dynamo.variables import UserDefinedObjectVariable

    from ..dynamo_api import static_lookup
    from ..installer import is_installed

    return (not _replay_ignores_descriptor() and type(obj) is UserDefinedObjectVariable
            and type(static_lookup(type(obj.value), key)) is property and is_installed("property-setattr"))


def _check_key(tx, obj, key, deleting: bool = False) -> bool:
    """A write (or deletion) of a key a data descriptor of the class shares: the replay must
    not go through the descriptor. A write compiles where it is replayed as a ``__dict__``
    write (Dynamo's on 2.8-2.11, this patch's on 2.5-2.7: :func:`_own_replay`; a later ``obj.key``
    is then traced through the property or graph-breaks in :func:`_shadowed_read`); a deletion
    (replayed as ``del obj.key``) and any other write graph-break. True when the write is one
    a data descriptor shadows (the caller notes it)."""
    if is_data_descriptor(type(obj.value), key):
        if not deleting and (_replay_ignores_descriptor() or _own_replay(obj, key)):
            return True
        from ..dynamo_api import graph_break

        graph_break(
            "__dict__ write shadowed by a data descriptor",
            f"{obj}.__dict__[{key!r}]",
            f"{type(obj.value).__qualname__}.{key} is a data descriptor; tdcompat does not model "
            "instance-dict writes that the descriptor hides",
        )
    return False


def _check_delete(tx, obj, key) -> None:
    """Dynamo replays a deletion as ``del obj.key``: only equal to ``del obj.__dict__[key]``
    when ``__delattr__`` is object's, or ``nn.Module.__delattr__`` on a module tracker under the
    conditions of :func:`tdcompat.instance_dict.order_module_deletion`. Anything else graph-breaks."""
    import inspect

    from ..dynamo_api import graph_break, module_tracker_types
    from ..instance_dict import deletion_replays_as_recorded

    value = obj.value
    plain = inspect.getattr_static(type(value), "__delattr__", None) is object.__delattr__
    if (plain or type(obj) in module_tracker_types()) and deletion_replays_as_recorded(tx, obj, key):
        return
    graph_break(
        "__dict__ deletion on an object with a custom __delattr__",
        f"del {obj}.__dict__[{key!r}]",
        f"{type(value).__qualname__}.__delattr__ would run when Dynamo replays the deletion",
    )


def _store(tx, obj, key, value) -> None:
    """``obj.__dict__[key] = value`` as an attribute store (value may be DeletedVariable)."""
    from torch._dynamo import variables

    from ..dynamo_api import graph_break

    shadowed = _check_key(tx, obj, key, deleting=isinstance(value, variables.DeletedVariable))
    side_effects = tx.output.side_effects
    # A sourced object missing from the side-effects table (an input MutableMapping
    # on 2.6-2.8 without mutable-mapping-setattr) would have its stores dropped.
    if not side_effects.is_attribute_mutation(obj) or (obj.source is not None and obj.value not in side_effects):
        graph_break("__dict__ write on an untracked object", f"{obj}.__dict__[{key!r}]",
                    "Dynamo does not track attribute mutations of this object")
    if isinstance(value, variables.DeletedVariable):
        from ..instance_dict import guard_deletion_replay, refuse_deletion_under_class_attribute

        refuse_deletion_under_class_attribute(tx, obj, key)
        guard_deletion_replay(tx, obj, key)
    effects_begin()
    if shadowed or type(key) is not str:  # replayed by _codegen_update_mutated
        note_dict_write(obj, key, value)
    if _native_setitem():
        obj.method_setattr_standard(tx, variables.ConstantVariable.create(key), value, directly_update_dict=True)
    else:
        side_effects.store_attr(obj, key, value)


def _read(tx, obj, key):
    """``obj.__dict__[key]`` for a present key: the instance dictionary's value.

    Dynamo's own read path (``obj.var_getattr(tx, key)``) is right for a key no
    data descriptor of the class shadows on a user object; for one that is shadowed
    (a property named like an instance key) it would return what the descriptor
    returns, and for a module it can answer another object (2.8/2.9: an empty hook
    ``OrderedDict`` as a plain ``{}``), so read the dictionary item itself: a value
    written in this frame, or the real ``obj.__dict__[key]`` under its own source
    (:func:`tdcompat.instance_dict.instance_dict_item`).
    """
    effects_begin()  # may inline user code (__getattr__) or install guards
    side_effects = tx.output.side_effects
    if side_effects.has_pending_mutation_of_attr(obj, key):
        return side_effects.load_attr(obj, key)
    from ..instance_dict import instance_dict_item

    return instance_dict_item(tx, obj, key)


def _handle_read(tx, obj, name, call_args, call_kwargs):
    """``__getitem__``/``get``/``__contains__``: Dynamo answers these (2.5-2.11) with
    an unguarded presence test and ``var_getattr``; answer from the instance
    dictionary, guarded. Returns DEFER for shapes it does not model."""
    from torch._dynamo import variables

    if call_kwargs or not call_args:
        return DEFER
    key = item_key(obj, call_args[0])
    if key is MISSING:
        return DEFER
    if name == "__contains__":
        if len(call_args) != 1:
            return DEFER
        return variables.ConstantVariable.create(_has_key(tx, obj, key))
    if len(call_args) > (2 if name == "get" else 1):
        return DEFER
    if _has_key(tx, obj, key):
        return _read(tx, obj, key)
    if name == "get":
        return call_args[1] if len(call_args) == 2 else variables.ConstantVariable.create(None)
    _missing_key(tx, obj, name, key)


def _missing_key(tx, obj, name, key):
    """Eager raises ``KeyError``: so does the trace (the key's absence is guarded by ``_has_key``;
    a graph break where this torch cannot raise it inside the trace)."""
    from ..dynamo_api import raise_observed

    effects_begin()
    raise_observed(KeyError, tx, f"{obj}.__dict__.{name}({key!r})")


def _update_items(tx, obj, args, kwargs):
    """[(key, value VT)] for ``update(mapping_display, **kwargs)``, or None."""
    from torch._dynamo import variables

    items = []
    if len(args) > 1:
        return None
    if args:
        other = realize(args[0])
        if type(other) is not variables.ConstDictVariable:
            return None
        for hashable, value in other.items.items():
            key = item_key(obj, getattr(hashable, "vt", hashable))
            if key is MISSING:
                return None
            items.append((key, value))
    for key, value in kwargs.items():
        items.append((key, value))
    return items


@fail_safe("instance-dict-writes")
def _dict_call_method(wrapped, instance, args, kwargs):
    if getattr(instance, "name", None) != "__dict__":
        return DEFER
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if name not in _WRITES and name not in _READS:
        return DEFER
    obj = instance.obj
    if type(obj) not in instance_dict_receiver_types():
        return DEFER
    if name == "__setitem__" and _native_setitem():
        # Dynamo's own __setitem__ (2.7+) records a store that a later `obj.key` returns even where
        # a data descriptor (a property) wins in CPython (silently wrong on 2.8-2.11): that read
        # graph-breaks (_shadowed_read); 2.7 would replay the write through the descriptor.
        key = item_key(obj, call_args[0]) if len(call_args) == 2 and not call_kwargs else MISSING
        if key is MISSING or (type(key) is str and not is_data_descriptor(type(obj.value), key)):
            return DEFER
        if type(key) is str:
            if _check_key(tx, obj, key):
                note_dict_write(obj, key, call_args[1])  # the tracker Dynamo's own __setitem__ records
            return DEFER
        # A key that is not a str: recorded below, replayed by _codegen_update_mutated.
    from torch._dynamo import variables
    from torch._dynamo.side_effects import SideEffects

    if not SideEffects.cls_supports_mutation_side_effects(type(obj.value)):
        return DEFER
    call_args = list(call_args)
    call_kwargs = dict(call_kwargs or {})
    if name in _READS:
        return _handle_read(tx, obj, name, call_args, call_kwargs)
    none = variables.ConstantVariable.create(None)

    if name == "update":
        items = _update_items(tx, obj, call_args, call_kwargs)
        if items is None:
            return DEFER
        for key, value in items:
            _store(tx, obj, key, value)
        return none

    if call_kwargs or not call_args:
        return DEFER
    key = item_key(obj, call_args[0])
    if key is MISSING:
        return DEFER

    if name == "__setitem__":
        if len(call_args) != 2:
            return DEFER
        _store(tx, obj, key, call_args[1])
        return none
    if name == "__delitem__":
        if len(call_args) != 1:
            return DEFER
        if not _has_key(tx, obj, key):
            _missing_key(tx, obj, name, key)
        _check_delete(tx, obj, key)
        _store(tx, obj, key, variables.DeletedVariable())
        return none
    if name == "setdefault":
        if len(call_args) > 2:
            return DEFER
        if _has_key(tx, obj, key):
            return _read(tx, obj, key)
        default = call_args[1] if len(call_args) == 2 else none
        _store(tx, obj, key, default)
        return default
    if name == "pop":
        if len(call_args) > 2:
            return DEFER
        if _has_key(tx, obj, key):
            _check_key(tx, obj, key, deleting=True)
            _check_delete(tx, obj, key)
            value = _read(tx, obj, key)
            _store(tx, obj, key, variables.DeletedVariable())
            return value
        if len(call_args) == 2:
            return call_args[1]
        _missing_key(tx, obj, name, key)
    return DEFER



@fail_safe("instance-dict-writes")
def _shadowed_read(wrapped, instance, args, kwargs):
    """``obj.key`` after ``obj.__dict__[key] = v`` in the frame, for a key a data descriptor
    (a property) of the class shares: CPython calls the descriptor, Dynamo 2.8-2.11 returns
    ``v`` from the side-effects table (``call_getattr``'s pending-mutation shortcut; silently
    wrong). A descriptor without ``__get__`` does not answer reads (CPython reads the instance
    dict, which is what Dynamo returns): deferred (upstream ``MiscTests::test_set_descriptor``
    passes natively on 2.10 and broke here).

    A plain ``property`` whose getter is a Python function is traced as CPython runs it:
    ``type(obj).key.fget(obj)`` (:func:`_trace_property`); a getter that reads
    ``self.__dict__[key]`` then sees the pending write. Anything else (other descriptors, a
    ``getattr`` default, a class or metaclass with its own attribute lookup) graph-breaks: by
    then the write has been replayed into ``__dict__`` and the read runs for real."""
    if kwargs or len(args) not in (3, 4):
        return DEFER
    tx, obj, name_var = args[:3]
    obj = realize(obj)
    _refuse_non_str_name(tx, obj, name_var, "getattr")
    name = const_str(name_var)
    if (name is None or name not in _direct_writes(obj)
            or not shadows_instance_dict(type(obj.value), name)
            or not tx.output.side_effects.has_pending_mutation_of_attr(obj, name)):
        return DEFER
    if len(args) == 3:
        traced = _trace_property(tx, obj, name)
        if traced is not None:
            return traced
    from ..dynamo_api import graph_break

    graph_break("read of an attribute a data descriptor shadows after a __dict__ write", f"{obj}.{name}",
                f"{type(obj.value).__qualname__}.{name} is a data descriptor: CPython calls it, "
                "Dynamo would return what was written to the instance dictionary")


def _refuse_non_str_name(tx, obj, name_var, builtin: str) -> None:
    """``getattr(obj, k)`` / ``hasattr(obj, k)`` with a constant ``k`` that is not a ``str``: CPython raises
    ``TypeError`` (attribute name must be string). Where this patch recorded non-str ``__dict__`` keys of
    ``obj`` Dynamo finds ``k`` in its record and answers the item (2.7-2.11 measured; 2.5.1 too for an
    object made in the frame: fresh fuzz seed 486679057, four programs): raised in the trace instead (a
    graph break where this torch cannot raise a ``TypeError``: 2.5-2.8). Other receivers: Dynamo's own
    answer."""
    try:
        if not name_var.is_python_constant():
            return
        name = name_var.as_python_constant()
    except Exception:  # noqa: BLE001 - not a constant after all
        return
    if type(name) is str or not any(type(key) is not str for key in dict_written_names(obj)):
        return
    from ..dynamo_api import raise_observed

    effects_begin()
    raise_observed(TypeError, tx, f"{builtin}({obj}, {name!r})",
                   f"attribute name must be string, not '{type(name).__name__}'")


@fail_safe("instance-dict-writes")
def _hasattr(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_hasattr(tx, obj, attr)``: see :func:`_refuse_non_str_name`."""
    if kwargs or len(args) != 3:
        return DEFER
    tx, obj, attr = args
    _refuse_non_str_name(tx, realize(obj), attr, "hasattr")
    return DEFER


@gate(_hasattr)
def _hasattr_gate(original, handle):
    """What is installed on ``BuiltinVariable.call_hasattr``: while no ``__dict__`` write was noted
    (:data:`tdcompat.instance_dict.ANY_DICT_WRITE`), the call goes straight to Dynamo after one dict test."""

    def call_hasattr(self, tx, obj, attr):
        if not ANY_DICT_WRITE:
            return original(self, tx, obj, attr)
        return handle(self, tx, obj, attr)

    return call_hasattr


def _trace_property(tx, obj, name):
    """``type(obj).name.fget(obj)`` traced, or None where that is not what CPython runs.

    Accepted: ``type(obj)`` (no ``__getattribute__`` of its own) finds ``name`` on its MRO as an
    exact ``property`` whose ``fget`` is a Python function, the metaclass neither defines
    ``name`` nor its own ``__getattribute__``, and the class has a guarded source
    (``cls_source``: ``TYPE_MATCH`` of an input, ``ID_MATCH`` of the class an object made in the
    frame came from). A data descriptor on the class wins over the instance dictionary, so
    ``obj.name`` is ``property.__get__(obj, type(obj))`` = ``fget(obj)``. Guarded: the class
    attribute stays an exact ``property`` (``TYPE_MATCH``) with the same getter (the getter is
    built from its source: ``FUNCTION_MATCH``)."""
    import inspect
    import types

    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource
    from torch._dynamo.variables.builder import VariableBuilder

    from ..dynamo_api import MISSING, static_lookup

    cls = type(obj.value)
    meta = type(cls)
    cls_source = getattr(obj, "cls_source", None)
    if cls_source is None and getattr(obj, "source", None) is not None and not _replay_ignores_descriptor():
        from torch._dynamo.source import TypeSource  # 2.5-2.7 keep no cls_source for an input

        cls_source = TypeSource(obj.source)
    attr = static_lookup(cls, name)
    if (cls_source is None or type(attr) is not property or type(attr.fget) is not types.FunctionType
            or inspect.getattr_static(cls, "__getattribute__") is not object.__getattribute__
            or inspect.getattr_static(meta, "__getattribute__") is not type.__getattribute__
            or static_lookup(meta, name) is not MISSING):
        return None
    effects_begin()
    attr_source = AttrSource(cls_source, name)
    install_guard(attr_source.make_guard(GuardBuilder.TYPE_MATCH))
    fget = VariableBuilder(tx, AttrSource(attr_source, "fget"))(attr.fget)
    return fget.call_function(tx, [obj], {})


def _direct_writes(obj):
    """The names the frame wrote through ``obj.__dict__``: Dynamo's own record from 2.8
    (``attrs_directly_modifed_on_dict``), this patch's before (:func:`tdcompat.instance_dict.note_dict_write`)."""
    if _replay_ignores_descriptor():
        return obj.attrs_directly_modifed_on_dict
    return dict_written_names(obj)


@gate(_shadowed_read)
def _shadowed_read_gate(original, handle):
    """``BuiltinVariable.call_getattr`` (every ``LOAD_ATTR``): a receiver with no store made
    through its ``__dict__`` in this frame (nearly all of them) goes straight to Dynamo, after
    attribute reads only (a lazy tracker not realized yet has had no such store). Before 2.8
    one dict truth test: no write a data descriptor shadows was noted in this process yet."""
    if not _replay_ignores_descriptor():
        def call_getattr_before_2_8(self, tx, obj, name_var, default=None):
            if not ANY_DICT_WRITE:
                return original(self, tx, obj, name_var, default)
            if default is None:  # as Dynamo called it
                return handle(self, tx, obj, name_var)
            return handle(self, tx, obj, name_var, default)

        return call_getattr_before_2_8

    def call_getattr(self, tx, obj, name_var, default=None):
        try:
            seen = obj
            if type(seen).__module__ == LAZY_MODULE:
                seen = peek(seen)[0]  # the realized tracker, or None: not realized, so no store yet
            other = seen is None or not seen.attrs_directly_modifed_on_dict  # (sic) 2.7 on
        except Exception:  # noqa: BLE001 - not a user object (no such set), or an odd call
            other = True
        if other:
            return original(self, tx, obj, name_var, default)
        if default is None:  # as Dynamo called it
            return handle(self, tx, obj, name_var)
        return handle(self, tx, obj, name_var, default)

    return call_getattr


def _emit_replay(cg, var, plan, temps) -> None:
    """The statements replaying ``plan`` on ``var`` (each value already in its local), as CPython
    builtins called from the compiled code (no Python frame of tdcompat's that Dynamo could trace)."""
    from torch._dynamo.bytecode_transformation import create_call_function, create_instruction

    from ..instance_dict import DEL_ATTR, SET_ITEM

    source = getattr(var, "source", None) or getattr(getattr(var, "mutable_local", None), "source", None)

    def load_builtin(*path):
        cg.add_push_null(lambda: cg.extend_output(
            [cg.create_load_python_module(builtins), *(cg.create_load_attr(name) for name in path)]))

    values = iter(temps)
    for op, key, _value in plan:
        if op == SET_ITEM:  # object.__getattribute__(obj, "__dict__")[key] = value
            cg.extend_output([create_instruction("LOAD_FAST", argval=next(values))])
            load_builtin("object", "__getattribute__")
            cg(source)
            cg.extend_output([cg.create_load_const("__dict__"), *create_call_function(2, False),
                              cg.create_load_const(key), create_instruction("STORE_SUBSCR")])
        elif op == DEL_ATTR:  # delattr(obj, key)
            load_builtin("delattr")
            cg(source)
            cg.extend_output([cg.create_load_const(key), *create_call_function(2, False),
                              create_instruction("POP_TOP")])
        else:  # object.__setattr__(obj, key, value)
            load_builtin("object", "__setattr__")
            cg(source)
            cg.extend_output([cg.create_load_const(key), create_instruction("LOAD_FAST", argval=next(values)),
                              *create_call_function(3, False), create_instruction("POP_TOP")])


@fail_safe("instance-dict-writes")
def _codegen_update_mutated(wrapped, instance, args, kwargs):
    """``SideEffects.codegen_update_mutated(cg)``: an object whose record holds a write the frame made
    through its ``__dict__`` of a key that is not a ``str``, or before 2.8 under a name a property shares
    (:func:`_own_replay`), is replayed here, whole and in its order
    (:func:`tdcompat.instance_dict.dict_write_replay_plan`), after Dynamo's replay of everything else: its
    values are built into new locals first (as Dynamo builds every value before its first store), its
    record is hidden from Dynamo's replay, then each entry is written with
    ``object.__getattribute__(obj, "__dict__")[k] = v``, ``object.__setattr__`` or ``delattr``."""
    if not ANY_DICT_WRITE or not args:
        return DEFER
    cg = args[0]
    plans = [(var, plan) for var in list(instance.id_to_variable.values())
             if instance.is_attribute_mutation(var)
             for plan in (dict_write_replay_plan(instance, var),) if plan]
    if not plans:
        return DEFER
    from torch._dynamo.bytecode_transformation import create_instruction

    effects_begin()
    temps = []
    for _var, plan in plans:
        temps.append([])
        for _op, _key, value in plan:
            if value is not None:
                cg(value)
                temps[-1].append(cg.tx.output.new_var())
                cg.extend_output([create_instruction("STORE_FAST", argval=temps[-1][-1])])
    table = instance.store_attr_mutations
    hidden = [(key, table[key]) for key in (record_key(instance, var) for var, _plan in plans)]
    for key, _record in hidden:
        table[key] = {}
    try:
        result = wrapped(*args, **kwargs)
    finally:
        for key, record in hidden:
            table[key] = record
    for (var, plan), values in zip(plans, temps):
        _emit_replay(cg, var, plan, values)
    return result


PATCH = Patch(
    name="instance-dict-writes",
    symptoms=(
        ('`Unsupported: call_method GetAttrVariable(..., __dict__) __setitem__ ...` '
             '(`self.__dict__["_parameters"] = ...`), `__dict__.update/setdefault/pop`, `del '
             'obj.__dict__[k]`',
         '2.5–2.11 (item assignment: 2.5–2.6)',
         '(`<2.12`)'),
        ("`o.__dict__[k]` / `.get(k)` **silently returns a property's value** where a property "
             "shares the instance key; `k in o.__dict__` **reuses the first call's answer**",
         '2.5–2.11',
         ''),
        ('`o.v` after `o.__dict__["v"] = ...` (or a property setter that writes it) where `v` is a '
             'property: `InternalTorchDynamoError` (RecursionError) on an input, **silently the written '
             'value** on an object made in the frame (2.8-2.11); a graph break or `RecursionError` (2.5-2.7)',
         '2.5–2.11',
         ''),
        ('`o.__dict__[1] = v` / `vars(o)[2.5] = v` (a key that is not a `str`) on an object made in the frame: '
             'a graph break (`Unsupported`, or `TypeError: name tuples must contain only strings` without '
             'tdcompat on 2.7-2.11 without `fullgraph`)',
         '2.5–2.11',
         ''),
    ),
    fixes=(
        "Unsupported: call_method GetAttrVariable(..., __dict__) __setitem__/update/setdefault/pop/__delitem__ "
        "(e.g. TensorDictParams.__init__: self.__dict__['_parameters'] = ...)"
    ),
    upstream="torch/_dynamo/variables/misc.py: GetAttrVariable.call_method",
    mirrors="pytorch/pytorch#144419 (fixes #143756; __setitem__ only, 2.7), #174570/#174941 (DunderDictVariable, 2.12)",
    torch="<2.12",  # measured: 2.11.0 fails, 2.12.1 passes natively
    fixed_upstream="2.12: DunderDictVariable (pytorch/pytorch#174570, #174941)",
    # A module's `del m.__dict__[k]` (remove_from) recorded here, then `hasattr(m, k)`, would be
    # silently False without the read through __getattr__.
    needs=("module-deleted-attr",),
    targets=(
        Target("torch._dynamo.variables.misc", "GetAttrVariable", "call_method", _dict_call_method,
               params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_getattr", _shadowed_read_gate,
               params=("tx", "obj", "name_var")),
        # hasattr(obj, k) with k not a str where obj's record holds such keys: TypeError, as CPython.
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_hasattr", _hasattr_gate,
               params=("tx", "obj", "attr")),
        # A __dict__ write of a key that is not a str, and before 2.8 one under a property's name, is
        # replayed here as a __dict__ write.
        Target("torch._dynamo.side_effects", "SideEffects", "codegen_update_mutated", _codegen_update_mutated,
               params=("cg",)),
        # `del o.__dict__[k]` then `o.__dict__[k] = v` (or update/setdefault) on an object passed in
        # would replay the store into k's old place (CPython: last): the shared re-store handler
        # reorders or graph-breaks (without it, tdcompat's deletion turned a break into a wrong order).
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", readd_tracker(),
               params=("item", "name", "value")),
    ),
    requires=(
        "torch._dynamo.side_effects:SideEffects.store_attr",
        "torch._dynamo.side_effects:SideEffects.is_attribute_mutation",
        "torch._dynamo.side_effects:SideEffects.has_pending_mutation_of_attr",
        "torch._dynamo.side_effects:SideEffects.cls_supports_mutation_side_effects",
        "torch._dynamo.variables.user_defined:UserDefinedObjectVariable.has_key_in_generic_dict",
        "torch._dynamo.variables.user_defined:UserDefinedObjectVariable.method_setattr_standard",
        "torch._dynamo.variables:DeletedVariable",
        "torch._dynamo.guards:GuardBuilder.DICT_CONTAINS",
        "torch._dynamo.source:AttrSource",
        "torch._dynamo.variables.builder:VariableBuilder",
        "torch._dynamo.side_effects:SideEffects.load_attr",
    ),
    summary="obj.__dict__ item assignment (<2.7), update/setdefault/pop/del (<2.12) on user objects, modules "
    "(remove_from), mappings, context managers",
    history=(
        ("2.5-2.6",
         "every write through `obj.__dict__` of a user object (`__setitem__`, `update`, `setdefault`, `pop`, "
         "`__delitem__`) is `Unsupported: call_method GetAttrVariable(..., __dict__) __setitem__ ...`: "
         "documented cell 3 (issue 5) stops here on 2.5.1 + tensordict 0.6.2 (`TensorDictParams.__init__`: "
         "`self.__dict__['_parameters'] = ...`; `TensorDictBase._lock_parents_weakrefs`), on objects made by "
         "`td.to_module` (`copy()` -> `clone()`) that Dynamo tracks as `GenericContextWrappingVariable` (they "
         "have `__enter__`/`__exit__`). 2.6's `MutableMappingVariable.var_getattr` returns a `ConstDictVariable` "
         "for an input mapping's `__dict__`, so mappings passed in do not break there (that copy is stale: "
         "`mapping-dunder-dict`). Reads (`[k]`, `get`, `in`): a property's value where a property shares the "
         "key, and no guard on the key (silently wrong)"),
        ("2.7-2.11",
         "`__setitem__` traces (pytorch/pytorch#144419, fixing #143756: "
         "`UserDefinedObjectVariable.method_setattr_standard(..., directly_update_dict=True)`); `update`, "
         "`setdefault`, `pop` and `__delitem__` still break (`Unsupported method call`; #107054 closed "
         "`setdefault` as won't-fix). Reads as on 2.5-2.6 (silently wrong). A write under a property's name "
         "(`self.__dict__['p'] = v` in `p`'s setter): 2.7 replays it through the setter (`RecursionError`); "
         "2.8-2.11 replay it as a `__dict__` write but answer a later `obj.p` with the written value "
         "(silently wrong on an object made in the frame). A key that is not a `str` (`o.__dict__[1] = v`): "
         "`TypeError: name tuples must contain only strings` at the replay (`InternalTorchDynamoError`, without "
         "`fullgraph`)"),
        ("2.12+",
         "fixed upstream: `__dict__` is a real dictionary backed by the side-effects table "
         "(`DunderDictVariable`, pytorch/pytorch#174570, #174941; measured on 2.12.1, first thought to be 2.13): "
         "nothing to patch"),
    ),
)
