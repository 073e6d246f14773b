"""A literal or enum class attribute is read without a guard (torch 2.5-2.11).

Symptom: ``x * K.scale`` (``K`` a class, global or passed in; ``scale`` an int, float,
str, bool, None, enum member, or a tuple/list of literals) keeps the first call's value
after ``K.scale`` changes: the compiled code is reused, silently wrong, under
``fullgraph=True`` or not. Found by the differential fuzzer's class family (a class
attribute changed between calls).

Root cause: ``UserDefinedClassVariable.var_getattr`` (torch/_dynamo/variables/user_defined.py)
returns ``ConstantVariable.create(obj)`` / ``EnumVariable(obj)`` for such an attribute,
with no source, so no guard is installed (the only guard is the class's ``ID_MATCH``).
Upstream regressed this in pytorch/pytorch#124802 and fixed it in 2.12 with
pytorch/pytorch#177191 (issue #176851): the value is built with its ``AttrSource``.

What the handler accepts: a class tracker with a source, a name that is not a dunder, an
attribute that ``inspect.getattr_static`` finds (Dynamo's own lookup) and that is a literal
(``ConstantVariable.is_literal``) or an ``enum.Enum`` member, on a class whose metaclass
uses ``type.__getattribute__``. It returns ``VariableBuilder(tx, AttrSource(cls, name))(obj)``,
which is what 2.12 does: the value guarded (``CONSTANT_MATCH``/``EQUALS_MATCH`` for literals,
``ID_MATCH`` for enum members, per-item guards for a list).

Why that is sound: the guard reads ``getattr(cls, name)``, which for such a class is
``type.__getattribute__``: a data descriptor on the metaclass would win, but then
``getattr_static`` returns that descriptor (not a literal) and the handler defers; otherwise
the first class in the MRO holding ``name`` gives the value, which is ``obj`` (a literal has
no ``__get__``). So eager reads exactly the value the guard checked, on every call the
guard lets through; a changed value recompiles. A mutable list attribute is now tracked
under its source, so an in-frame ``K.items.append(...)`` is replayed on it.

A name found nowhere (not in the class's MRO, not in its metaclass's) on such a class, whose
metaclass has no ``__getattr__``: eager raises ``AttributeError``. Dynamo returned ``None``
(2.5 for every class, 2.8-2.11 under a metaclass: ``c.nope is None`` was True where eager
raises) or raised it without a guard (2.8-2.11, plain classes: reused after the class gains the
name). The handler guards ``hasattr(cls, name)`` (``HASATTR``, False) and raises the
``AttributeError`` inside the trace (a graph break where this torch cannot raise it there).

A class tracker without a source (2.5-2.6: ``type(o)`` of an object ``o`` made in the frame) is
answered the same way through the source of the class ``o`` was made from
(``UserDefinedObjectVariable.cls_source``) under an ``ID_MATCH`` on it, when the frame has not
mutated the class through another tracker: class-hasattr lets such frames trace, and without it
``getattr(type(o), "v", d)`` was Dynamo's unguarded constant, reused after ``v`` changed.

Deferred (Dynamo's own path): other classes without a source (made in the frame), dunder names,
names the frame wrote or deleted (Dynamo's side effects answer), metaclasses with their own
``__getattribute__`` or ``__getattr__``, descriptors, functions and every other value.
"""

from __future__ import annotations

import enum
import inspect

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "class-attr-guard"

_TYPE_GETATTRIBUTE = type.__dict__["__getattribute__"]


@fail_safe(NAME)
def _var_getattr(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.var_getattr(tx, name)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    if type(name) is not str or (name.startswith("__") and name.endswith("__")):
        return DEFER
    cls = instance.value
    if not isinstance(cls, type):
        return DEFER
    from ..dynamo_api import MISSING, guard_class_source, made_object_class_source, static_lookup

    source = getattr(instance, "source", None)
    class_guard = None
    if source is None:
        # 2.5-2.6: ``type(o)`` of an object made in the frame has no source; the class it
        # was made from has one (``cls_source``), checked by ``ID_MATCH`` before it is used.
        source = class_guard = made_object_class_source(tx, cls)
        if source is None:
            return DEFER
    meta = type(cls)
    if static_lookup(meta, "__getattribute__") is not _TYPE_GETATTRIBUTE:
        return DEFER
    side_effects = tx.output.side_effects
    if side_effects.is_attribute_mutation(instance) and side_effects.has_pending_mutation_of_attr(instance, name):
        return DEFER  # written or deleted in the frame: Dynamo's side effects answer
    try:
        obj = inspect.getattr_static(cls, name)
    except AttributeError:
        if static_lookup(meta, "__getattr__") is not MISSING:
            return DEFER  # the metaclass answers for missing names: user code
        return _missing(tx, source, name, cls, class_guard)
    from torch._dynamo.variables import ConstantVariable

    if not (ConstantVariable.is_literal(obj) or isinstance(obj, enum.Enum)):
        return DEFER
    if static_lookup(cls, name) is MISSING:
        return DEFER  # found on the metaclass, not in the class's MRO: left to Dynamo
    from torch._dynamo.source import AttrSource
    from torch._dynamo.variables.builder import VariableBuilder

    effects_begin()
    if class_guard is not None:
        guard_class_source(class_guard)
    return VariableBuilder(tx, AttrSource(source, name))(obj)


def _missing(tx, source, name: str, cls: type, class_guard=None):
    """``cls.name`` where neither the class's MRO nor its metaclass's has ``name``: eager raises
    ``AttributeError``. Guarded by ``HASATTR`` (``hasattr(cls, name)`` stays False), then raised
    inside the trace, so a ``try``/``getattr`` default sees it as eager does."""
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource

    from ..dynamo_api import guard_class_source, raise_observed

    effects_begin()
    if class_guard is not None:
        guard_class_source(class_guard)
    install_guard(AttrSource(source, name).make_guard(GuardBuilder.HASATTR))
    raise_observed(AttributeError, tx, f"type object {cls.__name__!r} has no attribute {name!r}")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`x * K.scale` (a literal or enum attribute of a class `K`, global or passed in) **keeps '
             "the first call's value** after `K.scale` changes; `K.items.append(v)` on a list class "
             'attribute is `Unsupported`',
         '2.5–2.11',
         '(`<2.12`)'),
    ),
    fixes="`x * K.scale` keeps the first call's value after the class attribute `K.scale` changes "
    "(torch <2.12): silently wrong",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.var_getattr "
    "(ConstantVariable.create(obj) / EnumVariable(obj) without a source)",
    mirrors="pytorch/pytorch#177191 (issue #176851)",
    torch="<2.12",
    fixed_upstream="2.12: pytorch/pytorch#177191",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "var_getattr", _var_getattr,
               params=("tx", "name")),
    ),
    requires=("torch._dynamo.source:AttrSource", "torch._dynamo.variables.builder:VariableBuilder"),
    summary="literal and enum class attributes read through a sourced class are guarded, as 2.12 does",
    history=(
        ("2.5-2.11",
         "`UserDefinedClassVariable.var_getattr` returns literal and enum class attributes without a source: "
         "no guard, the first call's value is reused after the attribute changes (silently wrong)"),
        ("2.12+", "fixed upstream: built with `AttrSource` (pytorch/pytorch#177191)"),
    ),
)
