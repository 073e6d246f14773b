"""The benchmark workloads, as a user would write them in a training loop.

Each workload is ``make() -> (step, args[, after])``; ``step(*args)`` is the
function that gets compiled and ``after(result)``, if given, runs eagerly after
each step (the backward pass: ``Tensor.backward`` inside the compiled function
is a graph break on every torch release, so users call it outside). Documented
workloads need tensordict; neutral ones touch none of the patched patterns.
"""

from __future__ import annotations

import torch
from torch import nn


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))


def _params(module):
    from tensordict import TensorDictParams, from_module

    return TensorDictParams(from_module(module).data.clone())


def _swap_step(x, params, module):
    with params.to_module(module):
        out = module(x)
    return out.sum()


def tdparams():
    module = _mlp()
    return _swap_step, (torch.randn(64, 16), _params(module), module)


def plain_tensordict():
    module = _mlp()
    return _swap_step, (torch.randn(64, 16), _params(module)._param_td, module)


def _nested_step(x, params, module):
    with params.to_module(module):
        out = module.inner(x) + module.params["a"]
    return out.sum()


def nested_tdparams():
    from tensordict import TensorDict, TensorDictParams, from_module

    module = nn.Module()
    module.inner = _mlp()
    module.params = TensorDictParams(TensorDict(a=torch.zeros(4)))
    params = TensorDictParams(from_module(module).data.clone())
    return _nested_step, (torch.randn(64, 16), params, module)


def _rebuild_step(params, x):
    from tensordict import TensorDict

    td = TensorDict(**params)
    return (td["w"] * x).sum() + td["b"].sum()


def tensordict_from_params():
    from tensordict import TensorDict, TensorDictParams

    params = TensorDictParams(TensorDict(w=torch.randn(64, 16), b=torch.randn(4)))
    return _rebuild_step, (params, torch.randn(64, 16))


def _loss_step(obs, actor_params, critic_params, target_params, actor, critic):
    with actor_params.to_module(actor):
        action = actor(obs)
    with critic_params.to_module(critic):
        value = critic(torch.cat([obs, action], -1))
    with target_params.to_module(critic):
        target = critic(torch.cat([obs, action.detach()], -1)).detach()
    return (value - 0.99 * target).pow(2).mean() - value.mean()


def torchrl_loss():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    critic = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 1))
    critic_params = _params(critic)
    target = critic_params.data.clone()
    return _loss_step, (torch.randn(64, 16), _params(actor), critic_params, target, actor, critic), _backward


def _backward(loss):
    loss.backward()


def _train_step(x, y, model):
    return nn.functional.mse_loss(model(x), y)


def neutral_mlp():
    model = _mlp()
    return _train_step, (torch.randn(64, 16), torch.randn(64, 4), model), _backward


def _dict_heavy(batch):
    out = dict(batch)
    out.update({f"{k}_sq": v * v for k, v in batch.items()})
    merged = {**out, "total": sum(v.sum() for v in out.values())}
    keys = [k for k in merged if k.endswith("_sq")]
    return merged["total"] + sum(merged[k].mean() for k in keys) + len(merged)


def neutral_dicts():
    torch.manual_seed(0)
    return _dict_heavy, ({f"k{i}": torch.randn(32) for i in range(12)},)


class _Config:
    """A plain object: the attribute reads Dynamo does on every user object."""

    def __init__(self):
        self.scale = 0.5
        self.shift = 1.0
        self.names = ("a", "b")


def _plain_step(x, cfg, model, extra):
    h = model(x) * cfg.scale + cfg.shift
    parts = {cfg.names[0]: h, cfg.names[1]: h.relu()}
    merged = {**parts, **extra, "n": len(parts)}
    return sum(v.sum() for k, v in merged.items() if k != "n") + merged["n"]


def neutral_plain():
    torch.manual_seed(0)
    inner = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 16), nn.Tanh()))
    model = nn.Sequential(nn.Sequential(inner, nn.Linear(16, 8)), nn.Sequential(nn.ReLU(), nn.Linear(8, 8)))
    return _plain_step, (torch.randn(8, 16), _Config(), model, {"c": torch.randn(8), "d": torch.randn(8)})


DOCUMENTED = {
    "tdparams_to_module": tdparams,
    "plain_tensordict_to_module": plain_tensordict,
    "nested_tdparams_to_module": nested_tdparams,
    "tensordict_from_params": tensordict_from_params,
    "torchrl_loss_step": torchrl_loss,
}
NEUTRAL = {"neutral_mlp_step": neutral_mlp, "neutral_dict_heavy": neutral_dicts,
           "neutral_plain_object": neutral_plain}
