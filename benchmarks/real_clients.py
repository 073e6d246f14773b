"""Real clients: TorchRL's loss modules compiled without and with tdcompat (issue 14).

Builds TorchRL's main losses the way TorchRL's ``test/test_cost.py`` does (small linear
networks, ``TanhNormal`` actors with ``safe_tanh=False`` so that torch 2.5 compiles them
too), then for each loss, with the value estimator made lazily by the first call
(TorchRL's default) or made up front (``loss.make_value_estimator()`` before compiling):

* ``compile``: ``torch.compile(loss, backend=<counting aot_eager>)`` over ``--steps`` steps
  with different random inputs, side by side with an eager copy built from the same seed:
  loss values, gradients, ``Adam`` update steps and the target-network ``SoftUpdate``
  must equal eager. Figures: ``graphs`` = frames compiled by the first call,
  ``breaks`` = Dynamo's graph-break counter after the first call, ``recompiles`` = frames
  compiled by the later calls.
* ``fullgraph``: ``torch.compile(loss, fullgraph=True, backend="eager")``, two calls; ok or the error.
* ``explain``: ``torch._dynamo.explain`` of the first call: each break's reason and user code location.

Each side runs in its own interpreter: ``without`` never imports tdcompat, ``with`` imports it
before torch. Usage (the interpreter is any environment with torch, tensordict and torchrl)::

    PYTHONPATH=. python benchmarks/real_clients.py --out benchmarks/results/real_clients-2.5.1.json
    python benchmarks/real_clients.py --table benchmarks/results/real_clients-*.json
    python benchmarks/real_clients.py --losses dqn,sac --modes lazy --steps 2   # a subset
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

LOSSES = ["dqn", "ddpg", "td3", "sac", "ppo", "a2c", "iql", "cql"]
MODES = ["lazy", "upfront"]
SIDES = ["without", "with"]

B, N_OBS, N_ACT = 8, 3, 4


# --------------------------------------------------------------------------- building (worker side)


def _spec_classes():
    from torchrl.data import Bounded, OneHot

    return Bounded, OneHot


def _value_class():
    import torch
    from torch import nn

    class ValueClass(nn.Module):  # test_cost.py's Q(s, a) network
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(N_OBS + N_ACT, 1)

        def forward(self, obs, act):
            return self.linear(torch.cat([obs, act], -1))

    return ValueClass


def _tanh_actor():
    from tensordict.nn import NormalParamExtractor, TensorDictModule
    from torch import nn
    from torchrl.modules import ProbabilisticActor, TanhNormal

    Bounded, _ = _spec_classes()
    spec = Bounded(-1.0, 1.0, (N_ACT,))
    module = TensorDictModule(
        nn.Sequential(nn.Linear(N_OBS, 2 * N_ACT), NormalParamExtractor()),
        in_keys=["observation"], out_keys=["loc", "scale"],
    )
    actor = ProbabilisticActor(
        module=module, in_keys=["loc", "scale"], spec=spec, distribution_class=TanhNormal,
        distribution_kwargs={"safe_tanh": False}, return_log_prob=True,
    )
    return actor, spec


def _qvalue():
    from torchrl.modules import ValueOperator

    return ValueOperator(module=_value_class()(), in_keys=["observation", "action"])


def _state_value():
    from torch import nn
    from torchrl.modules import ValueOperator

    return ValueOperator(module=nn.Linear(N_OBS, 1), in_keys=["observation"])


def build(name: str, seed: int, upfront: bool):
    """One loss module, identical for identical seeds."""
    import torch
    from torch import nn
    from torchrl import objectives as O
    from torchrl.modules import Actor, QValueActor

    torch.manual_seed(seed)
    Bounded, OneHot = _spec_classes()
    if name == "dqn":
        actor = QValueActor(module=nn.Linear(N_OBS, N_ACT), spec=OneHot(N_ACT), action_space="one_hot")
        loss = O.DQNLoss(actor, loss_function="l2", delay_value=True)
    elif name in ("ddpg", "td3"):
        spec = Bounded(-1.0, 1.0, (N_ACT,))
        actor = Actor(module=nn.Sequential(nn.Linear(N_OBS, N_ACT), nn.Tanh()), spec=spec)
        if name == "ddpg":
            loss = O.DDPGLoss(actor, _qvalue(), loss_function="l2", delay_actor=True, delay_value=True)
        else:
            loss = O.TD3Loss(actor, _qvalue(), action_spec=spec, num_qvalue_nets=2, loss_function="l2",
                             delay_actor=True, delay_qvalue=True)
    elif name == "sac":
        actor, spec = _tanh_actor()
        loss = O.SACLoss(actor, _qvalue(), num_qvalue_nets=2, loss_function="l2", action_spec=spec)
    elif name == "ppo":
        actor, _ = _tanh_actor()
        loss = O.ClipPPOLoss(actor, _state_value(), loss_critic_type="l2")
    elif name == "a2c":
        actor, _ = _tanh_actor()
        loss = O.A2CLoss(actor, _state_value(), loss_critic_type="l2")
    elif name == "iql":
        actor, _ = _tanh_actor()
        loss = O.IQLLoss(actor, _qvalue(), _state_value(), num_qvalue_nets=2, loss_function="l2")
    elif name == "cql":
        actor, spec = _tanh_actor()
        loss = O.CQLLoss(actor, _qvalue(), loss_function="l2", action_spec=spec)
    else:
        raise ValueError(name)
    if upfront:
        loss.make_value_estimator()
    return loss


def make_data(name: str, step: int, loss):
    import torch
    from tensordict import TensorDict

    g = torch.Generator().manual_seed(1000 + step)
    done = torch.rand(B, 1, generator=g) < 0.2
    if name == "dqn":
        action = torch.nn.functional.one_hot(torch.randint(N_ACT, (B,), generator=g), N_ACT)
    else:
        action = torch.randn(B, N_ACT, generator=g).tanh() * 0.9
    td = TensorDict(
        {
            "observation": torch.randn(B, N_OBS, generator=g),
            "action": action,
            "next": {
                "observation": torch.randn(B, N_OBS, generator=g),
                "reward": torch.randn(B, 1, generator=g),
                "done": done.clone(),
                "terminated": done.clone(),
            },
        },
        batch_size=[B],
    )
    if name in ("ppo", "a2c"):
        td.set(loss.tensor_keys.sample_log_prob, torch.randn(B, generator=g))
    return td


def has_targets(loss) -> bool:
    return any("target_" in n for n, _ in loss.named_buffers()) or any(
        "target_" in n for n, _ in loss.named_parameters())


# --------------------------------------------------------------------------- measuring (worker side)


class CountingBackend:
    """Counts the graphs Dynamo hands over, then compiles them with ``inner``."""

    def __init__(self, inner: str):
        from torch._dynamo.backends.registry import lookup_backend

        self.inner = lookup_backend(inner)
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return self.inner(gm, example_inputs)


def _breaks() -> int:
    from torch._dynamo.utils import counters

    return int(sum(counters["graph_break"].values()))


def _short(path: str) -> str:
    for marker in ("site-packages/", "/work/main/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def _frame(fs) -> str:
    return f"{_short(fs.filename)}:{fs.lineno} ({fs.name})"


def _first_line(msg: str, limit: int = 400) -> str:
    msg = str(msg).strip()
    lines = [ln for ln in msg.splitlines() if ln.strip()]
    head = lines[0] if lines else ""
    return head[:limit]


def _total(out):
    import torch

    return sum(v.sum() for k, v in out.items() if isinstance(k, str) and k.startswith("loss")
               and isinstance(v, torch.Tensor))


def _compare(a: dict, b: dict) -> float:
    """Largest absolute difference between two name -> tensor maps (inf when they disagree on keys)."""
    import torch

    if set(a) != set(b):
        return float("inf")
    worst = 0.0
    for k in a:
        x, y = a[k], b[k]
        if x is None or y is None:
            if (x is None) != (y is None):
                return float("inf")
            continue
        if x.shape != y.shape:
            return float("inf")
        if x.is_floating_point():
            d = (x.double() - y.double()).abs()
            d = torch.where(torch.isnan(x) & torch.isnan(y), torch.zeros_like(d), d)
            worst = max(worst, float(d.max()) if d.numel() else 0.0)
        elif not torch.equal(x, y):
            return float("inf")
    return worst


def _outputs(out) -> dict:
    return {k if isinstance(k, str) else "/".join(k): v.detach().clone()
            for k, v in out.items(include_nested=True, leaves_only=True)}


def _state(loss) -> dict:
    return {**{n: p.detach().clone() for n, p in loss.named_parameters()},
            **{n: b.detach().clone() for n, b in loss.named_buffers()}}


def _grads(loss) -> dict:
    return {n: (None if p.grad is None else p.grad.clone()) for n, p in loss.named_parameters()}


class BreakRecorder:
    """Records each graph break as Dynamo counts it (``Unsupported.add_to_stats("graph_break")``):
    the message and the user stack Dynamo attached (``real_stack``). Observation only."""

    def __init__(self):
        from torch._dynamo import exc

        self.events = []
        original = exc.Unsupported.add_to_stats
        recorder = self

        def add_to_stats(this, category="unimplemented"):
            if category == "graph_break":
                stack = list(getattr(this, "real_stack", None) or [])
                msg = str(getattr(this, "msg", this))
                recorder.events.append({
                    "reason": _first_line(msg),
                    "message": msg.strip()[:800],
                    "where": _frame(stack[-1]) if stack else "?",
                    "client_where": next((_frame(f) for f in reversed(stack)
                                          if _short(f.filename).startswith(("torchrl/", "tensordict/"))), "?"),
                    "stack": [_frame(f) for f in stack[-5:]],
                })
            return original(this, category)

        exc.Unsupported.add_to_stats = add_to_stats


def _time_steps(name: str, eager, compiled, reps: int) -> dict:
    """Steady-state step time (forward + backward, after the measured steps compiled
    everything): eager and compiled interleaved in one interpreter, ``reps`` rounds, one
    warm-up; medians and the median of the paired ratios compiled / eager."""
    import statistics

    import torch

    td = make_data(name, 0, eager)
    times = {"eager": [], "compiled": []}
    for rep in range(reps + 1):
        for label, fn in (("eager", eager), ("compiled", compiled)):
            torch.manual_seed(200 + rep)
            t0 = time.perf_counter()
            _total(fn(td.clone())).backward()
            if rep:
                times[label].append(time.perf_counter() - t0)
    ratios = [c / e for c, e in zip(times["compiled"], times["eager"])]
    return {"eager": round(statistics.median(times["eager"]), 5),
            "compiled": round(statistics.median(times["compiled"]), 5),
            "ratio": round(statistics.median(ratios), 3), "reps": reps}


def run_compile(name: str, upfront: bool, steps: int, backend: str, tol: float, time_reps: int = 0) -> dict:
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters
    from torchrl.objectives import SoftUpdate

    torch._dynamo.reset()
    counters.clear()
    RECORDER.events.clear()
    eager, compiled_mod = build(name, 0, upfront), build(name, 0, upfront)
    res = {"initial_state_diff": _compare(_state(eager), _state(compiled_mod))}
    counting = CountingBackend(backend)
    compiled = torch.compile(compiled_mod, backend=counting)
    targets = has_targets(eager)
    res["targets"] = targets
    opts = [torch.optim.Adam(m.parameters(), lr=1e-2) for m in (eager, compiled_mod)]
    updaters = [SoftUpdate(m, eps=0.9) for m in (eager, compiled_mod)] if targets else None
    diffs = {"values": 0.0, "grads": 0.0, "update": 0.0}
    per_step_graphs = []
    t_first = None
    try:
        for step in range(steps):
            td = make_data(name, step, eager)
            torch.manual_seed(100 + step)
            out_e = eager(td.clone())
            torch.manual_seed(100 + step)
            before = counting.graphs
            t0 = time.perf_counter()
            out_c = compiled(td.clone())
            if step == 0:
                t_first = time.perf_counter() - t0
                res["graphs"] = counting.graphs
                res["breaks"] = _breaks()
                res["break_counter"] = {_first_line(k, 300): v for k, v in counters["graph_break"].items()}
                res["break_events"] = list(RECORDER.events)
            per_step_graphs.append(counting.graphs - before)
            diffs["values"] = max(diffs["values"], _compare(_outputs(out_e), _outputs(out_c)))
            for opt in opts:
                opt.zero_grad()
            _total(out_e).backward()
            _total(out_c).backward()
            diffs["grads"] = max(diffs["grads"], _compare(_grads(eager), _grads(compiled_mod)))
            for opt in opts:
                opt.step()
            if updaters:
                for u in updaters:
                    u.step()
            se, sc = _state(eager), _state(compiled_mod)
            diffs["update"] = max(diffs["update"], _compare(se, sc))
            if set(se) != set(sc) and "state_keys_differ" not in res:
                res["state_keys_differ"] = {"eager_only": sorted(set(se) - set(sc)),
                                            "compiled_only": sorted(set(sc) - set(se)), "step": step}
    except Exception as e:  # noqa: BLE001 - a crash of the compiled call is a measurement too
        res["error"] = f"{type(e).__name__}: {_first_line(e)}"
        res["error_step"] = len(per_step_graphs)
        res["traceback"] = traceback.format_exc()[-1500:]
        if "graphs" not in res and per_step_graphs == []:
            res["graphs"], res["breaks"] = counting.graphs, _breaks()
            res["break_events"] = list(RECORDER.events)
    res["recompiles"] = sum(per_step_graphs[1:])
    if "error" not in res and time_reps:
        res["step_s"] = _time_steps(name, eager, compiled, time_reps)
    res["graphs_per_step"] = per_step_graphs
    res["breaks_total"] = _breaks()
    res["unique_graphs"] = int(counters["stats"]["unique_graphs"])
    res["diffs"] = diffs
    res["equal"] = ("error" not in res and all(v <= tol for v in diffs.values())
                    and res["initial_state_diff"] == 0.0)
    res["first_call_s"] = None if t_first is None else round(t_first, 3)
    return res


def run_fullgraph(name: str, upfront: bool) -> dict:
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    loss = build(name, 0, upfront)
    compiled = torch.compile(loss, fullgraph=True, backend="eager")
    try:
        for step in range(2):
            torch.manual_seed(100 + step)
            compiled(make_data(name, step, loss))
    except Exception as e:  # noqa: BLE001 - the failure is the measurement
        stack = getattr(e, "real_stack", None) or []
        return {"ok": False, "error": f"{type(e).__name__}: {_first_line(e)}",
                "where": [_frame(f) for f in list(stack)[-3:]]}
    return {"ok": True}


def run_explain(name: str, upfront: bool) -> dict:
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    loss = build(name, 0, upfront)
    torch.manual_seed(100)
    out = torch._dynamo.explain(loss)(make_data(name, 0, loss))
    reasons = []
    for r in out.break_reasons:
        stack = list(getattr(r, "user_stack", None) or [])
        reasons.append({
            "reason": _first_line(r.reason),
            "where": _frame(stack[-1]) if stack else "?",
            "stack": [_frame(f) for f in stack[-4:]],
        })
    return {"graphs": out.graph_count, "breaks": out.graph_break_count, "reasons": reasons}


RECORDER = None


def worker(args) -> dict:
    if args.side == "with":
        import tdcompat  # before torch: the whole integration
    import tensordict
    import torch
    import torchrl

    torch.set_num_threads(1)
    import torch._dynamo

    global RECORDER
    RECORDER = BreakRecorder()
    info = {"side": args.side, "mode": args.mode, "torch": torch.__version__,
            "tensordict": tensordict.__version__, "torchrl": torchrl.__version__,
            "tdcompat_imported": "tdcompat" in sys.modules}
    if args.side == "with":
        import tdcompat

        info["patches_applied"] = [s.name for s in tdcompat.status() if s.state.value == "applied"]
    results = {}
    for name in args.losses.split(","):
        entry = {}
        for part, fn in (("compile", lambda name=name: run_compile(name, args.mode == "upfront", args.steps,
                                                                  args.backend, args.tol, args.time_reps)),
                         ("fullgraph", lambda name=name: run_fullgraph(name, args.mode == "upfront")),
                         ("explain", lambda name=name: run_explain(name, args.mode == "upfront"))):
            if part in args.skip.split(","):
                continue
            t0 = time.perf_counter()
            try:
                entry[part] = fn()
            except Exception as e:  # noqa: BLE001
                entry[part] = {"error": f"{type(e).__name__}: {_first_line(e)}",
                               "traceback": traceback.format_exc()[-1500:]}
            entry[part]["seconds"] = round(time.perf_counter() - t0, 1)
            print(f"[{args.side}/{args.mode}] {name} {part}: {json.dumps(entry[part], default=str)[:300]}",
                  file=sys.stderr, flush=True)
        results[name] = entry
    info["losses"] = results
    return info


# --------------------------------------------------------------------------- orchestrating (parent side)


def run_side(python: str, side: str, mode: str, opts) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if side == "without":
        env["TDCOMPAT_DISABLE"] = "*"  # belt and braces: the worker does not import tdcompat
    cmd = [python, str(HERE / "real_clients.py"), "--worker", "--side", side, "--mode", mode,
           "--losses", opts.losses, "--steps", str(opts.steps), "--backend", opts.backend,
           "--tol", str(opts.tol), "--skip", opts.skip, "--time-reps", str(opts.time_reps)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=opts.timeout)
    sys.stderr.write(proc.stderr[-20000:] if opts.verbose else "")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        return {"side": side, "mode": mode, "error": f"worker exited {proc.returncode}",
                "stderr": proc.stderr[-4000:]}


def measure(opts) -> dict:
    runs = []
    for mode in opts.modes.split(","):
        for side in opts.sides.split(","):
            t0 = time.perf_counter()
            runs.append(run_side(opts.python, side, mode, opts))
            print(f"{side}/{mode}: {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    head = next((r for r in runs if "torch" in r), {})
    return {"machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
            "date": time.strftime("%Y-%m-%d"),
            "torch": head.get("torch"), "tensordict": head.get("tensordict"), "torchrl": head.get("torchrl"),
            "steps": opts.steps, "backend": opts.backend, "runs": runs}


def _cell(entry: dict) -> str:
    c = entry.get("compile", {})
    if "graphs" not in c:
        return "error"
    return f"{c['graphs']}/{c['breaks']}" + (" crash" if "error" in c else "")


def table(docs) -> str:
    lines = ["| torch | torchrl | mode | loss | graphs/breaks without | with | recompiles w/o, with | "
             "fullgraph w/o, with | eager-equal w/o, with | step / eager w/o, with |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for doc in docs:
        by = {(r.get("side"), r.get("mode")): r for r in doc["runs"]}
        modes = sorted({r.get("mode") for r in doc["runs"]}, key=MODES.index)
        for mode in modes:
            wo, wi = by.get(("without", mode), {}), by.get(("with", mode), {})
            for name in LOSSES:
                a, b = wo.get("losses", {}).get(name), wi.get("losses", {}).get(name)
                if a is None and b is None:
                    continue
                a, b = a or {}, b or {}

                def fg(e):
                    f = e.get("fullgraph", {})
                    return "ok" if f.get("ok") else ("fail" if "ok" in f or "error" in f else "-")

                def eq(e):
                    c = e.get("compile", {})
                    if "error" in c:
                        return "crash"
                    return "-" if "equal" not in c else ("yes" if c["equal"] else "**NO**")

                def rc(e):
                    return str(e.get("compile", {}).get("recompiles", "-"))

                def st(e):
                    step = e.get("compile", {}).get("step_s")
                    return f"{step['ratio']:.2f}" if step else "-"

                lines.append(f"| {doc['torch']} | {doc['torchrl']} | {mode} | {name} | {_cell(a)} | {_cell(b)} | "
                             f"{rc(a)}, {rc(b)} | {fg(a)}, {fg(b)} | {eq(a)}, {eq(b)} | {st(a)}, {st(b)} |")
    return "\n".join(lines)


def _detail(message: str) -> str:
    """The lines of newer Dynamo messages that say more than the first one."""
    keep = [ln.strip() for ln in message.splitlines()[1:]
            if ln.strip().startswith(("Explanation:", "Developer debug context:"))]
    return " | ".join(ln[:220] for ln in keep)


def reasons(docs, side: str = "with", mode: str = "lazy") -> str:
    """Distinct graph-break reasons of the first compiled call, most breaks first: the
    innermost frame, the torchrl/tensordict frames that lead there, and the losses that hit it."""
    out = []
    for doc in docs:
        agg = {}
        for r in doc["runs"]:
            if r.get("side") != side or r.get("mode") != mode:
                continue
            for name, e in r.get("losses", {}).items():
                for br in e.get("compile", {}).get("break_events", []):
                    reason = re.sub(r"Variable\((\w+)(Loss|Estimator|Actor)\)", r"Variable(<\2>)", br["reason"])
                    reason = re.sub(r"Variable\((GAE|TD0Estimator|TD1Estimator|TDLambdaEstimator)\)",
                                    r"Variable(<Estimator>)", reason)
                    slot = agg.setdefault((reason, br["where"]), {"count": 0, "losses": {}, "clients": {},
                                                                  "detail": _detail(br.get("message", ""))})
                    slot["count"] += 1
                    slot["losses"][name] = slot["losses"].get(name, 0) + 1
                    client = br.get("client_where", "?")
                    slot["clients"][client] = slot["clients"].get(client, 0) + 1
        out.append(f"## torch {doc['torch']} ({side} tdcompat, {mode} estimator): distinct graph-break reasons")
        for (reason, where), slot in sorted(agg.items(), key=lambda kv: -kv[1]["count"]):
            losses = ", ".join(f"{k}×{v}" for k, v in slot["losses"].items())
            out.append(f"- {slot['count']:3d} breaks at {where} [{losses}]\n      {reason}")
            if slot["detail"]:
                out.append(f"      {slot['detail']}")
            if list(slot["clients"]) != [where]:
                out.append("      via " + "; ".join(f"{c} ×{n}" for c, n in slot["clients"].items()))
    return "\n".join(out)


def _merge(old: dict, new: dict) -> dict:
    """``old`` with ``new``'s per-loss results in place of its own (same side and mode); a note
    in ``updated`` says which losses and sides were measured again, and when."""
    for run in new["runs"]:
        if "error" in run:
            raise SystemExit(f"not merged: the {run.get('side')}/{run.get('mode')} run failed: {run['error']}")
        same = [r for r in old["runs"] if r.get("side") == run.get("side") and r.get("mode") == run.get("mode")]
        if not same:
            old["runs"].append(run)
            continue
        same[0]["losses"].update(run["losses"])
        for key in ("torch", "tensordict", "torchrl", "patches_applied"):
            if key in run:
                same[0][key] = run[key]
    old.setdefault("updated", []).append({"date": new["date"], "sides": sorted({r["side"] for r in new["runs"]}),
                                          "losses": sorted({k for r in new["runs"] for k in r["losses"]})})
    return old


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--losses", default=",".join(LOSSES))
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--mode", default="lazy", help=argparse.SUPPRESS)
    p.add_argument("--side", default="with", help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--sides", default=",".join(SIDES))
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--backend", default="aot_eager")
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--time-reps", type=int, default=0,
                   help="also time this many steady-state steps, eager and compiled interleaved (0: no timing)")
    p.add_argument("--skip", default="explain", help="comma-separated parts to skip: compile, fullgraph, explain")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--timeout", type=float, default=3000)
    p.add_argument("--out", help="write the JSON here")
    p.add_argument("--update", action="store_true",
                   help="merge the measured losses into the existing --out file (other losses and sides stay)")
    p.add_argument("--table", nargs="*", help="print the tables of these result files and exit")
    p.add_argument("--verbose", action="store_true")
    opts = p.parse_args(argv)
    if opts.worker:
        print(json.dumps(worker(opts), default=str))
        return 0
    if opts.table is not None:
        docs = [json.loads(pathlib.Path(f).read_text()) for f in opts.table]
        print(table(docs))
        print()
        print(reasons(docs))
        return 0
    doc = measure(opts)
    if opts.update and opts.out and pathlib.Path(opts.out).exists():
        doc = _merge(json.loads(pathlib.Path(opts.out).read_text()), doc)
    text = json.dumps(doc, indent=1, default=str)
    if opts.out:
        pathlib.Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(opts.out).write_text(text + "\n")
    print(table([doc]))
    print()
    print(reasons([doc]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
