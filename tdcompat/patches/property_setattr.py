"""``obj.prop = v`` for a ``property`` with a Python setter is recorded, not run (torch 2.5-2.11).

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
objects made in the frame. torch 2.12 traces ``property.fset`` for
``MutableMapping`` subclasses (``MutableMappingVariable.method_setattr_standard``)
and plain objects pass our checks from 2.12.1 on (measured; first thought to be 2.13).

The fix, as CPython does and as 2.13 does for mappings: when the class attribute
is a ``property`` whose ``fset`` is a plain Python function, call it (Dynamo
inlines it with the same tracker as ``self``); a property without a setter raises the
``AttributeError`` eager raises, inside the trace (Dynamo stored the value and the
replay raised after the graph, outside the user's ``try``: 2.5-2.12, also for
``MutableMapping``s, whose own ``method_setattr_standard`` 2.11-2.12 pass
``directly_update_dict`` positionally). A setter that is not a Python function
graph-breaks. Everything else (``__dict__`` writes, other descriptors, no
property) defers to Dynamo.
"""

from __future__ import annotations

import inspect

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "property-setattr"


def _property_setter(value, name):
    """The property's Python ``fset``; ``MISSING`` for a property without a setter; False for
    another setter (a C function, a partial); None where ``name`` is no property."""
    attr = inspect.getattr_static(type(value), name, None)
    if not isinstance(attr, property):
        return None
    if attr.fset is None:
        return MISSING
    return attr.fset if inspect.isfunction(attr.fset) else False


MISSING = object()


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
    if fset is MISSING:
        from ..dynamo_api import raise_observed

        effects_begin()
        raise_observed(AttributeError, tx, f"{instance}.{name} = ... (property without a setter)")
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
    symptoms=(
        ('`o.prop = v` with a property setter: what the setter writes is **silently missing** later '
             'in the same compiled frame (the setter only runs when Dynamo replays the store after the '
             'graph); for a property **without** a setter, `AttributeError` out of compiled code after '
             "the graph instead of inside the user's `try`",
         '2.5–2.11 (setter), 2.5–2.12 (no setter)',
         '(`<2.13`)'),
    ),
    fixes="obj.prop = v with a property setter: what the setter writes is not seen in the same compiled frame "
    "(silently wrong; the setter only runs when Dynamo replays the store after the graph); for a property "
    "without a setter, AttributeError out of compiled code, after the graph, instead of in the frame",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedObjectVariable.method_setattr_standard",
    mirrors="MutableMappingVariable.method_setattr_standard of torch 2.12 (property.fset traced for mappings)",
    torch="<2.13",  # measured: fset traced from 2.12.1; no-setter AttributeError right from 2.13.0
    fixed_upstream="2.13: method_setattr_standard traces property.fset (2.12) and raises for a property "
    "without a setter",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "method_setattr_standard",
               _method_setattr_standard, params=("tx", "name", "value")),
    ),
    requires=(
        "torch._dynamo.variables.functions:UserFunctionVariable",
        "torch._dynamo.side_effects:SideEffects.is_attribute_mutation",
    ),
    summary="obj.prop = v runs the property's Python setter in the trace",
    history=(
        ("2.5-2.11",
         "`obj.prop = v` with a Python setter is stored as an instance attribute; the setter only runs when "
         "Dynamo replays the store after the graph, so what it writes is missing later in the frame (silently "
         "wrong; measured on 2.8.0 for plain objects, input mappings and objects made in the frame). A property "
         "without a setter: `AttributeError` out of compiled code after the graph, outside the user's `try` (on "
         "2.6-2.8 a mapping's store was dropped and nothing raised)"),
        ("2.12",
         "`property.fset` is traced (`MutableMappingVariable.method_setattr_standard` for mappings; plain "
         "objects right from 2.12.1, measured); a property without a setter still raises after the graph"),
        ("2.13+", "fixed upstream: `method_setattr_standard` also raises for a property without a setter"),
    ),
)
