"""A class store skips the metaclass's own ``__setattr__`` (torch 2.13 on).

Root cause: 2.13 tracks user classes for attribute mutation, and the ``setattr`` builtin
(torch/_dynamo/variables/builtin.py, ``SetAttrBuiltinVariable._call_setattr``) records
``cls.name = v`` / ``setattr(cls, name, v)`` straight into the side-effects table
(``SideEffects.store_attr``) whatever ``type(cls).__setattr__`` is. A metaclass that defines
``__setattr__`` (to count, validate or redirect writes) does not run in the trace: every read in
the frame of what it would have written is stale (``KM.nset`` still 0, ``KM.__dict__`` without
the key), and the store is replayed after the graph through ``setattr``, which runs the metaclass
only then. Silently wrong on 2.13.0 and 2.15.0 (fuzzer class family, ``KM``: 2.13.0 seed
958102467).

The fix accepts nothing: a store into the side-effects table on a class whose metaclass's
``__setattr__`` (read statically on the metaclass's MRO) is not ``type.__setattr__`` is a graph
break, so that eager runs the metaclass. It breaks at the store, not at a later read, because a
read of a class attribute cannot graph-break (``LOAD_ATTR`` on a class catches ``Unsupported`` and
reads the real class): a store that nothing reads in the frame breaks too, where Dynamo's replay
would have been right. Stores on every other class, and on objects, are Dynamo's. Upstream would
inline the metaclass's ``__setattr__`` instead (its ``type.__setattr__(cls, ...)`` is then the
store; today that call is itself unsupported, so inlining breaks at the same place).
"""

from __future__ import annotations

from ..dynamo_api import MISSING, graph_break, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate

NAME = "metaclass-setattr"

_TYPE_SETATTR = type.__dict__["__setattr__"]


@fail_safe(NAME)
def _store_attr(wrapped, instance, args, kwargs):
    """``SideEffects.store_attr(item, name, value, ...)`` of a class tracker (the gate sends no other)."""
    if not args:
        return DEFER
    cls = getattr(args[0], "value", None)
    if not isinstance(cls, type) or type(cls) is type:
        return DEFER
    found = static_lookup(type(cls), "__setattr__")
    if found is MISSING or found is _TYPE_SETATTR:
        return DEFER
    name = args[1] if len(args) > 1 else kwargs.get("name")
    graph_break("class store past the metaclass __setattr__", f"{cls.__qualname__}.{name}",
                f"{type(cls).__qualname__}.__setattr__ runs in eager; Dynamo would store past it")


@gate(_store_attr)
def _store_attr_gate(original, handle):
    """What is installed on ``SideEffects.store_attr``: a store on anything but a class
    tracker goes straight to Dynamo after one type test."""
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    def store_attr(self, *args, **kwargs):  # any call: 2.13 added mutation_kind=
        if args and not isinstance(args[0], UserDefinedClassVariable):
            return original(self, *args, **kwargs)
        return handle(self, *args, **kwargs)

    return store_attr


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`K.v = x` where `type(K)` defines `__setattr__` (counting, validating or redirecting '
             'writes): the metaclass **does not run** in the trace, so `K.nset`, `K.__dict__`, '
             '`hasattr(K, ...)` read in the frame miss what it writes (tdcompat: a graph break at the '
             'store, where eager runs it)',
         '2.13–2.15',
         '(`>=2.13`)'),
    ),
    fixes="`K.v = x` where `type(K)` defines `__setattr__`: the metaclass does not run in the trace, reads "
    "of what it writes are stale (silently wrong, torch 2.13+)",
    upstream="torch/_dynamo/variables/builtin.py: SetAttrBuiltinVariable._call_setattr (the attribute-mutation "
    "branch); torch/_dynamo/side_effects.py: SideEffects.store_attr",
    mirrors="none upstream yet: class attribute tracking (2.13) stores past a metaclass __setattr__",
    torch=">=2.13",
    targets=(
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", _store_attr_gate,
               params=("item", "name")),
    ),
    summary="a class store through a metaclass __setattr__ graph-breaks, so eager runs the metaclass",
    proven_by="tests/test_never_worse_classes.py::test_class_store_past_metaclass_setattr_breaks",
    history=(
        ("2.5-2.12", "not this gap: a store on a class is a graph break there (`class-setattr` accepts only "
         "stores that change nothing, under `type.__setattr__`)"),
        ("2.13+", "classes tracked for attribute mutation; a store is recorded without running the metaclass's "
         "`__setattr__`: reads in the frame of what it writes are stale (silently wrong)"),
    ),
)
