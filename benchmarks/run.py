"""Benchmarks: what tdcompat costs and what it buys, measured side by side in one run.

    python benchmarks/run.py workloads [--backend eager|aot_eager|inductor] [--smoke]
    python benchmarks/run.py neutral [--reps 15] [--retraces 5] [--calls-only] [--callers] [--smoke]
    python benchmarks/run.py neutral --instructions    # needs valgrind: machine instructions per trace
    python benchmarks/run.py import [--reps 30] [--smoke]

Every variant runs in its own fresh interpreter (``--one`` mode below), so
patches, Dynamo caches and warm-up of one variant cannot leak into another;
variants are interleaved round by round so that machine noise hits all of them
alike. ``--smoke`` runs each once, to check the benchmarks still run (CI), and
says nothing about speed.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
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
    # isort: split
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


#: Fixed for the call counts: set iteration order (and so some of Dynamo's choices)
#: depends on the hash seed; with it fixed a variant's count repeats to the call.
HASHSEED = "0"


def _first_call(name: str, variant: str, backend: str):
    """In the child: import with or without tdcompat, make the workload and compile it (not called yet)."""
    use_tdcompat, fullgraph, _ = VARIANTS[variant]
    if not use_tdcompat:
        os.environ["TDCOMPAT_DISABLE"] = "*"
    import warnings

    warnings.simplefilter("ignore")
    import tdcompat  # noqa: F401  (before torch, as users do)
    # isort: split
    import torch
    import torch._dynamo

    sys.path.insert(0, HERE)
    import workloads as W

    step, args, *_ = W.NEUTRAL[name]()
    return torch.compile(step, backend=backend, fullgraph=fullgraph), args


def one_calls(name: str, variant: str, backend: str, dump: str = "") -> dict:
    """Runs in the child: cProfile's call counts over the first compiled call (the trace).

    ``calls``: every call cProfile sees (Python functions, and builtins called from
    Python); ``py_calls``: Python functions only. Counted from the profiler's own
    entries, one per code object: ``pstats`` keys them by file, line and name, and
    code objects that share those (every dataclass's generated ``__hash__`` is
    ``<string>:2``) would overwrite each other in an order that varies between runs.
    ``dump``: write the counts per function there (JSON), for ``--callers``."""
    import collections
    import cProfile

    fn, args = _first_call(name, variant, backend)
    # inspect.getmodule() maps every module in sys.modules to its file the first time it meets a code
    # object (Dynamo does while tracing): a one-off per process that grows with the modules imported
    # (tdcompat's installer and wrapt: 16 on 2.13.0, ~2,300 calls), not a cost of tracing. Paid here, for
    # both variants alike, so that the counts below are what tracing itself costs.
    inspect.getmodule(compile("", "<tdcompat-bench-warm-up>", "exec"))  # a file it has not mapped: a full scan
    profile = cProfile.Profile()
    profile.enable()
    fn(*args)
    profile.disable()
    import tdcompat

    package = os.path.dirname(os.path.abspath(tdcompat.__file__)) + os.sep
    per_function: collections.Counter = collections.Counter()
    calls = py_calls = ours = 0
    for entry in profile.getstats():
        code = entry.code
        calls += entry.callcount
        if isinstance(code, str):  # a builtin
            per_function[re.sub(r" at 0x[0-9a-f]+", "", code)] += entry.callcount
            continue
        py_calls += entry.callcount
        ours += entry.callcount if code.co_filename.startswith(package) else 0
        per_function[f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}({code.co_name})"] += entry.callcount
    if dump:
        with open(dump, "w") as f:
            json.dump(per_function, f)
    return {"workload": name, "variant": variant, "calls": calls, "py_calls": py_calls, "tdcompat_calls": ours}


def one_times(name: str, variant: str, backend: str, retraces: int) -> dict:
    """Runs in the child: the first compiled call (cold: lazy imports and caches
    included), then ``retraces`` traces of the same call after ``torch._dynamo.reset()``."""
    fn, args = _first_call(name, variant, backend)
    import torch._dynamo

    t0 = time.perf_counter()
    fn(*args)
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(retraces):
        torch._dynamo.reset()
        t0 = time.perf_counter()
        fn(*args)
        warm.append(time.perf_counter() - t0)
    return {"workload": name, "variant": variant, "cold_s": cold, "retrace_s": warm}


def one_traced(name: str, variant: str, backend: str) -> dict:
    """Runs in the child, under ``valgrind --tool=callgrind --instr-atstart=no``: one trace
    (after two untimed ones: lazy imports and caches) with instrumentation switched on for
    it alone, so callgrind's instruction count is that of tracing and nothing else."""
    import subprocess as sp

    fn, args = _first_call(name, variant, backend)
    import torch._dynamo

    for _ in range(2):
        fn(*args)
        torch._dynamo.reset()
    sp.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    fn(*args)
    sp.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
    return {}


