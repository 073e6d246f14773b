"""``hash()`` of a constant is not traced (torch 2.5-2.12).

Root cause: ``BuiltinVariable`` (torch/_dynamo/variables/builtin.py) has no
``call_hash`` before 2.13, and ``hash`` is not among the builtins it folds over
constant arguments (``BuiltinVariable._constant_fold_functions``), so
``hash((id(self), 3))`` is ``Unsupported: builtin: hash [TupleVariable]`` (2.5,
2.6) or ``Failed to trace builtin operator hash`` (2.7-2.12), though every
argument is known at trace time. TorchRL meets it through tensordict 0.14's
``TensorDictParams.__hash__`` (``hash((id(self), id(self.__dict__.get("_param_td"))))``):
on 2.10 ``nn.Module.named_modules()`` hashes each submodule into its ``memo``
set and Dynamo traces that ``__hash__`` as a frame of its own, which fails;
those two reasons are 47 of the breaks of the eight losses on 2.10.0.

2.13 added ``BuiltinVariable.call_hash`` (``object_protocol.generic_hash``), which
folds the hash of a constant. The fix here is the same for constants: ``hash`` is
constant-foldable (``can_constant_fold_through``), so Dynamo's own folding
handler computes ``hash(value)`` at trace time when every argument is a constant
and leaves anything else (a tensor, a user object) to the unsupported path it
had. The value is the one eager computes in the same process.
"""

from __future__ import annotations

from ..spec import Patch, Target

NAME = "hash-constant-fold"


def _can_constant_fold_through(wrapped, instance, args, kwargs):
    """``BuiltinVariable.can_constant_fold_through()``: asked once per argument types
    (``_make_handler`` is cached) and by ``has_constant_handler``; one identity test and no
    call (this runs for every builtin Dynamo meets)."""
    try:
        if instance.fn is hash and not args and not kwargs:
            return True
    except AttributeError:  # not the BuiltinVariable this torch is expected to have
        pass
    return wrapped(*args, **kwargs)


PATCH = Patch(
    name=NAME,
    fixes="`hash(<constant>)` (e.g. `hash((id(self), id(other)))` in a `__hash__`, tensordict 0.14's "
    "TensorDictParams) is a graph break (torch <2.13)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.can_constant_fold_through "
    "(_constant_fold_functions has no hash)",
    mirrors="torch 2.13: BuiltinVariable.call_hash (object_protocol.generic_hash)",
    torch="<2.13",
    fixed_upstream="2.13: BuiltinVariable.call_hash",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "can_constant_fold_through",
               _can_constant_fold_through),
    ),
    summary="hash() of a constant is folded at trace time, as 2.13 does",
    history=(
        ("2.5-2.6",
         "no `BuiltinVariable.call_hash` and `hash` is not constant-folded: `hash((id(self), 3))` is "
         "`Unsupported: builtin: hash [TupleVariable]`"),
        ("2.7-2.12",
         "`Failed to trace builtin operator hash`. On 2.10 tensordict 0.14's `TensorDictParams.__hash__`, traced "
         "from `nn.Module.named_modules()`'s memo set, is the top break reason of TorchRL's losses (47 breaks "
         "over eight losses on 2.10.0, with the skipped `_default_device` it causes)"),
        ("2.13+",
         "fixed upstream: `BuiltinVariable.call_hash` (`object_protocol.generic_hash`) folds the hash of a "
         "constant"),
    ),
)
