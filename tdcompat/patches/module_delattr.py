"""``del module.name`` runs ``nn.Module.__delattr__`` (torch 2.5-2.8).

Root cause, in ``BuiltinVariable.call_delattr`` (torch/_dynamo/variables/builtin.py):

* 2.5-2.7 lower ``delattr(m, name)`` to ``setattr(m, name, DeletedVariable())``.
  ``UnspecializedNNModuleVariable.call_method`` turns that back into an inlined
  ``nn.Module.__delattr__`` only when the class's ``__setattr__`` is
  ``nn.Module.__setattr__``; a module class with its own ``__setattr__`` (TorchRL's
  ``LossModule``) has that method traced with the sentinel as the value, where CPython
  never calls ``__setattr__`` at all: ``isinstance(DeletedVariable(), ...)`` is a graph
  break (SAC's ``delattr(self, "_target_entropy")``, issue 14).
* 2.8 calls ``m.__delattr__`` as a method, and ``UnspecializedNNModuleVariable`` has no
  such method (``Dynamo does not support tracing method __delattr__ of nn.Module``).

torch 2.9 inlines ``nn.Module.__delattr__`` for both (``call_delattr`` ->
``call_method("__delattr__")``, which ``UnspecializedNNModuleVariable.call_method``
inlines; ``_nn_module_method_ids`` lets it through). The fix does that here, only for a
module whose class keeps ``nn.Module.__delattr__`` (on 2.5-2.7 only where its
``__setattr__`` is its own). ``nn.Module.__delattr__`` ends in ``super().__delattr__``
for an attribute outside the bookkeeping dicts, which ``super-delattr`` makes CPython's
(presence checked under a guard, the replay ordered before a re-registration of the
name; on a module made in the frame it knows the names from Dynamo's placeholder, which
holds ``nn.Module``'s bookkeeping, and the frame's stores): this patch needs it, on 2.8 too.
"""

from __future__ import annotations

import functools

from ..dynamo_api import const_str, module_tracker_types, torch_release
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "module-delattr"

@functools.lru_cache(maxsize=None)
def _lowers_to_setattr() -> bool:
    """2.5-2.7: ``call_delattr`` is ``call_setattr`` with a ``DeletedVariable``."""
    return torch_release() < (2, 8)


def _call_delattr_gate(wrapped, instance, args, kwargs):
    """What is installed on ``BuiltinVariable.call_delattr``: anything but a module goes
    straight to Dynamo after one type test."""
    try:
        if type(args[1]) not in module_tracker_types():
            return wrapped(*args, **kwargs)
    except Exception:  # noqa: BLE001  (not what this torch was expected to be: the handler decides)
        pass
    return _call_delattr(wrapped, instance, args, kwargs)


@fail_safe(NAME)
def _call_delattr(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_delattr(tx, obj, name_var)`` on a module."""
    if kwargs or len(args) != 3:
        return DEFER
    tx, obj, name_var = args
    if type(obj) not in module_tracker_types() or const_str(name_var) is None:
        return DEFER
    import inspect

    import torch

    cls = type(getattr(obj, "value", None))
    if inspect.getattr_static(cls, "__delattr__", None) is not torch.nn.Module.__delattr__:
        return DEFER  # a class's own __delattr__: Dynamo's answer stands
    if _lowers_to_setattr() and inspect.getattr_static(cls, "__setattr__", None) is torch.nn.Module.__setattr__:
        return DEFER  # Dynamo inlines nn.Module.__delattr__ itself there
    from torch._dynamo.variables import UserFunctionVariable

    effects_begin()
    return tx.inline_user_function_return(UserFunctionVariable(torch.nn.Module.__delattr__), [obj, name_var], {})


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`del module.x`: `isinstance(DeletedVariable(), ...)` on a module class with its own `__setattr__` "
         "(2.5–2.7), `Dynamo does not support tracing method __delattr__ of nn.Module` on any module (2.8): "
         "TorchRL's SAC `delattr(self, '_target_entropy')`",
         "2.5–2.8",
         "(`<2.9`): `nn.Module.__delattr__` inlined as 2.9 does"),
    ),
    fixes="`del module.x` on a module class with its own __setattr__ (isinstance(DeletedVariable(), ...), "
    "2.5-2.7) or on any module (Dynamo does not support tracing method __delattr__ of nn.Module, 2.8): "
    "TorchRL's SAC `delattr(self, '_target_entropy')`",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_delattr",
    mirrors="torch 2.9: call_delattr calls __delattr__, which UnspecializedNNModuleVariable.call_method inlines "
    "(nn.Module.__delattr__ allowed in _nn_module_method_ids)",
    torch="<2.9",
    fixed_upstream="2.9: nn.Module.__delattr__ inlined",
    needs=("super-delattr",),
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_delattr", _call_delattr_gate,
               params=("tx", "obj", "name_var")),
    ),
    requires=("torch._dynamo.symbolic_convert:InstructionTranslatorBase.inline_user_function_return",),
    summary="del module.x inlines nn.Module.__delattr__, as torch 2.9 does",
    history=(
        ("2.5-2.7",
         "`delattr(m, x)` becomes `setattr(m, x, DeletedVariable())`; a module class with its own `__setattr__` "
         "has it traced with the sentinel (`isinstance(DeletedVariable(), ...)`: a graph break; TorchRL's "
         "`LossModule`)"),
        ("2.8", "`m.__delattr__` is not a method Dynamo traces on a module: every `del m.x` is a graph break"),
        ("2.9+", "fixed upstream: `nn.Module.__delattr__` is inlined; measured passing on 2.9.1"),
    ),
)