def _neutral_instructions(name: str, backend: str) -> None:
    """Machine instructions executed by one trace, active vs disabled (callgrind): repeatable to
    about 0.01% with a fixed ``PYTHONHASHSEED``, where wall-clock time on a shared machine is not."""
    import tempfile

    counts = {}
    for mode, variant in NEUTRAL_MODES:
        with tempfile.TemporaryDirectory(prefix="tdcompat-cg-") as where:
            out = os.path.join(where, "callgrind.out")
            valgrind = ("valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}")
            _isolated_child("--one-traced", name, variant, backend, prefix=valgrind,
                            PYTHONHASHSEED=HASHSEED, OMP_NUM_THREADS="1")
            with open(out) as fh:
                counts[mode] = int(re.search(r"^totals:\s+(\d+)", fh.read(), re.M).group(1))
    a, d = counts["active"], counts["disabled"]
    print(f"{name:<22} {'instructions':<18} active {a:>11}  disabled {d:>11}  "
          f"ratio {a / d:.4f}  (+{100 * (a / d - 1):.2f}%)")


def _at_depth(depth: int, call):
    """``call()`` run ``depth`` Python frames below this one: where the caller's own stack ends."""
    return call() if depth == 0 else _at_depth(depth - 1, call)


def one_ab(name: str, backend: str, rounds: int, depths: int = 1) -> dict:
    """Runs in the child: tracing time with tdcompat applied and reverted in turn, in one
    interpreter (``tdcompat.unpatch()`` puts back Dynamo's own methods; Dynamo is reset
    before each timed call, so every one traces afresh). Each round times one
    trace of each, in alternating order, so load on the machine hits both alike.

    ``depths`` > 1 repeats each round with the compiled function called 0 .. depths-1
    Python frames deeper. On CPython 3.11 a trace's wall-clock time depends on where
    its deep recursion meets the 16 KiB chunks of the interpreter's frame stack (a
    chunk is mmap'ed when a call crosses into it and munmap'ed when that frame returns):
    one more frame anywhere on the stack, the user's or a wrapper's, moves those
    crossings. That costs kernel time, which instruction counts do not see, and it
    changes with the caller's depth: the minor page faults per trace are reported
    beside the times, and so is the same measure between two unpatched traces one
    caller frame apart."""
    import gc
    import resource

    fn, args = _first_call(name, "compile+tdcompat", backend)
    import torch._dynamo

    import tdcompat

    fn(*args)  # the one-time work (lazy imports, caches) is not part of either side

    def trace():
        torch._dynamo.reset()  # patch()/unpatch() reset only when they change something
        # Every trace starts from an empty young generation: otherwise a collection of the
        # whole heap (torch's, ~1e6 objects) lands in one trace or the other at random
        # (rel. sd 0.2-0.6 of a trace); allocations the trace itself makes still collect.
        gc.collect()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        fn(*args)
        elapsed = time.perf_counter() - t0
        return elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults

    times = {"active": [], "disabled": []}
    faults = {"active": [], "disabled": []}
    by_depth = {}
    for i in range(rounds):
        for depth in range(depths):
            for mode in (("active", "disabled") if (i + depth) % 2 == 0 else ("disabled", "active")):
                tdcompat.patch() if mode == "active" else tdcompat.unpatch()
                elapsed, flt = _at_depth(depth, trace)
                times[mode].append(elapsed)
                faults[mode].append(flt)
                by_depth.setdefault((mode, depth), []).append(elapsed)
    # Two unpatched traces one caller frame apart, same round: what the caller's stack alone does.
    one_frame = [(by_depth["disabled", d + 1][i], by_depth["disabled", d][i])
                 for d in range(depths - 1) for i in range(rounds)]
    return {"workload": name, **times, "faults": faults,
            "one_frame_deeper": [a for a, _ in one_frame], "one_frame_base": [b for _, b in one_frame]}


