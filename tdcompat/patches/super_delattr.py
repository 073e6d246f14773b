"""``super().__delattr__(name)`` behaves like CPython's ``object.__delattr__``.

Root cause: ``SuperVariable.call_method`` (torch/_dynamo/variables/misc.py),
branch ``inner_fn is object.__delattr__``, records a ``DeletedVariable``
attribute store and nothing else. That is the path of every ``del module.x``
(``nn.Module.__delattr__`` ends in ``super().__delattr__(name)``) and of any
class whose ``__delattr__`` calls ``super()``. Two things go wrong:

* the attribute is never looked up: deleting one the object does not have
  raises nothing in compiled code, or (replayed as ``DELETE_ATTR`` under no
  guard) raises ``AttributeError`` out of code compiled for an input that had it
  (measured on 2.5.1, 2.11.0, 2.12.1, 2.13.0, 2.15.0);
* from 2.13, the store is of kind ``GENERIC_SETATTR``, which the instance-dict
  view (``SideEffectsProxyDict``) ignores: ``'x' in module.__dict__``,
  ``module.__dict__['x']`` and ``vars(module)`` still show the deleted
  attribute (silently wrong on 2.13.0 and 2.15.0; the fuzzer's seed 173).

The fix is CPython's (``_PyObject_GenericSetAttrWithDict`` with a NULL
value), for an object with an instance dict and no data descriptor of that
name: present exactly when in the instance dict (a store or deletion made
earlier in the frame, else the input's real ``__dict__`` under a
``DICT_CONTAINS`` guard); absent raises ``AttributeError`` in the trace (a
graph break on 2.5, whose ``raise_observed_exception`` cannot raise it);
present records an instance-dict deletion (``store_instance_dict_attr`` where
it exists, 2.13 on). Before 2.13 the deletion is replayed as ``del obj.name``,
which would run a class's own ``__delattr__`` a second time: there the patch
only takes modules and classes without one (others stay as Dynamo has them:
the hook runs twice on replay, natively). An object made in the frame has the keys the frame
stored, plus, for a module, what ``nn.Module.__init__`` put in Dynamo's placeholder
(``nn_module_new``). Data descriptors, ``__slots__``, other objects made in the frame with
unknown keys and any other ``super()`` call defer to Dynamo.
"""

from __future__ import annotations

from ..dynamo_api import is_data_descriptor, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "super-delattr"


def _resolves_to_object_delattr(super_vt, obj_type: type) -> bool:
    """Is ``super(T, obj).__delattr__`` ``object.__delattr__`` (the MRO walk CPython does)?"""
    try:
        search_type = super_vt.typevar.as_python_constant()
        mro = obj_type.__mro__
        start = mro.index(search_type) + 1
    except Exception:  # noqa: BLE001 - not a plain super(T, obj)
        return False
    for klass in mro[start:]:
        if "__delattr__" in vars(klass):
            return vars(klass)["__delattr__"] is object.__delattr__
    return False


