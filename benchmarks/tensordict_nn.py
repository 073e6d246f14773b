"""tensordict's own modules, compiled without and with tdcompat (issue 14, "tensordict's own
modules users compile").

Small tensors and networks, one workload per pattern users compile:

* ``sequential``: ``TensorDictSequential`` of three ``TensorDictModule`` (Linear layers with
  ``in_keys``/``out_keys``, one nested out key), the compiled module called on a TensorDict.
* ``prob_default``: ``TensorDictModule(Linear + NormalParamExtractor)`` then
  ``ProbabilisticTensorDictModule(Normal)`` in a ``ProbabilisticTensorDictSequential`` with
  ``default_interaction_type=DETERMINISTIC`` and ``return_log_prob=True``.
* ``prob_set_mean``: the same module built with ``default_interaction_type=RANDOM``, called in
  ``with set_interaction_type("mean")`` inside the compiled function (a context Dynamo
  ignored would sample, and not equal eager).
* ``ensemble_vmap``: ``TensorDict.from_modules(*modules, as_module=True)`` and ``torch.vmap``
  of a function doing ``with params.to_module(meta_module): meta_module(x)`` (tensordict's
  ensembling recipe); the params are updated in place between calls, as by an optimizer.
* ``apply`` / ``apply_other``: ``td.apply(lambda x: x * 2 + 1)`` and
  ``td.apply(lambda x, y: x * y + 1, other)`` on a nested TensorDict.
* ``to_module_loop``: ``for p in params: with p.to_module(module): out.append(module(x))``
  over a list of three TensorDicts made by ``TensorDict.from_module`` (new tensors each call).

For each workload and side: ``compile`` = ``torch.compile`` with a backend that counts the
graphs and returns ``gm.forward``, 3 calls with different random inputs side by side with an
eager copy built from the same seed; ``graphs`` = graphs compiled by the first call, ``breaks``
= Dynamo's graph-break counter after it, ``recompiles`` = graphs compiled by calls 2-3,
``equal`` = every call's outputs and the state after the call of every input TensorDict, of
the modules and of the global interaction type equal eager (``torch.testing.assert_close``
over all leaves; keys, shapes, dtypes and batch sizes exactly). ``fullgraph`` =
``fullgraph=True``, two calls. ``explain`` = ``torch._dynamo.explain`` of a first call: each
break's reason. A workload whose API the installed tensordict lacks is ``n/a`` with the reason.

Each side runs in its own interpreter: ``without`` never imports tdcompat, ``with`` imports it
before torch. Usage::

    PYTHONPATH=. ~/.cache/tdcompat/nox/tests-2-5/bin/python benchmarks/tensordict_nn.py \\
        --out benchmarks/results/tensordict_nn-2.5.1.json
    python3 benchmarks/tensordict_nn.py --table benchmarks/results/tensordict_nn-*.json
    python3 benchmarks/tensordict_nn.py --workloads apply,sequential   # a subset
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import pathlib
import subprocess
import sys
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from real_clients import BreakRecorder, _breaks, _detail, _first_line, _frame  # noqa: E402  (stdlib only at import)

SIDES = ["without", "with"]
CALLS = 3
B, N_IN, N_HID, N_ACT, N_MODELS = 5, 4, 8, 2, 3


# --------------------------------------------------------------------------- workloads (worker side)


def _gen(step: int):
    import torch

    return torch.Generator().manual_seed(1000 + step)


def _obs_td(step: int):
    import torch
    from tensordict import TensorDict

    return TensorDict({"obs": torch.randn(B, N_IN, generator=_gen(step))}, batch_size=[B])


def _missing(obj, *names) -> str | None:
    for name in names:
        if not hasattr(obj, name):
            return f"{getattr(obj, '__name__', obj)}.{name} does not exist in this version"
    return None


class Workload:
    """``requires()`` -> None or why the API is missing; ``build()`` -> state (same seed,
    same state); ``inputs(step, state)`` -> the call's arguments; ``target(state)`` -> what
    is compiled; ``modules(state)`` -> the modules whose state is compared after each call."""

    def __init__(self, requires, build, inputs, target, modules=lambda state: {}, between=None):
        self.requires, self.build, self.inputs, self.target = requires, build, inputs, target
        self.modules, self.between = modules, between


def _req_sequential():
    import tensordict.nn as tn

    return _missing(tn, "TensorDictModule", "TensorDictSequential")


def _build_sequential():
    import torch
    from tensordict.nn import TensorDictModule as Mod, TensorDictSequential
    from torch import nn

    class Head(nn.Module):  # two in_keys
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(N_HID + N_IN, N_ACT)

        def forward(self, hidden, obs):
            return self.linear(torch.cat([hidden, obs], -1))

    torch.manual_seed(0)
    return TensorDictSequential(
        Mod(nn.Sequential(nn.Linear(N_IN, N_HID), nn.ReLU()), in_keys=["obs"], out_keys=["hidden"]),
        Mod(nn.Linear(N_HID, N_HID), in_keys=["hidden"], out_keys=[("inner", "hidden2")]),
        Mod(Head(), in_keys=[("inner", "hidden2"), "obs"], out_keys=["out"]),
    )


def _req_prob():
    import tensordict.nn as tn

    return _missing(tn, "TensorDictModule", "ProbabilisticTensorDictModule", "ProbabilisticTensorDictSequential",
                    "NormalParamExtractor", "InteractionType", "set_interaction_type")


def _build_prob(default: str):
    import torch
    from tensordict.nn import (
        InteractionType,
        NormalParamExtractor,
        ProbabilisticTensorDictModule,
        ProbabilisticTensorDictSequential,
        TensorDictModule,
    )
    from torch import nn

    torch.manual_seed(0)
    return ProbabilisticTensorDictSequential(
        TensorDictModule(nn.Sequential(nn.Linear(N_IN, 2 * N_ACT), NormalParamExtractor()),
                         in_keys=["obs"], out_keys=["loc", "scale"]),
        ProbabilisticTensorDictModule(in_keys=["loc", "scale"], out_keys=["action"],
                                      distribution_class=torch.distributions.Normal,
                                      default_interaction_type=InteractionType[default], return_log_prob=True),
    )


def _set_mean_target(module):
    from tensordict.nn import set_interaction_type

    def policy(td):
        with set_interaction_type("mean"):
            return module(td)

    return policy


def _req_ensemble():
    import torch
    from tensordict import TensorDict

    reason = _missing(TensorDict, "from_modules", "to_module") or _missing(torch, "vmap")
    if reason is None:
        import inspect

        if "as_module" not in inspect.signature(TensorDict.from_modules).parameters:
            reason = "TensorDict.from_modules has no as_module argument in this version"
    return reason


def _mlp():
    from torch import nn

    return nn.Sequential(nn.Linear(N_IN, N_HID), nn.Tanh(), nn.Linear(N_HID, N_ACT))


def _build_ensemble():
    import torch
    from tensordict import TensorDict

    torch.manual_seed(0)
    modules = [_mlp() for _ in range(N_MODELS)]
    params = TensorDict.from_modules(*modules, as_module=True)
    base = copy.deepcopy(modules[0]).to("meta")
    return {"params": params, "base": base}


def _ensemble_target(state):
    import torch

    params, base = state["params"], state["base"]

    def call(p, x):
        with p.to_module(base):
            return base(x)

    def ensemble(x):
        return torch.vmap(call, (0, None))(params, x)

    return ensemble


def _ensemble_between(state, step):
    import torch

    g = _gen(500 + step)
    with torch.no_grad():
        for p in state["params"].values(True, True):
            p.add_(0.1 * torch.randn(p.shape, generator=g))


def _x(step):
    import torch

    return (torch.randn(B, N_IN, generator=_gen(step)),)


def _nested_td(step: int, offset: int = 0):
    import torch
    from tensordict import TensorDict

    g = _gen(step + offset)
    return TensorDict({"a": torch.randn(B, 3, generator=g),
                       "nested": {"b": torch.randn(B, 2, generator=g), "c": torch.randn(B, generator=g)}},
                      batch_size=[B])


def _req_apply():
    from tensordict import TensorDict

    return _missing(TensorDict, "apply")


def _apply_target(_):
    def fn(td):
        return td.apply(lambda x: x * 2 + 1)

    return fn


def _apply_other_target(_):
    def fn(td, other):
        return td.apply(lambda x, y: x * y + 1, other)

    return fn


def _req_to_module():
    from tensordict import TensorDict

    return _missing(TensorDict, "from_module", "to_module")


def _build_to_module():
    import torch

    torch.manual_seed(0)
    return {"module": _mlp()}


def _to_module_inputs(step, state):
    import torch
    from tensordict import TensorDict

    g = _gen(700 + step)
    template = TensorDict.from_module(state["module"])
    params = [template.apply(lambda p: torch.randn(p.shape, generator=g)) for _ in range(N_MODELS)]
    return (params,) + _x(step)


def _to_module_target(state):
    import torch

    module = state["module"]

    def loop(params, x):
        out = []
        for p in params:
            with p.to_module(module):
                out.append(module(x))
        return torch.stack(out)

    return loop


WORKLOADS = {
    "sequential": Workload(_req_sequential, _build_sequential, lambda step, s: (_obs_td(step),),
                           lambda s: s, modules=lambda s: {"module": s}),
    "prob_default": Workload(_req_prob, lambda: _build_prob("DETERMINISTIC"), lambda step, s: (_obs_td(step),),
                             lambda s: s, modules=lambda s: {"module": s}),
    "prob_set_mean": Workload(_req_prob, lambda: _build_prob("RANDOM"), lambda step, s: (_obs_td(step),),
                              _set_mean_target, modules=lambda s: {"module": s}),
    "ensemble_vmap": Workload(_req_ensemble, _build_ensemble, lambda step, s: _x(step), _ensemble_target,
                              modules=lambda s: dict(s), between=_ensemble_between),
    "apply": Workload(_req_apply, lambda: None, lambda step, s: (_nested_td(step),), _apply_target),
    "apply_other": Workload(_req_apply, lambda: None, lambda step, s: (_nested_td(step), _nested_td(step, 50)),
                            _apply_other_target),
    "to_module_loop": Workload(_req_to_module, _build_to_module, _to_module_inputs, _to_module_target,
                               modules=lambda s: dict(s)),
}


# --------------------------------------------------------------------------- measuring (worker side)


class CountingBackend:
    """Counts the graphs Dynamo hands over and runs each as is (``gm.forward``)."""

    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def _clone_args(args):
    def one(a):
        if isinstance(a, (list, tuple)):
            return type(a)(one(x) for x in a)
        return a.clone()

    return tuple(one(a) for a in args)


def _tensor(t, name: str, out: dict) -> None:
    out[name] = t.detach().clone()
    out[f"{name}.kind"] = (type(t).__name__, t.requires_grad)


def _leaves(obj, prefix: str, out: dict) -> dict:
    """name -> tensor (or, for a TensorDict's batch size and the like, a plain value)."""
    import torch
    from tensordict import TensorDictBase

    if isinstance(obj, TensorDictBase):
        out[f"{prefix}.batch_size"] = tuple(obj.batch_size)
        for k, v in obj.items(include_nested=True, leaves_only=True):
            _tensor(v, f"{prefix}/{k if isinstance(k, str) else '/'.join(k)}", out)
    elif isinstance(obj, torch.nn.Module):
        for n, p in list(obj.named_parameters()) + list(obj.named_buffers()):
            _tensor(p, f"{prefix}.{n}", out)
    elif isinstance(obj, torch.Tensor):
        _tensor(obj, prefix, out)
    elif isinstance(obj, (list, tuple)):
        out[f"{prefix}.len"] = len(obj)
        for i, x in enumerate(obj):
            _leaves(x, f"{prefix}[{i}]", out)
    elif isinstance(obj, dict):
        for k, x in obj.items():
            _leaves(x, f"{prefix}.{k}", out)
    else:
        out[prefix] = repr(obj)
    return out


def _snapshot(output, args, modules) -> dict:
    try:
        from tensordict.nn import interaction_type
    except ImportError:
        from tensordict.nn.probabilistic import interaction_type
    snap = _leaves(output, "output", {})
    _leaves(list(args), "input", snap)
    _leaves(modules, "module", snap)
    snap["global.interaction_type"] = repr(interaction_type())
    return snap


def _diff(eager: dict, compiled: dict) -> list:
    """The leaves that differ: [] when every key, shape, dtype and value matches
    (``torch.testing.assert_close`` on values, meta tensors by shape and dtype only)."""
    import torch

    diffs = []
    for k in sorted(set(eager) | set(compiled)):
        if k not in compiled or k not in eager:
            diffs.append(f"{k}: only in {'eager' if k in eager else 'compiled'}")
            continue
        a, b = eager[k], compiled[k]
        if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
            if a != b:
                diffs.append(f"{k}: eager {a!r} != compiled {b!r}")
            continue
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
            diffs.append(f"{k}: eager {tuple(a.shape)} {a.dtype} {a.device} "
                         f"!= compiled {tuple(b.shape)} {b.dtype} {b.device}")
            continue
        if a.device.type == "meta":
            continue
        try:
            torch.testing.assert_close(b, a, equal_nan=True)
        except AssertionError as e:
            diffs.append(f"{k}: " + " ".join(str(e).split())[:300])
    return diffs


def _fresh(name: str, **compile_kwargs):
    """Dynamo reset, the workload built, its target compiled with a new counting backend."""
    import torch
    import torch._dynamo

    w = WORKLOADS[name]
    torch._dynamo.reset()
    state = w.build()
    counting = CountingBackend()
    return w, state, counting, torch.compile(w.target(state), backend=counting, **compile_kwargs)


def _first_call(res: dict, counting) -> None:
    from torch._dynamo.utils import counters

    res.update(graphs=counting.graphs, breaks=_breaks(), break_events=list(RECORDER.events),
               break_counter={_first_line(k, 300): v for k, v in counters["graph_break"].items()})


def run_compile(name: str) -> dict:
    from torch._dynamo.utils import counters

    RECORDER.events.clear()
    counters.clear()
    w, state_c, counting, compiled = _fresh(name)
    state_e = w.build()
    eager_fn = w.target(state_e)
    res = {"initial_state_diff": _diff(_leaves(w.modules(state_e), "m", {}), _leaves(w.modules(state_c), "m", {}))}
    per_call, diffs = [], []
    for step in range(CALLS):
        if w.between and step:
            for state in (state_e, state_c):
                w.between(state, step)
        args = w.inputs(step, state_e)
        args_e, args_c = _clone_args(args), _clone_args(args)
        try:
            out_e = eager_fn(*args_e)
            snap_e = _snapshot(out_e, args_e, w.modules(state_e))
        except Exception as e:  # noqa: BLE001 - a bug of this script: reported as such
            return {**res, "eager_error": f"{type(e).__name__}: {_first_line(e)}",
                    "traceback": traceback.format_exc()[-2000:]}
        before = counting.graphs
        try:
            out_c = compiled(*args_c)
        except Exception as e:  # noqa: BLE001 - a crash of the compiled call is a measurement
            res.update(error=f"{type(e).__name__}: {_first_line(e)}", error_call=step + 1,
                       traceback=traceback.format_exc()[-2000:])
        if step == 0:
            _first_call(res, counting)
        per_call.append(counting.graphs - before)
        if "error" in res:
            break
        d = _diff(snap_e, _snapshot(out_c, args_c, w.modules(state_c)))
        if d:
            diffs.append({"call": step + 1, "diffs": d[:8], "n": len(d)})
    res.update(graphs_per_call=per_call, recompiles=sum(per_call[1:]), breaks_total=_breaks(), diffs=diffs,
               equal="error" not in res and not diffs and not res["initial_state_diff"])
    return res


def run_fullgraph(name: str) -> dict:
    w, state, counting, compiled = _fresh(name, fullgraph=True)
    try:
        for step in range(2):
            if w.between and step:
                w.between(state, step)
            compiled(*w.inputs(step, state))
    except Exception as e:  # noqa: BLE001 - the failure is the measurement
        frames = list(getattr(e, "real_stack", None) or [])[-3:]
        return {"ok": False, "error": f"{type(e).__name__}: {_first_line(e)}", "where": list(map(_frame, frames))}
    return {"ok": True, "graphs": counting.graphs}


def _explained(reason) -> dict:
    stack = list(getattr(reason, "user_stack", None) or [])
    text = str(reason.reason)
    return {"reason": _first_line(text), "detail": _detail(text), "where": _frame(stack[-1]) if stack else "?",
            "stack": list(map(_frame, stack[-4:]))}


def run_explain(name: str) -> dict:
    import torch._dynamo

    w, state, _, _ = _fresh(name)
    out = torch._dynamo.explain(w.target(state))(*w.inputs(0, state))
    return {"graphs": out.graph_count, "breaks": out.graph_break_count,
            "reasons": [_explained(r) for r in out.break_reasons]}


RECORDER = None
PARTS = {"compile": run_compile, "fullgraph": run_fullgraph, "explain": run_explain}


def _measure_workload(name: str, skip: set, side: str) -> dict:
    try:
        missing = WORKLOADS[name].requires()
    except Exception as e:  # noqa: BLE001 - an import that fails is a missing API too
        missing = f"{type(e).__name__}: {_first_line(e)}"
    if missing:
        return {"na": missing}
    entry = {}
    for part in (p for p in PARTS if p not in skip):
        t0 = time.perf_counter()
        try:
            entry[part] = PARTS[part](name)
        except Exception as e:  # noqa: BLE001
            entry[part] = {"error": f"{type(e).__name__}: {_first_line(e)}",
                           "traceback": traceback.format_exc()[-2000:]}
        entry[part]["seconds"] = round(time.perf_counter() - t0, 1)
        print(f"[{side}] {name} {part}: {json.dumps(entry[part], default=str)[:300]}", file=sys.stderr, flush=True)
    return entry


def worker(side: str, workloads: list, skip: set) -> dict:
    if side == "with":
        import tdcompat  # noqa: F401  (before torch: the whole integration)
    import warnings

    warnings.simplefilter("ignore")
    import tensordict
    import torch
    import torch._dynamo

    torch.set_num_threads(1)
    global RECORDER
    RECORDER = BreakRecorder()
    tdc = sys.modules.get("tdcompat")
    return {"side": side, "torch": torch.__version__, "tensordict": tensordict.__version__,
            "tdcompat_imported": tdc is not None,
            "patches_applied": tdc and [s.name for s in tdc.status() if s.state.value == "applied"],
            "workloads": {name: _measure_workload(name, skip, side) for name in workloads}}


# --------------------------------------------------------------------------- orchestrating (parent side)


def measure(python: str, workloads: str, skip: str) -> dict:
    """Each side in a fresh interpreter; its JSON is the last line of its stdout."""
    runs = []
    for side in SIDES:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        if side == "without":
            env["TDCOMPAT_DISABLE"] = "*"  # belt and braces: the worker does not import tdcompat
        t0 = time.perf_counter()
        proc = subprocess.run([python, __file__, "--worker", side, "--workloads", workloads, "--skip", skip],
                              capture_output=True, text=True, env=env, timeout=1800)
        try:
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        except (IndexError, ValueError):
            runs.append({"side": side, "error": f"worker exited {proc.returncode}", "stderr": proc.stderr[-4000:]})
        print(f"{side}: {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    head = next((r for r in runs if "torch" in r), {})
    return {"machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
            "date": time.strftime("%Y-%m-%d"), "torch": head.get("torch"),
            "tensordict": head.get("tensordict"), "calls": CALLS, "backend": "counting (gm.forward)",
            "runs": runs}


def _sides(doc) -> tuple:
    by = {r.get("side"): r for r in doc["runs"]}
    return by.get("without", {}), by.get("with", {})


def _entry(run: dict, name: str):
    return run.get("workloads", {}).get(name)


def _cell(e) -> str:
    if e is None:
        return "-"
    if "na" in e:
        return "n/a"
    c = e.get("compile", {})
    if "eager_error" in c:
        return "EAGER FAILS"
    if "graphs" not in c:
        return "error"
    return f"{c['graphs']}/{c['breaks']}" + (" crash" if "error" in c else "")


def _fg(e) -> str:
    if not e or "na" in e:
        return "-"
    f = e.get("fullgraph", {})
    return "ok" if f.get("ok") else ("fail" if "ok" in f or "error" in f else "-")


def _eq(e) -> str:
    if not e or "na" in e:
        return "-"
    c = e.get("compile", {})
    if "error" in c or "eager_error" in c:
        return "crash"
    return "-" if "equal" not in c else ("yes" if c["equal"] else "**NO**")


def _rc(e) -> str:
    return "-" if not e or "na" in e else str(e.get("compile", {}).get("recompiles", "-"))


def _short_version(v) -> str:
    return str(v).split("+")[0]


def table(docs) -> str:
    lines = ["| torch | tensordict | workload | graphs/breaks without | with | recompiles w/o, with | "
             "fullgraph w/o, with | eager-equal w/o, with |", "|---|---|---|---|---|---|---|---|"]
    for doc in docs:
        wo, wi = _sides(doc)
        for name in WORKLOADS:
            a, b = _entry(wo, name), _entry(wi, name)
            if a is None and b is None:
                continue
            na = next((e["na"] for e in (a, b) if e and "na" in e), None)
            if na:
                lines.append(f"| {_short_version(doc['torch'])} | {doc['tensordict']} | {name} | n/a: {na} | | | | |")
                continue
            lines.append(f"| {_short_version(doc['torch'])} | {doc['tensordict']} | {name} | {_cell(a)} | {_cell(b)} | "
                         f"{_rc(a)}, {_rc(b)} | {_fg(a)}, {_fg(b)} | {_eq(a)}, {_eq(b)} |")
    return "\n".join(lines)


def _num(e, key):
    return e.get("compile", {}).get(key) if e and "na" not in e else None


def worse(docs) -> list:
    """Where with tdcompat is worse than without, or not equal to eager."""
    found = []
    for doc in docs:
        wo, wi = _sides(doc)
        for name in WORKLOADS:
            a, b = _entry(wo, name), _entry(wi, name)
            if not b or "na" in b:
                continue
            where = f"torch {_short_version(doc['torch'])} {name}"
            cb = b.get("compile", {})
            if "error" in cb or "eager_error" in cb:
                found.append(f"{where}: with tdcompat the compiled call raises "
                             f"`{cb.get('error') or cb.get('eager_error')}`")
            elif cb.get("equal") is False:
                first = (cb.get("diffs") or [{}])[0]
                also = " (without tdcompat too)" if _eq(a) == "**NO**" else " (equal without tdcompat)"
                found.append(f"{where}: with tdcompat not equal to eager{also}: call {first.get('call')}, "
                             f"{first.get('n')} leaves: "
                             f"{'; '.join(first.get('diffs', [])[:3]) or cb.get('initial_state_diff')}")
            fewer_breaks = (_num(b, "breaks") or 0) < (_num(a, "breaks") or 0)
            for key in ("graphs", "breaks", "recompiles"):
                x, y = _num(a, key), _num(b, key)
                # more graphs is no loss where it comes with fewer breaks (0 graphs: all eager)
                if x is not None and y is not None and y > x and not (key == "graphs" and fewer_breaks):
                    found.append(f"{where}: more {key} with tdcompat ({y}) than without ({x})")
            if _fg(a) == "ok" and _fg(b) != "ok":
                found.append(f"{where}: fullgraph works without tdcompat, not with: "
                             f"`{b.get('fullgraph', {}).get('error')}`")
    return found


def _version_key(doc):
    return tuple(int(p) for p in _short_version(doc["torch"]).split(".")[:3])


def gaps(docs) -> list:
    """Workloads that break (graph breaks, fullgraph failure, crash or wrong result) on an
    older torch with tdcompat but not on the newest torch measured, without tdcompat: the
    reasons from ``torch._dynamo.explain`` (or the fullgraph error)."""
    if not docs:
        return []
    newest = max(docs, key=_version_key)
    ref, _ = _sides(newest)
    out = []
    for doc in sorted(docs, key=_version_key):
        if doc is newest:
            continue
        wo, wi = _sides(doc)
        for name in WORKLOADS:
            r, b = _entry(ref, name), _entry(wi, name)
            if not r or not b or "na" in r or "na" in b:
                continue
            ref_clean = _num(r, "breaks") == 0 and _fg(r) == "ok" and _eq(r) == "yes"
            clean = _num(b, "breaks") == 0 and _fg(b) == "ok" and _eq(b) == "yes"
            if not ref_clean or clean:
                continue
            a = _entry(wo, name)
            head = (f"torch {_short_version(doc['torch'])} (tensordict {doc['tensordict']}) {name}: with tdcompat "
                    f"{_cell(b)}, fullgraph {_fg(b)}, eager-equal {_eq(b)} (without {_cell(a)}); torch "
                    f"{_short_version(newest['torch'])} (tensordict {newest['tensordict']}) without tdcompat: "
                    f"{_cell(r)}, fullgraph ok")
            reasons = _reasons(b)
            if not reasons and b.get("fullgraph", {}).get("error"):
                reasons = [b["fullgraph"]["error"]]
            if b.get("compile", {}).get("error"):
                reasons.append("compiled call: " + b["compile"]["error"])
            out.append(head + "".join(f"\n    - {x}" for x in dict.fromkeys(reasons)))
    return out


def _reasons(e: dict) -> list:
    """Each distinct break: ``torch._dynamo.explain``'s reasons, then those the compile run
    counted that explain did not list (explain lists none when a break skips the frame)."""
    found = [(x["reason"], x["where"]) for x in e.get("explain", {}).get("reasons", [])]
    found += [(x["reason"], x["where"]) for x in e.get("compile", {}).get("break_events", [])]
    return [f"{r} at {w}" for r, w in dict.fromkeys(found)]


def reasons(docs, side: str) -> str:
    out = []
    for doc in sorted(docs, key=_version_key):
        run = dict(zip(SIDES, _sides(doc)))[side]
        rows = []
        for name in WORKLOADS:
            e = _entry(run, name)
            if not e or "na" in e:
                continue
            rows.extend(f"- {name}: {x}" for x in _reasons(e))
        if rows:
            out.append(f"torch {_short_version(doc['torch'])}, {side} tdcompat:")
            out.extend(dict.fromkeys(rows))
    return "\n".join(out)


def report(docs) -> str:
    parts = [table(docs), ""]
    bad = worse(docs)
    parts.append("### With tdcompat worse than without, or not equal to eager")
    parts.append("\n".join(f"- **{x}**" for x in bad) if bad else "None: on every release and workload, with "
                 "tdcompat has no more graphs, breaks or recompiles than without, fullgraph works where it "
                 "works without, and the result equals eager.")
    parts += ["", "### Broken on an older torch with tdcompat, clean on the newest natively", ""]
    g = gaps(docs)
    parts.append("\n".join(f"- {x}" for x in g) if g else "None.")
    for side in SIDES:
        text = reasons(docs, side)
        if text:
            parts += ["", f"### Graph-break reasons, {side} tdcompat", "", text]
    return "\n".join(parts)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated subset (default: all)")
    p.add_argument("--skip", default="", help="comma-separated parts to skip: compile, fullgraph, explain")
    p.add_argument("--python", default=sys.executable, help="the interpreter of both sides (default: this one)")
    p.add_argument("--out", help="write the JSON here")
    p.add_argument("--table", nargs="*", help="print the report of these result files and exit")
    p.add_argument("--worker", choices=SIDES, help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.worker:
        print(json.dumps(worker(opts.worker, opts.workloads.split(","), set(opts.skip.split(","))), default=str))
    elif opts.table is not None:
        print(report(sorted((json.loads(pathlib.Path(f).read_text()) for f in opts.table), key=_version_key)))
    else:
        doc = measure(opts.python, opts.workloads, opts.skip)
        if opts.out:
            pathlib.Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
            pathlib.Path(opts.out).write_text(json.dumps(doc, indent=1, default=str) + "\n")
        print(report([doc]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
