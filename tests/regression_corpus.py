"""Ordinary compiled programs that walk near the patched gaps without hitting them.

``python tests/regression_corpus.py`` runs every program under
``torch.compile(backend=CompileCounter)`` (default ``fullgraph=False``, so graph
breaks are counted, not raised) and prints, per program, the result and input
state after the calls, the number of graphs, graph breaks and recompiles, as
JSON. ``test_regression_corpus.py`` runs it twice in fresh interpreters, with
tdcompat active and with ``TDCOMPAT_DISABLE='*'``, and requires identical
reports: a patch that changes a program it was not written for is a bug.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import sys
import warnings
from collections import OrderedDict, defaultdict, namedtuple
from collections.abc import Mapping

import torch
from torch import nn

from tdcompat.cases.mappings import StoreMapping

PROGRAMS = {}
#: program -> torch range where it does touch a patched gap (skipped there)
GAP_ON = {}


def program(gap_on=None):
    def register(fn):
        PROGRAMS[fn.__name__] = fn
        if gap_on:
            GAP_ON[fn.__name__] = gap_on
        return fn

    return register


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


# Each program returns (fn, inputs_builder).

@program()
def mlp_forward():
    return (lambda m, x: m(x)), lambda: (mlp(), torch.randn(3, 4))


@program()
def mlp_backward():
    def f(m, x):
        loss = m(x).pow(2).sum()
        loss.backward()
        return loss.detach()
    return f, lambda: (mlp(), torch.randn(3, 4))


@program()
def dict_comprehension():
    return (lambda d: {k: v * 2 for k, v in d.items()}), lambda: ({"a": torch.ones(2), "b": torch.zeros(2)},)


@program(gap_on="<2.6")  # 2.5: `d.update(c=x)` (keywords alone) is a graph break; dict-update-args traces it
def dict_update_pop_setdefault():
    def f(d, x):
        d.update(c=x)
        d.setdefault("e", x + 1)
        y = d.pop("a")
        return y + d["c"], len(d)
    return f, lambda: ({"a": torch.ones(2), "b": torch.zeros(2)}, torch.randn(2))


@program()
def dict_call_on_plain_dict():
    return (lambda d: dict(d, z=torch.ones(1))), lambda: ({"a": torch.ones(2)},)


@program()
def dict_splat_merge():
    return (lambda d: {**d, "x": d["a"] + 1}), lambda: ({"a": torch.ones(2), "b": torch.zeros(1)},)


@program()
def kwargs_splat_plain_dict():
    def g(a, b):
        return a * b
    return (lambda d: g(**d)), lambda: ({"a": torch.ones(2), "b": torch.full((2,), 3.0)},)


@program()
def ordered_dict_ops():
    def f(d):
        d.move_to_end("a")
        return list(d.keys()), sum(d.values())
    return f, lambda: (OrderedDict(a=torch.ones(2), b=torch.ones(2) * 2),)


@program()
def defaultdict_ops():
    def f(d, x):
        d["new"].append(x)
        return len(d["new"]), x.sum()
    return f, lambda: (defaultdict(list), torch.randn(3))


class LoudDict(dict):
    def __getitem__(self, key):
        return super().__getitem__(key) * 2


@program()
def dict_subclass_getitem():
    return (lambda d: d["a"] + 1), lambda: (LoudDict(a=torch.ones(2)),)


class ReadOnly(Mapping):
    def __init__(self, data):
        self._data = dict(data)

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def items(self):
        return self._data.items()


@program()
def mapping_explicit_items():
    return (lambda m: sum(v.sum() for _, v in m.items())), lambda: (ReadOnly(dict(a=torch.ones(2), b=torch.ones(3))),)


@program()
def mapping_getitem_and_len():
    return (lambda m: m["a"] * len(m)), lambda: (ReadOnly(dict(a=torch.ones(2), b=torch.ones(3))),)


class Store(StoreMapping):
    def __init__(self):
        self._store = {}


def _store():
    s = Store()
    s["a"] = torch.ones(2)
    return s


@program()
def mutable_mapping_item_writes():
    def f(s, x):
        s["b"] = x * 2
        return s["a"] + s["b"]
    return f, lambda: (_store(), torch.randn(2))


@program()
def mutable_mapping_isinstance():
    return (lambda s, x: x + 1 if isinstance(s, Mapping) else x), lambda: (_store(), torch.randn(2))


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.lin(x)


@program()
def module_attribute_counter():
    return (lambda m, x: m(x)), lambda: (Counting(), torch.randn(1, 2))


class CustomSetattr(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
        object.__setattr__(self, "log", [])

    def __setattr__(self, name, value):
        if name == "note":
            self.log.append(value)
        super().__setattr__(name, value)

    def forward(self, x):
        return x * self.w


@program()
def module_custom_setattr_read():
    return (lambda m, x: m(x)), lambda: (CustomSetattr(), torch.randn(2))


class CustomGetattr(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(2, 2)

    def __getattr__(self, name):
        if name == "alias":
            return self.inner
        return super().__getattr__(name)

    def forward(self, x):
        return self.alias(x)


@program()
def module_custom_getattr():
    return (lambda m, x: m(x)), lambda: (CustomGetattr(), torch.randn(1, 2))


@program()
def module_dict_read():
    return (lambda m, x: m.__dict__["_modules"]["0"](x)), lambda: (mlp(), torch.randn(1, 4))


@program(gap_on="<2.9")  # vars() of a user object: instance-dict-vars
def vars_read_of_object():
    class_ = Point
    return (lambda p, x: x * vars(p)["x"]), lambda: (class_(2.0, 3.0), torch.randn(2))


@program()
def module_dict_container():
    def f(md, x):
        for _name, layer in md.items():
            x = layer(x)
        return x
    return f, lambda: (nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.Linear(2, 2)}), torch.randn(1, 2))


@program()
def parameter_dict_container():
    return (lambda pd, x: x * pd["w"] + pd["b"]), lambda: (
        nn.ParameterDict({"w": nn.Parameter(torch.ones(2)), "b": nn.Parameter(torch.zeros(2))}), torch.randn(2))


@program()
def module_list_loop():
    def f(ml, x):
        for layer in ml:
            x = layer(x)
        return x
    return f, lambda: (nn.ModuleList([nn.Linear(2, 2) for _ in range(3)]), torch.randn(1, 2))


@dataclasses.dataclass
class Point:
    x: float
    y: float


@program()
def dataclass_read_write():
    def f(p, t):
        p.x = p.x + 1
        return t * p.x + p.y
    return f, lambda: (Point(1.0, 2.0), torch.randn(2))


Pair = namedtuple("Pair", ["a", "b"])


@program()
def namedtuple_build_and_read():
    return (lambda p: Pair(p.b, p.a + 1)), lambda: (Pair(torch.ones(2), torch.zeros(2)),)


class Slotted:
    __slots__ = ("value", "scale")

    def __init__(self):
        self.value = 1.0
        self.scale = torch.ones(2)


@program()
def slots_read_write():
    def f(s, x):
        s.value = 3.0
        return x * s.scale * s.value
    return f, lambda: (Slotted(), torch.randn(2))


class WithProperty:
    def __init__(self):
        self._t = torch.ones(2)

    @property
    def t(self):
        return self._t

    @t.setter
    def t(self, value):
        self._t = value


@program()
def property_setter():
    def f(o, x):
        o.t = o.t + x
        return o.t * 2
    return f, lambda: (WithProperty(), torch.randn(2))


class Plain:
    def __init__(self):
        self.a = torch.ones(2)


@program()
def plain_object_new_attribute():
    def f(o, x):
        o.b = x + o.a
        del o.a
        return o.b
    return f, lambda: (Plain(), torch.randn(2))


class Scope:
    def __init__(self):
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        return False


@program(gap_on="<2.14")  # `with` on an input object: input-context-manager
def user_context_manager():
    def f(scope, x):
        with scope:
            y = x * (scope.depth + 1)
        return y
    return f, lambda: (Scope(), torch.randn(2))


@program()
def no_grad_context():
    def f(x):
        with torch.no_grad():
            y = x * 2
        return y + x
    return f, lambda: (torch.randn(2, requires_grad=True),)


@program()
def contextlib_nullcontext():
    def f(x):
        with contextlib.nullcontext():
            return x.cos()
    return f, lambda: (torch.randn(2),)


@program()
def closure_mutates_list():
    log = []

    def f(x):
        log.append(1)
        return x + len(log)
    return f, lambda: (torch.randn(2),)


@program()
def closure_nonlocal_counter():
    def make():
        count = 0

        def f(x):
            nonlocal count
            count += 1
            return x * count
        return f
    return make(), lambda: (torch.randn(2),)


@program()
def closure_mutates_object():
    box = Plain()

    def f(x):
        box.a = box.a + x
        return box.a.sum()
    return f, lambda: (torch.randn(2),)


def _hooked():
    m = mlp()
    m.register_forward_hook(lambda mod, inp, out: out * 2)
    m.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))
    return m


@program()
def module_hooks():
    return (lambda m, x: m(x)), lambda: (_hooked(), torch.randn(1, 4))


@program()
def state_dict_keys():
    return (lambda m, x: x * len(m.state_dict())), lambda: (mlp(), torch.randn(2))


@program()
def named_parameters_loop():
    return (lambda m: sum(p.sum() for _, p in m.named_parameters())), lambda: (mlp(),)


@program()
def deque_ops():
    def f(q, x):
        q.append(x)
        return q.popleft() + x
    return f, lambda: (collections.deque([torch.ones(2)]), torch.randn(2))


@program()
def list_of_dicts():
    return (lambda rows: torch.stack([r["v"] for r in rows]).sum(0)), lambda: (
        [{"v": torch.ones(2)}, {"v": torch.zeros(2)}],)


# -- tensordict operations users compile every day -------------------------------
# TensorDict construction inside the graph runs TensorDict.__init__, which writes
# attributes on a new MutableMapping: a patched gap on 2.6-2.8.
_TD_MADE_IN_GRAPH = ">=2.6,<2.9"


def _td():
    from tensordict import TensorDict

    return TensorDict(a=torch.ones(3), b=torch.zeros(3, 2), batch_size=[3])


@program(gap_on=_TD_MADE_IN_GRAPH)
def td_construction():
    def f(x):
        from tensordict import TensorDict

        return TensorDict(a=x, b=x * 2, batch_size=[2])["b"]
    return f, lambda: (torch.randn(2),)


@program()
def td_key_indexing():
    return (lambda td: td["a"] + td["b"].sum(-1)), lambda: (_td(),)


@program(gap_on=_TD_MADE_IN_GRAPH)
def td_batch_indexing():
    return (lambda td: td[0]["a"]), lambda: (_td(),)


@program(gap_on=_TD_MADE_IN_GRAPH)
def td_apply():
    return (lambda td: td.apply(lambda t: t * 2)["b"]), lambda: (_td(),)


@program()
def td_update_in_place():
    def f(td, x):
        td.set_("a", x)
        return td["a"] * 2
    return f, lambda: (_td(), torch.randn(3))


@program(gap_on=_TD_MADE_IN_GRAPH)
def td_select():
    return (lambda td: td.select("a")["a"] + 1), lambda: (_td(),)


@program(gap_on=_TD_MADE_IN_GRAPH)
def td_arithmetic():
    return (lambda td: (td * 2 + 1)["a"]), lambda: (_td(),)


def _cell1_like():
    from tensordict import TensorDictParams, from_module

    module = nn.Module()
    module.params = nn.Parameter(torch.randn(3))
    params = from_module(module).data.clone()
    params *= 0
    return torch.zeros(()), TensorDictParams(params), module


@program(gap_on="==2.6.*")  # weakref-reconstruct
def td_to_module_params():
    def f(z, params, module):
        with params.to_module(module):
            out = z + module.params
        return out
    return f, _cell1_like


NEEDS_TENSORDICT = {name for name in PROGRAMS if name.startswith("td_")}


# -- the runner ------------------------------------------------------------------

def jsonable(snap):
    if isinstance(snap, torch.Tensor):
        return ["tensor", str(snap.dtype), list(snap.shape), snap.double().round(decimals=4).flatten().tolist()]
    if isinstance(snap, dict):
        return {str(k): jsonable(v) for k, v in snap.items()}
    if isinstance(snap, (list, tuple)):
        return [jsonable(v) for v in snap]
    if isinstance(snap, (bool, int, float, str)) or snap is None:
        return snap
    return repr(snap)


def run(name):
    import torch._dynamo
    from torch._dynamo.testing import CompileCounterWithBackend
    from torch._dynamo.utils import counters

    from tdcompat.cases.snapshot import snapshot

    torch._dynamo.reset()
    counters.clear()
    fn, inputs = PROGRAMS[name]()
    counter = CompileCounterWithBackend("eager")
    compiled = torch.compile(fn, backend=counter)
    out = []
    torch.manual_seed(0)
    first = inputs()
    out.append(jsonable(snapshot((compiled(*first), first))))
    frames = counter.frame_count
    for _ in range(2):
        torch.manual_seed(1)
        args = inputs()
        out.append(jsonable(snapshot((compiled(*args), args))))
    return {
        "state": out,
        "graphs": frames,
        "graph_breaks": sum(counters["graph_break"].values()),
        "recompiles": counter.frame_count - frames,
    }


def main():
    warnings.simplefilter("ignore")
    import tdcompat  # noqa: F401  (TDCOMPAT_DISABLE decides whether it patches)

    try:
        import tensordict  # noqa: F401

        have_td = True
    except ImportError:
        have_td = False
    report = {}
    for name in PROGRAMS:
        if name in NEEDS_TENSORDICT and not have_td:
            continue
        try:
            report[name] = run(name)
        except Exception as exc:  # noqa: BLE001 - an error is part of the behaviour compared
            report[name] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
