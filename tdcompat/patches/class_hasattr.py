"""``hasattr(cls, name)`` on a class Dynamo holds without a source (torch 2.5-2.6).

Root cause: ``UserDefinedClassVariable.call_hasattr``
(torch/_dynamo/variables/user_defined.py) answers only for a class with a
source (under a ``HASATTR`` guard) and otherwise falls to
``VariableTracker.call_hasattr``: ``Unsupported: hasattr
UserDefinedClassVariable __dataclass_fields__``. A class has no source when it
is ``type(obj)`` of an object made in the frame, which is what
``dataclasses.asdict`` / ``is_dataclass`` ask about (``hasattr(type(obj),
"__dataclass_fields__")``): TorchRL's ``set_keys`` on the first call of a loss
(issue 14). From 2.7 ``type(obj)`` carries the class's source
(``UserDefinedObjectVariable.cls_source``) and the sourced branch answers.

The fix gives the class the source 2.7 gives it: an object made in the frame is tracked with
the source of the class tracker it was made from (``UserDefinedObjectVariable.cls_source``,
set by ``SideEffects.track_object_new_from_user_defined_class`` on 2.5-2.6 as well, and what
Dynamo already reads that object's class attributes through). For a sourceless class tracker
whose class is exactly the type of such an object, the answer is Dynamo's own sourced
``call_hasattr`` on that source: ``hasattr(cls, name)`` under a ``HASATTR`` guard (plus an
``ID_MATCH`` on the source, so the guard is on this class): a class (or a base) that gains
or loses the attribute between calls fails the guard and recompiles. Only for a class whose
metaclass looks attributes up the standard way (no ``__getattribute__`` but ``type``'s and no
``__getattr__`` on the metaclass's MRO, read statically as CPython's slot lookup does, so that no
code of a meta-metaclass runs) and that the frame has not mutated. A class with no such object in the
frame (nothing to guard the answer on): Dynamo's graph break, as before.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "class-hasattr"


@fail_safe(NAME)
def _call_hasattr(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.call_hasattr(tx, name)``."""
    if len(args) != 2 or kwargs or instance.source is not None:
        return DEFER
    tx, name = args
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    cls = getattr(instance, "value", None)
    if type(instance) is not UserDefinedClassVariable or not isinstance(cls, type) or not isinstance(name, str):
        return DEFER
    from ..dynamo_api import MISSING, guard_class_source, made_object_class_source, static_lookup

    # read on the metaclass's MRO without running anything of it (a meta-metaclass could)
    meta = type(cls)
    if static_lookup(meta, "__getattribute__") is not vars(type)["__getattribute__"]:
        return DEFER
    if static_lookup(meta, "__getattr__") is not MISSING:
        return DEFER
    if tx.output.side_effects.is_attribute_mutation(instance):
        return DEFER

    source = made_object_class_source(tx, cls)
    if source is None:
        return DEFER  # nothing to guard the answer on
    effects_begin()
    guard_class_source(source)
    # Dynamo's own sourced branch: a HASATTR guard on `source.name`, then the answer.
    sourced = UserDefinedClassVariable(cls, source=source)
    return UserDefinedClassVariable.call_hasattr(sourced, tx, name)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: hasattr UserDefinedClassVariable __dataclass_fields__` (`hasattr(type(o), '
             'name)` for `o` made in the compiled region: `dataclasses.asdict(Keys())`)',
         '2.5–2.6',
         '(`<2.7`)'),
    ),
    fixes="Unsupported: hasattr UserDefinedClassVariable __dataclass_fields__ (hasattr on type(obj) of an "
    "object made in the frame: dataclasses.asdict/is_dataclass, TorchRL's set_keys)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_hasattr",
    mirrors="torch 2.7: type(obj) of a new object keeps its class's source (UserDefinedObjectVariable.cls_source)",
    torch="<2.7",  # measured: 2.6.0 fails, 2.7.1 passes natively (case hasattr_type_of_new_object)
    fixed_upstream="2.7: UserDefinedObjectVariable.cls_source gives type(obj) a source",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_hasattr", _call_hasattr,
               params=("tx", "name")),
    ),
    requires=("torch._dynamo.side_effects:SideEffects.is_attribute_mutation",),
    summary="hasattr(type(obj), name) for an object made in the frame: Dynamo's HASATTR-guarded answer on the "
            "class source the object was made from",
    history=(
        ("2.5-2.6",
         "`UserDefinedClassVariable.call_hasattr` answers only for a class with a source: `hasattr(type(o), "
         "name)` for `o` made in the frame is `Unsupported: hasattr UserDefinedClassVariable "
         "__dataclass_fields__` (`dataclasses.asdict`/`is_dataclass`, TorchRL's `set_keys`)"),
        ("2.7+",
         "fixed upstream: `type(obj)` of a new object carries its class's source "
         "(`UserDefinedObjectVariable.cls_source`); measured passing on 2.7.1"),
    ),
)