def _replay_is_plain(cls: type) -> bool:
    """Before 2.13 Dynamo replays the deletion as ``del obj.name``, which runs ``cls.__delattr__``
    again: equal to one deletion only for ``object.__delattr__`` and ``nn.Module.__delattr__``."""
    import inspect

    import torch

    return inspect.getattr_static(cls, "__delattr__", None) in (object.__delattr__, torch.nn.Module.__delattr__)


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``SuperVariable.call_method(tx, name, args, kwargs)``."""
    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if name != "__delattr__" or call_kwargs or len(call_args) != 1 or getattr(instance, "specialized", False):
        return DEFER
    from torch._dynamo.variables import ConstantVariable, DeletedVariable
    from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

    obj = instance.objvar
    obj = realize(obj)
    if not isinstance(obj, UserDefinedObjectVariable) or not call_args[0].is_python_constant():
        return DEFER
    key = call_args[0].as_python_constant()
    cls = type(obj.value)
    if not isinstance(key, str) or not _resolves_to_object_delattr(instance, cls) or is_data_descriptor(cls, key):
        return DEFER
    side_effects = tx.output.side_effects
    if not side_effects.is_attribute_mutation(obj):
        return DEFER
    store = getattr(side_effects, "store_instance_dict_attr", None)
    if store is None and not _replay_is_plain(cls):
        return DEFER
    from ..dynamo_api import raise_observed
    from ..instance_dict import deletion_replays_as_recorded, guard_deletion_replay, instance_dict_contains

    present = instance_dict_contains(tx, obj, key)
    if present is None:
        return DEFER
    effects_begin()
    if not present:
        raise_observed(AttributeError, tx, f"super().__delattr__({key!r}) on {cls.__qualname__}")
    guard_deletion_replay(tx, obj, key)
    # Before 2.13: `del m.x; m.x = Module()` lost the submodule and kept the stale attribute
    # (the deletion replayed after the bookkeeping dicts' update), with and without tdcompat.
    if store is None and not deletion_replays_as_recorded(tx, obj, key):
        from ..dynamo_api import graph_break

        graph_break("module deletion replay", f"del {obj}.{key}",
                    "Dynamo would replay `del module.name` after the frame's updates of _parameters/_buffers/"
                    "_modules, deleting what the frame registered under that name")
    (store or side_effects.store_attr)(obj, key, DeletedVariable())
    return ConstantVariable.create(None)



PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`del module.x` (`super().__delattr__`) of a missing attribute **does not raise**, or '
             'raises for a later input that has it; `module.__dict__` / `vars(module)` **still show the '
             'deleted attribute** later in the frame (2.13, 2.15)',
         '2.5–2.7, 2.9–2.15 (2.8 breaks on `nn.Module.__delattr__`)',
         '(`>=2.5,!=2.8.*`)'),
    ),
    fixes="`del module.x` (`super().__delattr__`) of a missing attribute does not raise, or raises for a later "
    "input; on 2.13+ `module.__dict__`/`vars(module)` still show the deleted attribute (silently wrong)",
    upstream="torch/_dynamo/variables/misc.py: SuperVariable.call_method (object.__delattr__ branch)",
    mirrors="CPython object.__delattr__ (_PyObject_GenericSetAttrWithDict); open upstream",
    # 2.8 has no nn.Module.__delattr__ (a graph break before the super() call is reached) unless
    # module-delattr inlines it, which needs this patch there.
    torch=">=2.5",
    targets=(
        Target("torch._dynamo.variables.misc", "SuperVariable", "call_method", _call_method,
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=(
        "torch._dynamo.side_effects:SideEffects.has_pending_mutation_of_attr",
        "torch._dynamo.side_effects:SideEffects.is_attribute_mutation",
        "torch._dynamo.side_effects:SideEffects.load_attr",
        "torch._dynamo.side_effects:SideEffects.store_attr",
        "torch._dynamo.exc:raise_observed_exception",
        "torch._dynamo.variables:DeletedVariable",
    ),
    summary="super().__delattr__ checks presence (guarded) and records an instance-dict deletion",
    history=(
        ("2.5-2.7",
         "`super().__delattr__(name)` (every `del module.x`) records a deletion without looking: deleting a "
         "missing attribute raises nothing in compiled code, or, replayed as `DELETE_ATTR` under no guard, "
         "raises `AttributeError` for a later input that has it (measured on 2.5.1)"),
        ("2.8",
         "the pattern arises only with `module-delattr`: natively `del module.x` graph-breaks on "
         "`nn.Module.__delattr__` before the `super()` call is reached"),
        ("2.9-2.12", "as on 2.5-2.7 (measured on 2.11.0 and 2.12.1)"),
        ("2.13+",
         "as before, and the deletion is a `GENERIC_SETATTR` store that the instance-dict view "
         "(`SideEffectsProxyDict`) ignores: `'x' in module.__dict__`, `module.__dict__['x']` and `vars(module)` "
         "still show the deleted attribute (silently wrong on 2.13.0 and 2.15.0; fuzzer seed 173). Open upstream"),
    ),
)