def _child(*argv: str, env=None, prefix=()) -> dict:
    """``prefix``: a command the child runs under (``valgrind ...``)."""
    proc = subprocess.run([*prefix, sys.executable, __file__, *argv], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _isolated_child(*argv: str, prefix=(), **env: str) -> dict:
    """A child with its own empty compile cache directory: torch keeps state between
    processes there (2.15's profile-guided dynamic shapes), which would make one
    run depend on the runs before it."""
    import shutil
    import tempfile

    cache = tempfile.mkdtemp(prefix="tdcompat-bench-cache-")
    try:
        return _child(*argv, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, **env}, prefix=prefix)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


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
        for r in res.values():
            med = r.get("step_median_s")
            r["x_eager"] = med / eager if med and eager else None
            r["x_unpatched_compile"] = med / unpatched if med and unpatched else None
            rows.append(r)
    _print_table(rows, ["workload", "variant", "graphs", "graph_breaks", "warmup_recompiles", "recompiles", "cold_s",
                        "step_median_s",
                        "x_eager", "x_unpatched_compile", "error"])
    if args.json:
        print(json.dumps(rows))


NEUTRAL_MODES = (("active", "compile+tdcompat"), ("disabled", "compile"))


def _neutral_calls(name: str, backend: str, callers: bool, most: int = 40) -> None:
    """Call counts over the first compiled call, active vs disabled, each in a fresh interpreter."""
    import shutil
    import tempfile

    res, dumps = {}, {}
    where = tempfile.mkdtemp(prefix="tdcompat-calls-")
    try:
        for mode, variant in NEUTRAL_MODES:
            dumps[mode] = os.path.join(where, f"{mode}.json") if callers else ""
            res[mode] = _isolated_child("--one-calls", name, variant, backend, dumps[mode], PYTHONHASHSEED=HASHSEED)
        a, d = res["active"], res["disabled"]
        for key, label in (("calls", "calls (all)"), ("py_calls", "calls (Python)")):
            print(f"{name:<22} {label:<18} active {a[key]:>9}  disabled {d[key]:>9}  "
                  f"extra {a[key] - d[key]:>+7}  ratio {a[key] / d[key]:.4f}  (+{100 * (a[key] / d[key] - 1):.2f}%)")
        print(f"{name:<22} {'in tdcompat':<18} active {a['tdcompat_calls']:>9}")
        if callers:
            _print_call_diff(dumps["active"], dumps["disabled"], most)
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _print_call_diff(active: str, disabled: str, most: int = 40) -> None:
    """The functions whose call count differs most between the two runs."""
    import collections

    with open(active) as f:
        a = collections.Counter(json.load(f))
    with open(disabled) as f:
        d = collections.Counter(json.load(f))
    diff = sorted(((a[k] - d[k], k) for k in set(a) | set(d) if a[k] != d[k]), key=lambda t: (-abs(t[0]), t[1]))
    for delta, where in diff[:most]:
        print(f"    {delta:>+7}  {where}")
    if len(diff) > most:
        print(f"    ({len(diff) - most} more)")


def neutral(args) -> None:
    """tdcompat active vs TDCOMPAT_DISABLE='*' on workloads it has no business with:
    call counts over the first compiled call (deterministic), then times, interleaved."""
    sys.path.insert(0, HERE)
    import workloads as W

    names = args.only or list(W.NEUTRAL)
    if args.instructions:
        for name in names:
            _neutral_instructions(name, args.backend)
        return
    for name in names:
        _neutral_calls(name, args.backend, args.callers, args.most)
    if args.calls_only:
        return
    for name in names:
        depths = min(args.depths, 2) if args.smoke else args.depths
        r = _isolated_child("--one-ab", name, args.backend, str(2 if args.smoke else args.ab_rounds), str(depths))
        label = "trace, in-process" if depths == 1 else f"trace, {depths} depths"
        _print_ratio(name, label, r["active"], r["disabled"])
        if depths > 1:
            _print_ratio(name, "caller +1 frame", r["one_frame_deeper"], r["one_frame_base"])
        print(f"{name:<22} {'page faults/trace':<16} active {statistics.mean(r['faults']['active']):.0f}  "
              f"disabled {statistics.mean(r['faults']['disabled']):.0f}  (mean)")
    reps = 1 if args.smoke else args.reps
    retraces = 1 if args.smoke else args.retraces
    for name in names:
        data = {mode: {"cold": [], "retrace": [], "step": []} for mode, _ in NEUTRAL_MODES}
        for i in range(reps):
            # Interleaved, and the order alternates round by round.
            for mode, variant in (NEUTRAL_MODES if i % 2 == 0 else NEUTRAL_MODES[::-1]):
                r = _isolated_child("--one-times", name, variant, args.backend, str(retraces))
                data[mode]["cold"].append(r["cold_s"])
                data[mode]["retrace"].append(statistics.median(r["retrace_s"]))
                if args.steps_too:
                    data[mode]["step"].append(_child("--one", name, variant, args.backend, "20")["step_median_s"])
        labels = [("cold", "first call (s)"), ("retrace", "re-trace (s)")] + (
            [("step", "steady step (s)")] if args.steps_too else [])
        for key, label in labels:
            _print_ratio(name, label, data["active"][key], data["disabled"][key])


