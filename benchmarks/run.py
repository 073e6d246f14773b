"""Benchmarks: what tdcompat costs and what it buys, measured side by side in one run.

    python benchmarks/run.py workloads [--backend eager|aot_eager|inductor] [--smoke]
    python benchmarks/run.py neutral [--reps 15] [--smoke]
    python benchmarks/run.py import [--reps 30] [--smoke]

Every variant runs in its own fresh interpreter (``--one`` mode below), so
patches, Dynamo caches and warm-up of one variant cannot leak into another;
variants are interleaved round by round so that machine noise hits all of them
alike. ``--smoke`` runs each once, to check the benchmarks still run (CI), and
says nothing about speed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = {
    # name: (import tdcompat?, fullgraph, compile?)
    "eager": (False, False, False),
    "compile": (False, False, True),
    "compile+tdcompat": (True, False, True),
    "fullgraph+tdcompat": (True, True, True),
    "fullgraph": (False, True, True),  # for the neutral overhead comparison only
}
REPORTED = ("eager", "compile", "compile+tdcompat", "fullgraph+tdcompat")


def one(workload: str, variant: str, backend: str, steps: int) -> dict:
    """Runs in the child: compile, count graphs/breaks/recompiles, time steps."""
    use_tdcompat, fullgraph, do_compile = VARIANTS[variant]
    if not use_tdcompat:
        os.environ["TDCOMPAT_DISABLE"] = "*"
    import warnings

    warnings.simplefilter("ignore")
    import tdcompat  # noqa: F401  (disabled above for the unpatched variants)
    import torch

    sys.path.insert(0, HERE)
    import workloads as W

    make = {**W.DOCUMENTED, **W.NEUTRAL}[workload]
    step, args, *rest = make()
    after = rest[0] if rest else (lambda result: None)
    result = {"workload": workload, "variant": variant, "backend": backend}
    if do_compile:
        import torch._dynamo
        from torch._dynamo.testing import CompileCounterWithBackend
        from torch._dynamo.utils import counters

        counters.clear()
        counter = CompileCounterWithBackend(backend)
        fn = torch.compile(step, backend=counter, fullgraph=fullgraph)
    else:
        fn = step
    t0 = time.perf_counter()
    try:
        after(fn(*args))
    except Exception as exc:  # noqa: BLE001
        result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return result
    result["cold_s"] = time.perf_counter() - t0
    if do_compile:
        result["graphs"] = counter.frame_count  # frames compiled by the first call
        result["graph_breaks"] = sum(counters["graph_break"].values())
        result["break_reasons"] = sorted({k.splitlines()[0][:120] for k in counters["graph_break"]})
    after(fn(*args))  # warm-up: a second call may still recompile once (guards on state the first call changed)
    if do_compile:
        result["warmup_recompiles"] = counter.frame_count - result["graphs"]
        frames_after_warmup = counter.frame_count
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        after(fn(*args))
        times.append(time.perf_counter() - t0)
    if do_compile:
        result["recompiles"] = counter.frame_count - frames_after_warmup
    result["step_median_s"] = statistics.median(times)
    result["step_spread_s"] = (min(times), max(times))
    return result


def _child(*argv: str, env=None) -> dict:
    proc = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def workloads(args) -> None:
    sys.path.insert(0, HERE)
    import workloads as W

    names = args.only or (list(W.DOCUMENTED) + list(W.NEUTRAL))
    steps = 3 if args.smoke else args.steps
    rows = []
    for name in names:
        res = {v: _child("--one", name, v, args.backend, str(steps)) for v in REPORTED}
        eager = res["eager"].get("step_median_s")
        unpatched = res["compile"].get("step_median_s")
        for v, r in res.items():
            med = r.get("step_median_s")
            r["x_eager"] = med / eager if med and eager else None
            r["x_unpatched_compile"] = med / unpatched if med and unpatched else None
            rows.append(r)
    _print_table(rows, ["workload", "variant", "graphs", "graph_breaks", "warmup_recompiles", "recompiles", "cold_s",
                        "step_median_s",
                        "x_eager", "x_unpatched_compile", "error"])
    if args.json:
        print(json.dumps(rows))


def neutral(args) -> None:
    """tdcompat active vs TDCOMPAT_DISABLE='*', interleaved, on workloads it has no business with."""
    sys.path.insert(0, HERE)
    import workloads as W

    reps = 1 if args.smoke else args.reps
    for name in args.only or W.NEUTRAL:
        cold = {"active": [], "disabled": []}
        step = {"active": [], "disabled": []}
        for _ in range(reps):
            for mode, variant in (("active", "compile+tdcompat"), ("disabled", "compile")):
                r = _child("--one", name, variant, args.backend, "20")
                cold[mode].append(r["cold_s"])
                step[mode].append(r["step_median_s"])
        for label, data in (("compile (cold, s)", cold), ("steady step (s)", step)):
            a, d = statistics.median(data["active"]), statistics.median(data["disabled"])
            spread = statistics.pstdev(data["active"] + data["disabled"]) / d if len(data["active"]) > 1 else float("nan")
            print(f"{name:<22} {label:<18} active {a:.6f}  disabled {d:.6f}  ratio {a / d:.4f}  (rel. spread {spread:.3f}, n={reps})")


IMPORT_SNIPPET = """
import time, sys
t0 = time.perf_counter(); import torch; t1 = time.perf_counter()
{extra}
t2 = time.perf_counter()
import json; print(json.dumps([t1 - t0, t2 - t1, [m for m in sys.modules if m.startswith('torch._dynamo')][:1]]))
"""

APPLY_SNIPPET = """
import time, json, torch._dynamo, tdcompat
times = []
for _ in range(20):
    tdcompat.unpatch()
    t0 = time.perf_counter(); tdcompat.patch(); times.append(time.perf_counter() - t0)
