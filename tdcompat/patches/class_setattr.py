"""``cls.name = value`` that leaves the class as it is compiles (torch 2.5-2.12).

Root cause: before 2.13 Dynamo does not track classes for attribute mutation, so
``BuiltinVariable.call_setattr`` (torch/_dynamo/variables/builtin.py) has no branch
for a ``UserDefinedClassVariable``: ``Failed to trace builtin operator setattr
[UserDefinedClassVariable, ConstantVariable, ConstantVariable]`` (``builtin: setattr``
on 2.5-2.6). TorchRL's ``Composite.__new__`` does ``cls._device = None; cls._is_locked =
False`` on every spec it makes, so a loss that builds specs in its first call (SAC's
``target_entropy``, CQL's) breaks there (issue 14). torch 2.13 tracks every user class
for attribute mutation (``VariableBuilder`` wraps it with
``SideEffects.track_object_existing``; pytorch/pytorch#144874, #187531), which also means
every read of a class attribute, through the class, a subclass or an instance, has to
consult the side-effects table: a change of that size is not a patch.

The fix here covers only the write that changes nothing. It accepts ``cls.name = v`` when:

* ``cls`` has a source, ``name`` is not a dunder, ``v`` is a constant of exactly ``None``,
  ``bool``, ``int`` or ``str`` (no float: ``0.0 == -0.0``, and a guard on a float is ``==``);
* the class's OWN ``__dict__`` already holds a value of the same type, equal to ``v`` (an
  inherited value does not count: eager's store creates the class's own entry; ``1`` and
  ``True`` differ by type);
* its metaclass's ``__setattr__`` is ``type.__setattr__`` and, for a metaclass other than
  ``type``, nothing of that name is defined on the metaclass (a descriptor would run).

Then ``setattr`` would leave the class exactly as it is, so the compiled frame skips the
store and every later read in the frame sees what eager would see (the same value; as for
any constant, Dynamo keeps the equal value, not the object's identity). Guards, on what was
read: ``cls.__dict__[name]`` (``GetItemSource`` on the class's ``__dict__``: the guard fails
where the own entry is gone), its type (``TYPE_MATCH``) and value (``CONSTANT_MATCH``), the
class's type (``TYPE_MATCH``: the metaclass), and for a metaclass other than ``type`` (whose
slots cannot change) the object its ``__setattr__`` resolves to (``ID_MATCH``) and
``hasattr(metaclass, name)`` (``HASATTR``). That is TorchRL's case from the second spec on
(the loss is built eagerly, so its specs have run ``__new__`` before the first compiled
call). Anything else (a write that would change or create the class's own entry, a
sourceless class, a dunder name, a metaclass with ``__setattr__`` or an attribute of that
name, a non-constant or float value, a class Dynamo tracks for mutation): Dynamo's answer
stands (a graph break).
"""

from __future__ import annotations

from ..dynamo_api import MISSING, const_str, guard_hasattr, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "class-setattr"

#: Not float: its guard is ``==`` (``0.0 == -0.0``), which cannot tell a write that changes the sign.
_CONSTANT_TYPES = (type(None), bool, int, str)
_CLASS_TRACKER = None


def _class_tracker():
    global _CLASS_TRACKER
    if _CLASS_TRACKER is None:
        from torch._dynamo.variables.user_defined import UserDefinedClassVariable

        _CLASS_TRACKER = UserDefinedClassVariable
    return _CLASS_TRACKER


def _call_setattr_gate(wrapped, instance, args, kwargs):
    """What is installed on ``BuiltinVariable.call_setattr`` (every ``obj.name = v`` Dynamo
    traces): anything but a class goes straight to Dynamo after one type test."""
    try:
        if type(args[1]) is not (_CLASS_TRACKER or _class_tracker()):
            return wrapped(*args, **kwargs)
    except Exception:  # noqa: BLE001  (not what this torch was expected to be: the handler decides)
        pass
    return _call_setattr(wrapped, instance, args, kwargs)


def _unchanged(cls: type, name: str, new) -> bool:
    """Would ``setattr(cls, name, new)`` leave ``cls`` exactly as it is?"""
    if type(new) not in _CONSTANT_TYPES:
        return False
    own = vars(cls).get(name, MISSING)
    return type(own) is type(new) and own == new


