"""``del obj.name`` for an attribute the object does not have raises ``AttributeError``.

Root cause: Dynamo turns ``del obj.name`` into an attribute store of a
``DeletedVariable`` (``BuiltinVariable.call_delattr`` in
torch/_dynamo/variables/builtin.py, then
``UserDefinedObjectVariable.method_setattr_standard``) without asking whether
``obj`` has ``name`` at all. Eager raises ``AttributeError``; compiled code goes
on as if the deletion had happened, so a ``try: del o.k / except
AttributeError:`` takes the other branch (silently wrong on 2.5-2.11). From 2.12
the deletion checks presence, but without a guard: code compiled for an object
that lacked ``name`` raises for one that has it (measured on 2.15.0, second call).

The fix is CPython's ``object.__delattr__`` (``_PyObject_GenericSetAttrWithDict``
with a NULL value): for an object whose class uses ``object.__delattr__`` and has
no data descriptor of that name, the attribute is present exactly when it is in
the instance dictionary: a store or deletion made earlier in the frame, else the
real ``obj.__dict__`` of an object passed in, decided under a ``DICT_CONTAINS``
guard. Absent: raise ``AttributeError`` in the trace (a graph break on 2.5, whose
``raise_observed_exception`` cannot be called from here). Present: Dynamo's own
deletion, with the input's key presence on entry guarded (Dynamo decides at compile time
whether the replay deletes: a key the frame added then deleted on an input that had it on a
later call was left in place; fuzzer seed 1004428) and a graph break where the class has an
attribute of that name (before 2.13 later reads see the deletion record, not the class
attribute: ``hasattr`` silently ``False``). An object made in the frame whose class has ``__enter__``
and ``__exit__`` (a ``TensorDict``) is a ``GenericContextWrappingVariable``, a
``UserDefinedObjectVariable`` with the same attribute store (fuzzer seed 3).
A ``property`` without a deleter raises ``AttributeError`` in the trace
(:func:`_refuse_property_without_deleter`; Dynamo 2.5-2.12 replayed ``del obj.p`` after the graph, where
the error escaped the user's ``try``: fresh fuzz seed 438819678 on 2.10). Modules
(``nn.Module.__delattr__``), classes with a custom
``__delattr__``, other descriptors and ``__slots__`` defer to Dynamo.
"""

from __future__ import annotations

import inspect

from ..dynamo_api import is_data_descriptor, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "delattr-missing"


def _module_delattr():
    import torch

    return torch.nn.Module.__delattr__


def _refuse_unchecked_module_deletion(tx, obj, name) -> None:
    """``del m.name`` on a module made in the frame that Dynamo tracks as a user object (one
    with ``__enter__``/``__exit__``, e.g. ``TensorDictParams``): ``nn.Module.__delattr__`` is
    traced down to ``super().__delattr__``, which records the deletion without looking the
    attribute up, so a missing one raises nothing (silently wrong on 2.8, where
    ``super-delattr`` does not apply; fuzzer seed 11002453 of seed 11 reached it through a
    ``TensorDictParams`` built in the frame). Where ``super-delattr`` is applied and knows
    whether the attribute is there, it raises or records the deletion; otherwise a graph break."""
    from ..dynamo_api import graph_break, made_in_frame
    from ..installer import is_installed
    from ..instance_dict import instance_dict_contains

    if not made_in_frame(obj):
        return
    if is_installed("super-delattr") and instance_dict_contains(tx, obj, name) is not None:
        return
    graph_break("deletion on a module made in the frame", f"del {obj}.{name}",
                "Dynamo records the deletion without looking the attribute up (no AttributeError "
                "when it is missing)")


