"""A module attribute deleted in the frame is looked up through ``__getattr__`` (torch <2.13).

Root cause: after ``del m.__dict__[name]`` (``nn.Module.__setattr__``'s ``remove_from``
when ``name`` becomes a parameter, buffer or submodule: TorchRL's lazily built value
estimator) or ``del m.name``, Dynamo records a ``DeletedVariable`` for ``name`` and a
later ``m.name`` in the frame reads that record: ``BuiltinVariable.call_getattr``
graph-breaks (``read deleted attribute``; 2.12: ``Attempted to read a deleted variable``)
and ``UnspecializedNNModuleVariable.var_getattr`` raises ``AttributeError``, so
``hasattr(m, name)`` is silently ``False``. CPython finds no instance attribute and calls
``nn.Module.__getattr__``, which returns the new entry of ``_parameters``/``_buffers``/
``_modules``. Measured: wrong or a break on 2.5.1-2.12.1, right on 2.13.0 (instance-dict
mutations are modelled as such: ``SideEffects.store_instance_dict_attr``).

The fix runs the class's ``__getattr__`` (``manually_trace_nn_module_getattr`` for
``nn.Module``'s own) for a module tracker whose ``name`` is recorded deleted in this
frame, where the class has no attribute of that name and the deletion replays in order
(:func:`tdcompat.instance_dict.order_module_deletion`, done by the patch that recorded it:
``instance-dict-writes``, ``super-delattr``, ``dunder-dict-replay``). Anything else defers.
Split out of ``instance-dict-writes`` (the same wrappers, 2.5-2.11) and extended to 2.12.
"""

from __future__ import annotations

from ..dynamo_api import const_str, module_tracker_types
from ..instance_dict import ANY_DELETED, deletion_tracker, order_module_deletion
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "module-deleted-attr"

_cache: dict = {}


def _module_types():
    """:func:`tdcompat.dynamo_api.module_tracker_types`, kept here for the gate's call-free test."""
    types = _cache.get("module_types")
    if types is None:
        types = _cache["module_types"] = module_tracker_types()
    return types


_MISSING = object()


def _deleted_module_attr(tx, obj, name):
    """``module.name`` after ``name`` was deleted from the module's instance dict in the
    frame (``nn.Module.__setattr__``'s ``remove_from``, or ``del module.name``): CPython finds no instance
    attribute and calls ``__getattr__`` (``nn.Module.__getattr__``: ``_parameters``,
    ``_buffers``, ``_modules``). Dynamo instead graph-breaks (``read deleted attribute``,
    ``BuiltinVariable.call_getattr``) or raises ``AttributeError``
    (``UserDefinedObjectVariable.var_getattr``: ``hasattr`` is silently ``False``).
    DEFER unless the class has no attribute of that name and ``__getattr__`` is a
    plain function."""
    import inspect
    import types

    if type(obj) not in _module_types() or not isinstance(name, str):
        return DEFER
    side_effects = tx.output.side_effects
    if not side_effects.has_pending_mutation_of_attr(obj, name):
        return DEFER
    from torch._dynamo import variables

    if not isinstance(side_effects.load_attr(obj, name, deleted_ok=True), variables.DeletedVariable):
        return DEFER
    cls = type(obj.value)
    if (cls.__getattribute__ is not object.__getattribute__
            or inspect.getattr_static(cls, name, _MISSING) is not _MISSING):
        return DEFER
    import torch

    getattr_fn = inspect.getattr_static(cls, "__getattr__", None)
    if not isinstance(getattr_fn, types.FunctionType) or not order_module_deletion(tx, obj, name, reorder=False):
        return DEFER  # a deletion this patch did not order: its replay may be wrong, leave it to Dynamo
    effects_begin()  # traces user code / reads the bookkeeping dicts under guards
    if getattr_fn is torch.nn.Module.__getattr__:
        return obj.manually_trace_nn_module_getattr(tx, name)
    from torch._dynamo.source import AttrSource

    source = AttrSource(obj.source, "__getattr__") if obj.source is not None else None
    method = variables.UserMethodVariable(getattr_fn, obj, source=source)
    return method.call_function(tx, [variables.ConstantVariable.create(name)], {})


