"""skipped-module-init: ``nn.Module.__init__(self)`` called explicitly in the compiled region.

Symptom: ``Attempted to call function marked as skipped`` naming
``install_generation_tagging_init.<locals>.patched_init`` (2.7 on), or
``'skip function install_generation_tagging_init.<locals>.patched_init ...'``
(2.5, 2.6). tensordict 0.8-0.14 hits it in ``td.to_module(module)`` on a nested
``TensorDictParams`` (documented cell 3): ``copy()`` -> ``_clone`` ->
``TensorDictParams._new_unsafe`` -> ``TensorDictParams.__init__``, which starts
with ``nn.Module.__init__(self)``.

Root cause (every release from 2.5 to 2.15): at import, Dynamo replaces
``torch.nn.Module.__init__`` by its own wrapper ``patched_init`` (in
``torch/_dynamo/mutation_guard.py: install_generation_tagging_init``), which runs
the original init and then tags the module as created at runtime. Dynamo never
traces that wrapper: ``trace_rules.lookup_inner`` maps any function named
``patched_init`` to ``SkipFunctionVariable``. Where Dynamo itself reaches the
init it swaps the wrapper for the original (``unpatched_nn_module_init``):
``super().__init__()`` (``misc.py: SuperVariable.call_method``), ``self.__init__``
and instance attribute lookups (``user_defined.py``). The explicit class-attribute
call ``nn.Module.__init__(self)`` has no such swap, so it reaches the skipped
wrapper. tensordict 0.15 works around it (``TensorDictParams.__init__`` calls
``super(TensorCollection, self).__init__()`` when compiling).

The patch wraps ``SkipFunctionVariable.call_function`` and handles only a call of
Dynamo's own ``patched_init`` (the current ``torch.nn.Module.__init__``, defined
in ``torch._dynamo.mutation_guard``) on a module created in the compiled region,
with no other argument: exactly the case the ``super()`` branch accepts. It
traces ``unpatched_nn_module_init`` instead, as that branch does (under
``do_not_convert_to_tracable_parameter``). Like the ``super()`` path it does not
replay ``GenerationTracker.tag``. Any other call (re-initialising an existing
module, extra arguments) keeps Dynamo's graph break.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "skipped-module-init"
_WRAPPER_QUALNAME = "install_generation_tagging_init.<locals>.patched_init"
_WRAPPER_MODULE = "torch._dynamo.mutation_guard"


def _is_dynamo_init_wrapper(fn) -> bool:
    if getattr(fn, "__qualname__", None) != _WRAPPER_QUALNAME:
        return False
    if getattr(fn, "__module__", None) != _WRAPPER_MODULE:
        return False
    import torch

    return fn is torch.nn.Module.__init__


def _is_new_object(vt) -> bool:
    from torch._dynamo.side_effects import AttributeMutationNew
    from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

    # 2.6 on: mutation_type; 2.5: mutable_local
    mutation = getattr(vt, "mutation_type", None) or getattr(vt, "mutable_local", None)
    return isinstance(vt, UserDefinedObjectVariable) and isinstance(mutation, AttributeMutationNew)


@fail_safe(NAME)
def _call_function(wrapped, instance, args, kwargs):
    if not _is_dynamo_init_wrapper(getattr(instance, "value", None)):
        return DEFER
    if len(args) == 3 and not kwargs:
        tx, call_args, call_kwargs = args
    else:
        return DEFER
    if call_kwargs or len(call_args) != 1 or not _is_new_object(call_args[0]):
        return DEFER
    from torch._dynamo.create_parameter_op import do_not_convert_to_tracable_parameter
    from torch._dynamo.mutation_guard import unpatched_nn_module_init
    from torch._dynamo.variables.functions import UserFunctionVariable

    effects_begin()  # inlines nn.Module.__init__
    with do_not_convert_to_tracable_parameter():
        return UserFunctionVariable(unpatched_nn_module_init).call_function(tx, list(call_args), {})


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: Attempted to call function marked as skipped` '
             '(`install_generation_tagging_init.<locals>.patched_init`), e.g. tensordict 0.8–0.14 '
             '`to_module` on nested `TensorDictParams`',
         'every release (triggered by tensordict 0.8–0.14)',
         '(`>=2.5`)'),
    ),
    fixes="Attempted to call function marked as skipped: install_generation_tagging_init.<locals>.patched_init "
    "(nn.Module.__init__(self) in the compiled region; tensordict 0.8-0.14 to_module on nested TensorDictParams)",
    upstream="torch/_dynamo/variables/functions.py: SkipFunctionVariable.call_function "
    "(cf. misc.py: SuperVariable.call_method, nn.Module.__init__ branch)",
    mirrors="open upstream (docs/upstream/skipped-module-init/: the same swap at "
    "UserDefinedClassVariable.tp_getattro_impl, for any receiver; this patch only for modules made in the "
    "region); tensordict 0.15 works around it in TensorDictParams.__init__",
    torch=">=2.5",
    targets=(
        Target(
            "torch._dynamo.variables.functions",
            "SkipFunctionVariable",
            "call_function",
            _call_function,
            params=("tx", "args", "kwargs"),
        ),
    ),
    requires=(
        "torch._dynamo.mutation_guard:unpatched_nn_module_init",
        "torch._dynamo.create_parameter_op:do_not_convert_to_tracable_parameter",
        "torch._dynamo.side_effects:AttributeMutationNew",
        "torch._dynamo.variables.functions:UserFunctionVariable",
        "torch._dynamo.variables.user_defined:UserDefinedObjectVariable",
    ),
    summary="nn.Module.__init__(self) on a module made in the compiled region traces the unwrapped init",
    history=(
        ("2.5-2.6",
         "`nn.Module.__init__(self)` called explicitly in the region reaches Dynamo's own wrapper, which it "
         "never traces: `'skip function install_generation_tagging_init.<locals>.patched_init ...'`"),
        ("2.7+",
         "`Attempted to call function marked as skipped` "
         "(`install_generation_tagging_init.<locals>.patched_init`), every release measured to 2.15. tensordict "
         "0.8-0.14 hit it in `to_module` on a nested `TensorDictParams` (documented cell 3); tensordict 0.15 "
         "works around it. Open upstream"),
    ),
)
