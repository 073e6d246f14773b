"""``obj.prop = v`` for a ``property`` with a Python setter is recorded, not run (torch 2.7-2.12).

Root cause: ``UserDefinedObjectVariable.method_setattr_standard``
(torch/_dynamo/variables/user_defined.py) emulates CPython's generic setattr
for data descriptors whose ``__set__`` is a Python function
(``try_get_descritor_and_setter_py_func``), but ``property.__set__`` is a C
slot, so a property is taken for "a descriptor with a side-effect-free
``__set__``" and the value is stored as an instance attribute named like the
property. After the frame Dynamo replays ``obj.prop = v`` on the real object,
which runs the setter then: the object ends right, but everything the setter
should have done is missing *inside* the frame. Reads of the attributes the
setter writes (``obj._v``), and of the property itself where the getter does
not read back what was stored, return stale values: silently wrong, measured on
2.8.0 for plain objects, input mappings (with ``mutable-mapping-setattr``) and
objects made in the frame. torch 2.13 traces ``property.fset`` for
``MutableMapping`` subclasses (``MutableMappingVariable.method_setattr_standard``)
and plain objects pass our checks from 2.13 on.

The fix, as CPython does and as 2.13 does for mappings: when the class attribute
is a ``property`` whose ``fset`` is a plain Python function, call it (Dynamo
inlines it with the same tracker as ``self``); a property without a setter is the
``AttributeError`` eager raises, left to Dynamo as a graph break. Everything else
(``__dict__`` writes, other descriptors, no property) defers to Dynamo.
"""

from __future__ import annotations

import inspect

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "property-setattr"


def _property_setter(value, name):
    attr = inspect.getattr_static(type(value), name, None)
    if not isinstance(attr, property):
        return None
    return attr.fset if inspect.isfunction(attr.fset) else False


@fail_safe(NAME)
def _method_setattr_standard(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.method_setattr_standard(tx, name, value[, directly_update_dict])``."""
    # MutableMappingVariable's override (2.11-2.12) passes directly_update_dict positionally.
    if len(args) == 4 and args[3] is False and not kwargs:
        args = args[:3]
    if len(args) != 3 or kwargs.get("directly_update_dict") or set(kwargs) - {"directly_update_dict"}:
        return DEFER
    tx, name_vt, value_vt = args
    if not name_vt.is_python_constant():
        return DEFER
    name = name_vt.as_python_constant()
    if not isinstance(name, str):
        return DEFER
    fset = _property_setter(instance.value, name)
    if fset is None:
        return DEFER
    if fset is False:
        from ..dynamo_api import graph_break

        graph_break("setattr on a property without a Python setter", f"{instance}.{name}",
                    "eager raises AttributeError or runs a C setter; tdcompat does not trace it")
    if not tx.output.side_effects.is_attribute_mutation(instance):
        return DEFER  # Dynamo's own graph break for objects it does not track
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.functions import UserFunctionVariable

    effects_begin()
    UserFunctionVariable(fset).call_function(tx, [instance, value_vt], {})
    return ConstantVariable.create(None)


PATCH = Patch(
    name=NAME,
    fixes="obj.prop = v with a property setter: what the setter writes is not seen in the same compiled frame "
    "(silently wrong; the setter only runs when Dynamo replays the store after the graph)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedObjectVariable.method_setattr_standard",
    mirrors="MutableMappingVariable.method_setattr_standard of torch 2.13 (property.fset traced for mappings)",
    torch="<2.13",
    fixed_upstream="2.13: method_setattr_standard traces property.fset",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "method_setattr_standard",
               _method_setattr_standard, params=("tx", "name", "value")),
    ),
    requires=(
        "torch._dynamo.variables.functions:UserFunctionVariable",
        "torch._dynamo.side_effects:SideEffects.is_attribute_mutation",
    ),
    summary="obj.prop = v runs the property's Python setter in the trace",
)