@fail_safe(NAME)
def _call_setattr(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_setattr(tx, obj, name_var, val)`` on a class."""
    if kwargs or len(args) != 4:
        return DEFER
    tx, obj, name_var, val = args
    name = const_str(name_var)
    cls = getattr(obj, "value", None)
    if name is None or name.startswith("__") or obj.source is None or not isinstance(cls, type):
        return DEFER
    meta = type(cls)
    if type.__dict__["__setattr__"] is not static_lookup(meta, "__setattr__"):
        return DEFER  # a metaclass (or a base of it) with its own __setattr__
    if meta is not type and static_lookup(meta, name) is not MISSING:
        return DEFER  # the metaclass has an attribute of that name (a descriptor would run)
    if static_lookup(meta, "__dict__") is not type.__dict__["__dict__"]:
        return DEFER  # `cls.__dict__` (what the guard reads) would not be the class's namespace
    if tx.output.side_effects.is_attribute_mutation(obj):
        return DEFER  # Dynamo tracks this class's mutations itself
    if not val.is_python_constant():
        return DEFER
    new = val.as_python_constant()
    if not _unchanged(cls, name, new):
        return DEFER
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource, GetItemSource, TypeSource

    effects_begin()
    # The class's own entry, not the inherited lookup `cls.name`: `cls.__dict__[name]` (the
    # guard fails where the key is missing), its type and value.
    own = GetItemSource(AttrSource(obj.source, "__dict__"), name)
    install_guard(own.make_guard(GuardBuilder.TYPE_MATCH))
    install_guard(own.make_guard(GuardBuilder.CONSTANT_MATCH))
    # The metaclass: its identity (TYPE_MATCH on the class), and where it is not `type` (whose
    # attributes cannot change) the slot `__setattr__` resolves to and the absence of `name`.
    install_guard(obj.source.make_guard(GuardBuilder.TYPE_MATCH))
    if meta is not type:
        meta_source = TypeSource(obj.source)
        install_guard(AttrSource(meta_source, "__setattr__").make_guard(GuardBuilder.ID_MATCH))
        guard_hasattr(meta_source, name)
    from torch._dynamo.variables import ConstantVariable

    return ConstantVariable.create(None)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`Failed to trace builtin operator setattr [UserDefinedClassVariable, ...]` / `builtin: setattr "
         "UserDefinedClassVariable`: `cls.name = v` where the class already holds `v` (TorchRL's "
         "`Composite.__new__`: `cls._device = None`; SAC's and CQL's `target_entropy`)",
         "2.5–2.12",
         "(`<2.13`): the store skipped only where the class's own `__dict__` holds the identical value"),
    ),
    fixes="Failed to trace builtin operator setattr [UserDefinedClassVariable, ...] / builtin: setattr "
    "UserDefinedClassVariable: `cls.name = v` where the class already holds v (TorchRL's Composite.__new__: "
    "`cls._device = None`, SAC's and CQL's target_entropy)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_setattr",
    mirrors="torch 2.13: VariableBuilder tracks user classes for attribute mutation "
    "(SideEffects.track_object_existing; pytorch/pytorch#144874, #187531)",
    torch="<2.13",
    fixed_upstream="2.13: classes tracked for attribute mutation (setattr on a class is a side effect)",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_setattr", _call_setattr_gate,
               params=("tx", "obj", "name_var", "val")),
    ),
    requires=("torch._dynamo.side_effects:SideEffects.is_attribute_mutation",
              "torch._dynamo.guards:GuardBuilder.CONSTANT_MATCH",
              "torch._dynamo.guards:GuardBuilder.HASATTR",
              "torch._dynamo.guards:install_guard",
              "torch._dynamo.source:GetItemSource",
              "torch._dynamo.source:TypeSource"),
    summary="cls.name = v where the class's own __dict__ already holds v: no store, guarded on cls.__dict__[name]",
    history=(
        ("2.5-2.12",
         "no branch for a class in `BuiltinVariable.call_setattr`: `cls.name = v` is a graph break "
         "(`builtin: setattr [UserDefinedClassVariable, ...]`, from 2.7 `Failed to trace builtin operator`), "
         "also where it changes nothing (TorchRL's `Composite.__new__`)"),
        ("2.13+",
         "fixed upstream: user classes are tracked for attribute mutation; measured passing on 2.13.0"),
    ),
)
