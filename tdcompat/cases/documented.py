"""The four cells of the seed notebook (shared/seeds/compiling-tensordictparams.md).

They need tensordict; the catalog skips them with a clear line when it is absent.
"""

from __future__ import annotations

import torch

from .harness import GRAPH_BREAK, Case, CaseList, Expect


def _module_with_params():
    from tensordict import TensorDictParams, from_module

    module = torch.nn.Module()
    module.params = torch.nn.Parameter(torch.randn(3))
    params2 = from_module(module).data.clone()
    params2 *= 0
    return module, TensorDictParams(params2)


def _swap_and_add(z, params2, module):
    with params2.to_module(module):
        out = z + module.params
    return out


def _cell1_inputs():
    module, params2 = _module_with_params()
    return torch.zeros(()), params2, module


def _cell2_inputs():
    module, params2 = _module_with_params()
    return torch.zeros(()), params2._param_td, module


def _cell3_inputs():
    from tensordict import TensorDict, TensorDictParams, from_module

    module = torch.nn.Module()
    module.params = TensorDictParams(TensorDict(a=0.0))
    params2 = from_module(module).data.clone()
    params2 *= 0
    return torch.zeros(()), TensorDictParams(params2), module


def _nested_swap(z, params2, module):
    with params2.to_module(module):
        out = z + module.params["a"]
    return out


def _cell4_inputs():
    from tensordict import TensorDict, TensorDictParams

    return (TensorDictParams(TensorDict(a=1, b=2, c=True)),)


def _add1(td):
    from tensordict import TensorDict

    return TensorDict(**td) + 1


TD = ("eager", "aot_eager", "inductor")

CASES = CaseList()
CASES.add(
    Case(
        "cell1_to_module_tensordictparams",
        ("weakref-reconstruct",),
        _swap_and_add,
        _cell1_inputs,
        unpatched=(Expect("==2.6.*", GRAPH_BREAK),),
        needs_tensordict=True,
        backends=TD,
        doc="`with params.to_module(module)` for a TensorDictParams (documented as working)",
    ),
    Case(
        "cell2_to_module_plain_tensordict",
        ("mutable-mapping-setattr", "weakref-reconstruct"),
        _swap_and_add,
        _cell2_inputs,
        # On 2.6-2.8 the lost write is tensordict's private ``_last_op``, which the
        # snapshot does not compare (see snapshot._tensordict_snapshot); the loss
        # itself is proven by the pure-Python cases in gap_setattr.
        unpatched=(Expect("<2.6", GRAPH_BREAK),),
        needs_tensordict=True,
        backends=TD,
        doc="`with td.to_module(module)` for a plain TensorDict: "
            "setattr(MutableMappingVariable(TensorDict), _last_op, ...)",
    ),
    Case(
        "cell3_to_module_nested_tensordictparams",
        ("instance-dict-writes", "input-context-manager", "weakref-reconstruct", "skipped-module-init"),
        _nested_swap,
        _cell3_inputs,
        unpatched=(Expect("<2.11", GRAPH_BREAK), Expect(">=2.11", GRAPH_BREAK, tensordict="<0.15")),
        needs_tensordict=True,
        backends=TD,
        doc="nested TensorDictParams: GetAttrVariable(..., __dict__) __setitem__",
    ),
    Case(
        "cell4_tensordict_from_tensordictparams",
        ("module-mapping-dict",),
        _add1,
        _cell4_inputs,
        unpatched=(Expect("<2.10", GRAPH_BREAK),),
        needs_tensordict=True,
        backends=TD,
        doc="`TensorDict(**TensorDictParams(...)) + 1`: dict(): (UnspecializedNNModuleVariable(TensorDictParams),)",
    ),
)