@fail_safe(NAME)
def _call_getattr(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_getattr(tx, obj, name_var, default=None)`` (``LOAD_ATTR``, ``getattr``)."""
    if len(args) != 3 or kwargs:
        return DEFER
    tx, obj, name_var = args
    if type(obj) not in _module_types():
        return DEFER
    name = const_str(name_var)
    return DEFER if name is None else _deleted_module_attr(tx, obj, name)


@fail_safe(NAME)
def _module_var_getattr(wrapped, instance, args, kwargs):
    """``UnspecializedNNModuleVariable.var_getattr(tx, name)`` (``hasattr`` goes through it)."""
    if len(args) != 2 or kwargs:
        return DEFER
    return _deleted_module_attr(args[0], instance, args[1])


@gate(_call_getattr)
def _call_getattr_gate(original, handle):
    """What is installed on ``BuiltinVariable.call_getattr`` (every ``LOAD_ATTR``): while no
    attribute was deleted (the deletion tracker on ``SideEffects.store_attr`` notes every one),
    or for a receiver that is not a module tracker, the call goes straight to Dynamo (a dict
    truth test and a type test, no call; before the kinds are loaded the handler decides)."""

    def call_getattr(self, tx, obj, name_var, default=None):
        try:
            other = not ANY_DELETED or type(obj) not in _cache["module_types"]
        except Exception:  # noqa: BLE001
            other = False
        if other:
            return original(self, tx, obj, name_var, default)
        if default is None:  # as Dynamo called it (the handler reads getattr(obj, name) only)
            return handle(self, tx, obj, name_var)
        return handle(self, tx, obj, name_var, default)

    return call_getattr


@gate(_module_var_getattr)
def _module_var_getattr_gate(original, handle):
    """What is installed on ``UnspecializedNNModuleVariable.var_getattr`` (every attribute
    read of a module): while no attribute was deleted (see the deletion tracker), the call
    goes straight to Dynamo after one dict truth test."""

    def var_getattr(self, tx, name):
        if not ANY_DELETED:
            return original(self, tx, name)
        return handle(self, tx, name)

    return var_getattr


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: read deleted attribute` / `Attempted to read a deleted variable` (2.12), or '
             '`hasattr(m, "x")` **silently `False`**, after `m.x` was deleted in the frame and '
             'registered again as a parameter, buffer or submodule (`m.x = Module()` over a plain '
             "attribute: `nn.Module.__setattr__`'s `remove_from`; TorchRL's lazily built value "
             'estimator)',
         '2.5–2.12',
         '(`<2.13`)'),
    ),
    fixes="Unsupported: read deleted attribute / Attempted to read a deleted variable; hasattr(m, name) silently "
    "False: a module attribute deleted in the frame (remove_from, del m.name) then registered as a parameter, "
    "buffer or submodule (TorchRL's lazily built value estimator)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_getattr; "
    "torch/_dynamo/variables/nn_module.py: UnspecializedNNModuleVariable.var_getattr",
    mirrors="CPython: instance attribute missing -> type(m).__getattr__; torch 2.13 models instance-dict "
    "mutations (SideEffects.store_instance_dict_attr, pytorch/pytorch#174941)",
    torch="<2.13",  # measured: 2.12.1 fails, 2.13.0 passes natively (case clients_module_submodule_over_attribute)
    fixed_upstream="2.13: instance-dict mutations (SideEffects.store_instance_dict_attr)",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_getattr", _call_getattr_gate,
               params=("tx", "obj", "name_var")),
        Target("torch._dynamo.variables.nn_module", "UnspecializedNNModuleVariable", "var_getattr",
               _module_var_getattr_gate, params=("tx", "name")),
        # Notes every deletion, so the two gates above can tell a frame with none at once.
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", deletion_tracker(),
               params=("item", "name", "value")),
    ),
    requires=(
        "torch._dynamo.side_effects:SideEffects.has_pending_mutation_of_attr",
        "torch._dynamo.side_effects:SideEffects.load_attr",
        "torch._dynamo.variables:DeletedVariable",
        "torch._dynamo.source:AttrSource",
        "torch._dynamo.variables.nn_module:UnspecializedNNModuleVariable.manually_trace_nn_module_getattr",
        "torch._dynamo.variables:UserMethodVariable",
    ),
    summary="m.name after name was deleted from a module's instance dict in the frame goes through __getattr__",
    history=(
        ("2.5-2.11",
         "after `del m.__dict__[name]` (`nn.Module.__setattr__`'s `remove_from`) or `del m.name`, a later "
         "`m.name` in the frame reads the deletion record: `Unsupported: read deleted attribute`, and "
         "`hasattr(m, name)` is silently `False` where CPython calls `nn.Module.__getattr__` (TorchRL's lazily "
         "built value estimator)"),
        ("2.12", "the same; the break reads `Attempted to read a deleted variable` (measured on 2.12.1)"),
        ("2.13+",
         "fixed upstream: instance-dict mutations are modelled as such (`SideEffects.store_instance_dict_attr`, "
         "pytorch/pytorch#174941); right on 2.13.0"),
    ),
)