def _refuse_property_without_deleter(tx, obj, cls, name) -> None:
    """``del obj.p`` where ``type(obj).p`` is exactly a ``property`` without ``fdel`` (found on the class's MRO,
    as ``object.__delattr__`` finds it): CPython raises ``AttributeError`` (no deleter), whatever the instance
    holds. Dynamo 2.5-2.12 recorded a deletion and replayed ``del obj.p`` after the graph, where the
    ``AttributeError`` escaped the user's ``try`` (measured; 2.13 raises in the trace). Raised in the trace
    here (a graph break where this torch cannot raise it); any other descriptor is Dynamo's."""
    descriptor = inspect.getattr_static(cls, name, None)
    if type(descriptor) is not property or descriptor.fdel is not None:
        return
    from ..dynamo_api import raise_observed

    effects_begin()
    raise_observed(AttributeError, tx, f"del {obj}.{name}",
                   f"property {name!r} of {cls.__name__!r} object has no deleter")


@fail_safe(NAME)
def _call_delattr(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_delattr(tx, obj, name_var)``."""
    if len(args) != 3 or kwargs:
        return DEFER
    tx, obj, name_var = args
    from torch._dynamo.variables.ctx_manager import GenericContextWrappingVariable
    from torch._dynamo.variables.user_defined import MutableMappingVariable, UserDefinedObjectVariable

    obj = realize(obj)
    if type(obj) not in (UserDefinedObjectVariable, MutableMappingVariable, GenericContextWrappingVariable):
        return DEFER
    if not name_var.is_python_constant() or not isinstance(name_var.as_python_constant(), str):
        return DEFER
    name = name_var.as_python_constant()
    cls = type(obj.value)
    delattr_fn = inspect.getattr_static(cls, "__delattr__", None)
    if delattr_fn is _module_delattr():
        _refuse_unchecked_module_deletion(tx, obj, name)
        return DEFER
    if delattr_fn is not object.__delattr__:
        return DEFER
    if is_data_descriptor(cls, name):
        _refuse_property_without_deleter(tx, obj, cls, name)
        return DEFER
    if not tx.output.side_effects.is_attribute_mutation(obj):
        return DEFER
    from ..instance_dict import instance_dict_contains

    present = instance_dict_contains(tx, obj, name)
    if present is None:
        return DEFER
    if present:
        # Dynamo's deletion, but replayed after the graph as decided for this input (guarded),
        # and not where later reads would miss a class attribute of that name.
        from ..instance_dict import guard_deletion_replay, refuse_deletion_under_class_attribute

        refuse_deletion_under_class_attribute(tx, obj, name)
        guard_deletion_replay(tx, obj, name)
        return DEFER
    from ..dynamo_api import raise_observed

    effects_begin()
    raise_observed(AttributeError, tx, f"del {obj}.{name}")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`del o.name` of a missing attribute **does not raise** `AttributeError` in compiled code '
             '(2.5–2.11), or raises for a later input that has it (2.13, 2.15)',
         'every release',
         '(`>=2.5`)'),
    ),
    fixes="`del obj.name` of a missing attribute does not raise AttributeError in compiled code (2.5-2.11), "
    "or raises for a later input that has it (2.12+, unguarded)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_delattr "
    "(user_defined.py: UserDefinedObjectVariable.method_setattr_standard with DeletedVariable)",
    mirrors="CPython object.__delattr__; open upstream",
    torch=">=2.5",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_delattr", _call_delattr,
               params=("tx", "obj", "name_var")),
    ),
    requires=(
        "torch._dynamo.side_effects:SideEffects.has_pending_mutation_of_attr",
        "torch._dynamo.side_effects:SideEffects.load_attr",
        "torch._dynamo.exc:raise_observed_exception",
        "torch._dynamo.variables:DeletedVariable",
    ),
    summary="del obj.name of a missing attribute raises AttributeError, guarded on the input's keys",
    history=(
        ("2.5-2.11",
         "`del obj.name` is stored as a `DeletedVariable` without asking whether `obj` has `name`: no "
         "`AttributeError`, so `try: del o.k / except AttributeError:` takes the other branch (silently wrong)"),
        ("2.12+",
         "the deletion checks presence, without a guard: code compiled for an object that lacked `name` raises "
         "for a later one that has it (measured on 2.13.0 and 2.15.0). On 2.12 an object made in the frame that "
         "Dynamo tracks as `GenericContextWrappingVariable` (a `TensorDict`) still did not raise, as on "
         "2.5-2.11. Open upstream"),
    ),
)
