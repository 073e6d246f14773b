"""``vars(f)`` of an object whose ``__dict__`` Dynamo cannot read crashes the compile (torch 2.9-2.11).

Symptom: ``vars(inner)`` for a function made in the frame (``def inner(): ...``, e.g. after
``functools.wraps``) in compiled code: ``InternalTorchDynamoError: NotImplementedError``, also without
``fullgraph``: the user's program stops. ``inner.__dict__`` itself is a clean graph break there. Measured on
2.9.1, 2.10.0 and 2.11.0 (2.5-2.8 have no ``call_vars``: a clean break, or ``instance-dict-vars``; 2.12
models a function's ``__dict__``).

Root cause: ``BuiltinVariable.call_vars`` (torch/_dynamo/variables/builtin.py, added in 2.9) returns
``obj.var_getattr(tx, "__dict__")``, and ``VariableTracker.var_getattr`` of a tracker with no attribute model
(``NestedUserFunctionVariable``, ...) raises ``NotImplementedError`` from ``const_getattr``, which the
attribute-load path (``BuiltinVariable.call_getattr``) turns into a graph break and ``call_vars`` does not.

The fix accepts nothing: the receivers whose ``__dict__`` is their attribute storage (plain objects,
modules, mappings: ``instance_dict.instance_dict_receiver_types``) go to Dynamo unchanged; for any other,
a ``NotImplementedError`` out of Dynamo's ``call_vars`` becomes a graph break (Dynamo discards what the
frame traced and eager runs ``vars``), as ``obj.__dict__`` already is.
"""

from __future__ import annotations

from ..dynamo_api import graph_break, realize
from ..instance_dict import instance_dict_receiver_types
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "vars-untraced-owner"


@fail_safe(NAME)
def _call_vars(wrapped, instance, args, kwargs):
    """``BuiltinVariable(vars).call_vars(tx, obj)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    obj = realize(args[1])
    if type(obj) in instance_dict_receiver_types():
        return DEFER
    try:
        return wrapped(args[0], obj)
    except NotImplementedError:
        graph_break("vars() of an object without an attribute model", f"vars({obj})",
                    "Dynamo cannot read this object's __dict__ (obj.__dict__ is a graph break too)")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`vars(f)` of a function made in the frame (e.g. after `functools.wraps`): **the compile crashes** "
         "(`InternalTorchDynamoError: NotImplementedError`), also without `fullgraph` (tdcompat: a graph "
         "break, as `f.__dict__` is)",
         "2.9–2.11",
         "(`>=2.9,<2.12`)"),
    ),
    fixes="`vars(f)` of a function made in the frame crashes the compile (InternalTorchDynamoError: "
    "NotImplementedError), also without fullgraph (torch 2.9-2.11)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_vars",
    mirrors="torch 2.12: functions model their __dict__ (DunderDictVariable, pytorch/pytorch#174570)",
    torch=">=2.9,<2.12",
    fixed_upstream="2.12: vars() of a function made in the frame is its modelled __dict__",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_vars", _call_vars, params=("tx",)),
    ),
    summary="vars() of an object Dynamo has no attribute model for graph-breaks instead of crashing",
    proven_by="tests/test_function_dict.py::test_vars_without_the_patch_the_compile_crashes",
    history=(
        ("2.5-2.8", "not this gap: no `BuiltinVariable.call_vars` (`instance-dict-vars` adds one for plain "
         "objects, modules and mappings)"),
        ("2.9-2.11", "`vars(inner)` of a function made in the frame: `InternalTorchDynamoError: "
         "NotImplementedError` (`const_getattr`), also without fullgraph"),
        ("2.12+", "right: a function's `__dict__` is modelled"),
    ),
)