def _print_ratio(name: str, label: str, active: list, disabled: list) -> None:
    """Median of each side, the ratio of medians, and the paired ratios' median and quartiles
    (round i's active run against round i's disabled run)."""
    a, d = statistics.median(active), statistics.median(disabled)
    line = f"{name:<22} {label:<16} active {a:.5f}  disabled {d:.5f}  ratio {a / d:.4f}"
    if len(active) > 3:
        paired = sorted(x / y for x, y in zip(active, disabled))
        q1, _, q3 = statistics.quantiles(paired, n=4)
        spread = statistics.pstdev(disabled) / d
        line += (f"  paired median {statistics.median(paired):.4f} [IQR {q1:.4f}-{q3:.4f}]"
                 f"  (disabled rel. sd {spread:.3f}, n={len(active)})")
    print(line)


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
import statistics
print(json.dumps([statistics.median(times), len([s for s in tdcompat.status() if s.state.value == 'applied'])]))
"""


def _bytecode_env() -> dict:
    """Bytecode cached, as in an installed package: PYTHONDONTWRITEBYTECODE (set on some machines) would have
    every run compile tdcompat's sources, a few ms that no user pays."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "tdcompat-bench-pycache"))
    return env


def _importtime_ms(env: dict) -> float:
    """``import tdcompat``'s cumulative time after ``import torch``, as ``python -X importtime`` reports it."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import torch; import tdcompat"],
                          capture_output=True, text=True, env=env, check=True)
    line = next(ln for ln in proc.stderr.splitlines() if ln.rstrip().endswith("| tdcompat"))
    return int(line.split("|")[1]) / 1000


def import_cost(args) -> None:
    reps = 2 if args.smoke else args.reps
    env = _bytecode_env()
    _importtime_ms(env)  # writes the bytecode
    times = sorted(_importtime_ms(env) for _ in range(max(reps, 5)))
    print(f"import tdcompat (python -X importtime, cumulative): min {times[0]:.2f} ms, median "
          f"{statistics.median(times):.2f} ms of {len(times)}")
    with_td, without = [], []
    for _ in range(reps):
        for bucket, extra in ((with_td, "import tdcompat"), (without, "")):
            proc = subprocess.run([sys.executable, "-c", IMPORT_SNIPPET.format(extra=extra)], capture_output=True,
                                  text=True, env=env)
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
    if argv[:1] == ["--one-calls"]:
        print(json.dumps(one_calls(*argv[1:5])))
        return 0
    if argv[:1] == ["--one-traced"]:
        print(json.dumps(one_traced(*argv[1:4])))
        return 0
    if argv[:1] == ["--one-ab"]:
        name, backend, rounds, depths = argv[1:5]
        print(json.dumps(one_ab(name, backend, int(rounds), int(depths))))
        return 0
    if argv[:1] == ["--one-times"]:
        name, variant, backend, retraces = argv[1:5]
        print(json.dumps(one_times(name, variant, backend, int(retraces))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["workloads", "neutral", "import"])
    parser.add_argument("--backend", default="eager")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--retraces", type=int, default=5, help="neutral: traces after reset per interpreter")
    parser.add_argument("--ab-rounds", type=int, default=40, help="neutral: in-process active/disabled trace pairs")
    parser.add_argument("--depths", type=int, default=1,
                        help="neutral: in-process pairs at caller depths 0..N-1 (CPython 3.11 frame-stack chunks)")
    parser.add_argument("--calls-only", action="store_true", help="neutral: only the call counts")
    parser.add_argument("--callers", action="store_true", help="neutral: the functions whose call counts differ")
    parser.add_argument("--most", type=int, default=40, help="neutral --callers: how many of them to list")
    parser.add_argument("--instructions", action="store_true",
                        help="neutral: machine instructions of one trace under callgrind (needs valgrind)")
    parser.add_argument("--steps-too", action="store_true", help="neutral: also time steady-state steps")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", action="append", help="workload name(s)")
    args = parser.parse_args(argv)
    import torch

    print(f"# torch {torch.__version__}, python {sys.version.split()[0]}, {os.cpu_count()} cpus; "
          f"backend {args.backend}")
    {"workloads": workloads, "neutral": neutral, "import": import_cost}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
