"""A write into a function's or a bound method's ``__dict__`` crashes the compile (torch 2.12 on).

Symptom: ``f.__dict__["k"] = v``, ``f.__dict__.update(tag=1)``, ``m.__dict__["k"] = v`` (``m = obj.meth``),
``del f.__dict__["k"]`` in compiled code, for a function Dynamo did not make in the frame (a global or
closed-over function, ``Cls.meth``, ``obj.meth.__func__``, a bound method): ``AssertionError: Expected
attribute mutation for UserFunctionVariable() in store_attr`` (2.13+; bare on 2.12), also without
``fullgraph``: the user's program stops. ``f.k = v`` itself works (2.14+) or breaks cleanly. Measured on
2.12.1, 2.13.0, 2.14.1 and 2.15.0. (A function made in the frame is tracked: its ``__dict__`` writes
work.)

Root cause: 2.12 models ``obj.__dict__`` as a ``DunderDictVariable`` whose storage
(``SideEffectsProxyDict``, torch/_dynamo/variables/dicts.py) records every write as an attribute store on
the owner (``SideEffects.store_attr``, torch/_dynamo/side_effects.py), which asserts that the owner is
tracked for attribute mutation. Function and method trackers built for existing functions are not.

The fix accepts nothing: a write or deletion through the proxy of an owner that is not tracked for
attribute mutation (``SideEffects.is_attribute_mutation`` false: exactly where ``store_attr`` would
assert) graph-breaks before anything is recorded, so eager runs it. Reads are Dynamo's.
"""

from __future__ import annotations

from ..dynamo_api import graph_break
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "function-dict-write"


@fail_safe(NAME)
def _write(wrapped, instance, args, kwargs):
    """``SideEffectsProxyDict.__setitem__(key, value)`` / ``__delitem__(key)``."""
    item = getattr(instance, "item", None)
    side_effects = getattr(instance, "side_effects", None)
    if item is None or side_effects is None or side_effects.is_attribute_mutation(item):
        return DEFER
    graph_break("__dict__ write", f"{item}.__dict__",
                "Dynamo records the write as an attribute store on an owner it does not track for mutation "
                "(an existing function or a bound method)")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`f.__dict__["k"] = v` / `f.__dict__.update(...)` / `obj.meth.__dict__["k"] = v` for an existing '
         'function or a bound method: **the compile crashes** (`AssertionError: Expected attribute mutation '
         '... in store_attr`), also without `fullgraph` (tdcompat: a graph break, where eager writes it)',
         "2.12–2.15",
         "(`>=2.12`)"),
    ),
    fixes="`f.__dict__[k] = v` for an existing function or a bound method crashes the compile (AssertionError: "
    "Expected attribute mutation ... in store_attr), also without fullgraph (torch 2.12+)",
    upstream="torch/_dynamo/variables/dicts.py: SideEffectsProxyDict.__setitem__, __delitem__ "
    "(torch/_dynamo/side_effects.py: SideEffects.store_attr asserts)",
    mirrors="none upstream yet (DunderDictVariable from pytorch/pytorch#174570)",
    torch=">=2.12",
    targets=(
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__setitem__", _write,
               params=("key", "value")),
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__delitem__", _write,
               params=("key",)),
    ),
    requires=("torch._dynamo.side_effects:SideEffects.is_attribute_mutation",),
    summary="a write into the __dict__ of an untracked function or method graph-breaks instead of crashing",
    proven_by="tests/test_function_dict.py::test_without_the_patch_the_compile_crashes",
    history=(
        ("2.5-2.11", "not this gap: `f.__dict__[k] = v` is a graph break there (2.7-2.10, not patched: a write "
         "into `obj.meth.__func__.__dict__` is lost, silently: the constant-folded `getattr` copies the dict)"),
        ("2.12+", "`AssertionError` from `SideEffects.store_attr` (owner not tracked for attribute mutation), "
         "also without fullgraph"),
    ),
)