import statistics; print(json.dumps([statistics.median(times), len([s for s in tdcompat.status() if s.state.value == 'applied'])]))
"""


def import_cost(args) -> None:
    reps = 2 if args.smoke else args.reps
    with_td, without = [], []
    for _ in range(reps):
        for bucket, extra in ((with_td, "import tdcompat"), (without, "")):
            proc = subprocess.run([sys.executable, "-c", IMPORT_SNIPPET.format(extra=extra)], capture_output=True, text=True)
            t_torch, t_extra, dynamo = json.loads(proc.stdout.splitlines()[-1])
            assert not dynamo, "import tdcompat imported torch._dynamo"
            bucket.append((t_torch, t_extra))
    tdc = statistics.median(t for _, t in with_td) * 1000
    base = statistics.median(t for _, t in without) * 1000
    total_with = statistics.median(a + b for a, b in with_td) * 1000
    total_without = statistics.median(a + b for a, b in without) * 1000
    print(f"import tdcompat after torch: {tdc - base:.2f} ms (median of {reps}, interleaved)")
    print(f"import torch, tdcompat: {total_with:.1f} ms vs import torch: {total_without:.1f} ms")
    proc = subprocess.run([sys.executable, "-c", APPLY_SNIPPET], capture_output=True, text=True)
    apply_s, n = json.loads(proc.stdout.splitlines()[-1])
    print(f"apply all needed patches ({n} on this torch) incl. cache reset: {apply_s * 1000:.2f} ms (median of 20)")


def _print_table(rows, cols) -> None:
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.4g}"
        return "" if v is None else str(v)

    widths = {c: max(len(c), *(len(fmt(r.get(c))) for r in rows)) for c in cols}
    print("  ".join(c.ljust(widths[c]) for c in cols))
    for r in rows:
        print("  ".join(fmt(r.get(c)).ljust(widths[c]) for c in cols))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--one"]:
        name, variant, backend, steps = argv[1:5]
        print(json.dumps(one(name, variant, backend, int(steps))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["workloads", "neutral", "import"])
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", action="append", help="workload name(s)")
    args = parser.parse_args(argv)
    import torch

    print(f"# torch {torch.__version__}, python {sys.version.split()[0]}, {os.cpu_count()} cpus; backend {args.backend}")
    {"workloads": workloads, "neutral": neutral, "import": import_cost}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
