"""Differential fuzzing of tdcompat (issues 11, 26): eager vs compiled without vs with tdcompat.

    python scripts/fuzz.py --seed 0 --programs 200
    python scripts/fuzz.py --seed random --seconds 300 --workers 2 --ledger benchmarks/fuzz_ledger.json
    python scripts/fuzz.py --seed 7 --seconds 300 --all-configs --json fuzz.json
    python scripts/fuzz.py --replay 3000073 --standalone     # one program again, as a script
    python scripts/fuzz.py --seed 0 --programs 300 --coverage  # and how often each patch handler ran

Generates seeded programs (tests/fuzzer.py), runs each eagerly, compiled with
tdcompat reverted and compiled with tdcompat applied, all in one process (one
per worker with ``--workers``: worker w runs the programs w, w+K, w+2K, ... of
the seed), and prints the count per category, the run rate and every divergence,
shrunk to a minimal program (``make()`` + ``f()``; with ``--standalone`` a
self-contained script that runs the check itself). ``--seed random`` draws a
fresh seed and prints it first. ``--ledger PATH`` appends the run to a JSON
ledger (per torch release: seed, slices, programs, tdcompat commit and dirty
flag, counts per category, the divergences). Exit status 1 when a program was
``introduced`` (tdcompat made a result wrong), ``native`` (wrong with and
without tdcompat), ``regressed`` (tdcompat made a working program raise) or an
``eager_error`` (a generator bug).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def ledger_table(path: str) -> str:
    """Per release: programs run from fresh seeds (seed 0 is CI's fixed set), how many seeds, and the
    introduced / native / regressed divergences those runs found (each run at the commit it names)."""
    with open(path) as fh:
        releases = json.load(fh)["releases"]
    rows = ["| torch | programs (fresh seeds) | seeds | introduced / native / regressed found | newest run |",
            "|---|---|---|---|---|"]
    key = lambda v: tuple(int(p) for p in v.split(".")[:3])  # noqa: E731
    for release in sorted(releases, key=key):
        runs = [r for r in releases[release] if r.get("seed") != 0]
        counts = [sum(r["counts"].get(c, 0) for r in runs) for c in ("introduced", "native", "regressed")]
        newest = max(runs, key=lambda r: r["date"]) if runs else None
        rows.append(f"| {release} | {sum(r['programs'] for r in runs):,} | {len({r['seed'] for r in runs})} | "
                    f"{' / '.join(str(c) for c in counts)} | "
                    + (f"{newest['date'][:10]}, {newest['commit'][:7]}, {newest['programs']:,} programs |"
                       if newest else "- |"))
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", default="0",
                        help="base seed (program i uses seed*1000003+i), or 'random' for a fresh one (printed first)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--programs", type=int, help="number of programs, all workers together (default 100)")
    budget.add_argument("--seconds", type=float, help="time budget; programs are started until it is spent")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes (0: one per core); worker w runs programs w, w+K, w+2K, ... of the seed")
    parser.add_argument("--all-configs", action="store_true",
                        help="run every program under all four configs (fullgraph x backend eager/aot_eager)")
    parser.add_argument("--shrink-seconds", type=float, default=120.0, help="time limit to shrink one divergence")
    parser.add_argument("--replay", help="comma-separated program seeds to run (as printed with a divergence)")
    parser.add_argument("--standalone", action="store_true",
                        help="print each divergence as a self-contained script (classes included)")
    parser.add_argument("--json", help="write the full report here (it always holds both forms of each program)")
    parser.add_argument("--ledger", help="append this run to a JSON ledger (e.g. benchmarks/fuzz_ledger.json)")
    parser.add_argument("--coverage", action="store_true",
                        help="count the calls of every applied patch's handlers (report key 'handlers')")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--record-known", action="store_true",
                        help="write this run's divergences (seed 0) into tests/fuzz_known.json for this torch minor")
    parser.add_argument("--ledger-table", metavar="LEDGER",
                        help="print a Markdown table of a ledger's fresh-seed volume per release and exit")
    parser.add_argument("--slice", help=argparse.SUPPRESS)  # "offset:stride", set for a worker
    parser.add_argument("--progress", help=argparse.SUPPRESS)  # the file a worker notes its current program in
    args = parser.parse_args(argv)
    if args.ledger_table:
        print(ledger_table(args.ledger_table))
        return 0

    seed = secrets.randbelow(2 ** 31) if args.seed == "random" else int(args.seed)
    print(f"tdcompat fuzz seed {seed}", flush=True)
    # the code under test is what the workers import now: a commit made during a long run must not be credited
    started = source_state() if args.ledger else (None, None)
    workers = args.workers or os.cpu_count() or 1
    if not args.replay and not args.slice:
        # worker processes even for one worker: a crashed worker is restarted, the run goes on
        report = _parallel(args, seed, workers)
    else:
        # torch.testing's common_utils parses sys.argv when imported (`--seed random` is no int there)
        sys.argv[1:] = []
        import tdcompat  # noqa: F401  (before Dynamo is imported, as users do)

        import fuzzer

        offset, stride = (int(v) for v in (args.slice or "0:1").split(":"))
        log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
        report = fuzzer.run_fuzz(seed, programs=args.programs, seconds=args.seconds,
                                 all_configs=args.all_configs, shrink_seconds=args.shrink_seconds, log=log,
                                 replay=[int(s) for s in args.replay.split(",")] if args.replay else None,
                                 offset=offset, stride=stride, coverage=args.coverage, progress=args.progress)
        report["slices"] = [{"offset": offset, "stride": stride, "programs": report["programs"]}]
    import fuzzer

    if not args.slice:
        print(fuzzer.summary(report, standalone=args.standalone), flush=True)
        if report.get("handlers"):
            missed = not_reached(report["handlers"])
            print(f"handlers not reached: {missed or 'none'}", flush=True)
    if args.record_known:
        _record_known(report)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(fuzzer.main_json(report))
    if args.ledger and not args.slice and not args.replay:
        append_ledger(args.ledger, report, started)
    return 1 if any(report["counts"].get(c) for c in fuzzer.BAD + ("crash",)) else 0


def not_reached(handlers: dict) -> list:
    return [f"{patch}: {label}" for patch, labels in handlers.items() for label, (calls, _) in labels.items()
            if not calls]


def _parallel(args, seed: int, workers: int) -> dict:
    """``workers`` processes of this script, worker w on the slice w::workers of the seed's programs."""
    tmp = tempfile.mkdtemp(prefix="tdcompat-fuzz-")
    start = time.monotonic()
    deadline = start + args.seconds if args.seconds is not None else None

    def launch(w: int, offset: int, programs: int, part: int):
        """Worker ``w`` from program ``offset`` of the seed, every ``workers``-th one."""
        if deadline is not None:
            budget = ["--seconds", str(max(1.0, deadline - time.monotonic()))]
        else:
            budget = ["--programs", str(programs)]
        out = os.path.join(tmp, f"worker{w}-{part}.json")
        progress = os.path.join(tmp, f"worker{w}-{part}.progress")
        cmd = [sys.executable, os.path.abspath(__file__), "--seed", str(seed), *budget, "--slice",
               f"{offset}:{workers}", "--shrink-seconds", str(args.shrink_seconds), "--json", out,
               "--progress", progress]
        cmd += ["--quiet"] if args.quiet else []
        cmd += ["--all-configs"] if args.all_configs else []
        cmd += ["--coverage"] if args.coverage else []
        return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL), out, progress, offset, programs

    running = {w: (launch(w, w, ((args.programs or 100) + workers - 1 - w) // workers, 0), 0) for w in range(workers)}
    reports, crashes = [], []
    while running:
        for w, ((proc, out, progress, offset, programs), part) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[w]
            if os.path.exists(out):
                with open(out) as fh:
                    reports.append(json.load(fh))
                continue
            # The worker died (a segfault in Dynamo, say): keep what it wrote after its last finished
            # program, note the program it died in, and go on after it.
            try:
                with open(progress) as fh:
                    index, pseed = (int(v) for v in fh.read().split())
            except (OSError, ValueError):
                raise SystemExit(f"fuzz worker failed ({proc.returncode}): {' '.join(proc.args)}") from None
            lost = index
            if os.path.exists(progress + ".partial"):
                with open(progress + ".partial") as fh:
                    partial = json.load(fh)
                if partial["programs"] == index:
                    reports.append(partial)
                    lost = 0
            crashes.append({"seed": pseed, "category": "crash", "config": "", "shape": "", "unpatched": "",
                            "patched": "", "detail": f"the worker process died with exit status {proc.returncode}; "
                            f"replay: scripts/fuzz.py --replay {pseed}", "compact_source": "", "source": "",
                            "slice": {"offset": offset if lost else offset + index * workers, "stride": workers,
                                      "programs": index + 1 if lost else 1, "crashed_at": pseed,
                                      "results_lost": lost}})
            print(f"[crash] seed={pseed}: worker exit status {proc.returncode}", file=sys.stderr, flush=True)
            left = programs - index - 1
            if (deadline is None and left > 0) or (deadline is not None and time.monotonic() < deadline - 5):
                running[w] = (launch(w, offset + (index + 1) * workers, left, part + 1), part + 1)
        time.sleep(0.5)
    if not reports:
        raise SystemExit(f"no fuzz worker finished: {crashes}")
    merged = dict(reports[0])
    merged["seconds"] = round(time.monotonic() - start, 2)
    for key in ("programs", "runs", "run_seconds"):
        merged[key] = round(sum(r[key] for r in reports), 2) if key == "run_seconds" else sum(r[key] for r in reports)
    merged["counts"] = {c: sum(r["counts"][c] for r in reports) for c in reports[0]["counts"]}
    merged["divergences"] = sorted([d for r in reports for d in r["divergences"]] + crashes, key=lambda d: d["seed"])
    merged["counts"]["crash"] = len(crashes)
    merged["programs"] += len(crashes)
    merged["fallback_warnings"] = [f for r in reports for f in r["fallback_warnings"]]
    merged["slices"] = sorted([{"offset": r["offset"], "stride": r["stride"], "programs": r["programs"]}
                               for r in reports] + [c["slice"] for c in crashes],
                              key=lambda s: (s["offset"] % workers, s["offset"]))
    # Rates over the wall time the workers ran side by side.
    rs = max(r["run_seconds"] for r in reports) or 1.0
    merged["runs_per_second"] = round(merged["runs"] / rs, 3)
    merged["programs_per_second"] = round(merged["programs"] / rs, 3)
    if "handlers" in reports[0]:
        merged["handlers"] = {patch: {label: [sum(r["handlers"].get(patch, {}).get(label, [0, 0])[i] for r in reports)
                                              for i in (0, 1)] for label in labels}
                              for patch, labels in reports[0]["handlers"].items()}
    merged["workers"] = workers
    return merged


def _git(*cmd: str) -> str:
    return subprocess.run(["git", "-C", ROOT, *cmd], capture_output=True, text=True, check=True).stdout.strip()


def source_state() -> tuple:
    """(HEAD commit, whether tracked files differ from it) of the checkout, or (None, None) outside git;
    taken when a run starts, since the workers import the code as it is then."""
    try:
        # the ledger itself does not count: the previous run's entry makes it changed
        changed = _git("status", "--porcelain", "--untracked-files=no", "--", ".",
                       ":(exclude)benchmarks/fuzz_ledger.json")
        return _git("rev-parse", "HEAD"), bool(changed)
    except (OSError, subprocess.CalledProcessError):
        return None, None


def ledger_entry(report: dict, started: tuple = (None, None)) -> dict:
    """One run as the ledger keeps it: where (torch, the commit it started at), what (seed, slices, programs),
    what came out."""
    commit, dirty = started if started[0] is not None else source_state()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "dirty": dirty,
        "versions": report["versions"],
        "seed": report["seed"],
        "slices": report.get("slices", [{"offset": 0, "stride": 1, "programs": report["programs"]}]),
        "programs": report["programs"],
        "runs": report["runs"],
        "all_configs": report["all_configs"],
        "seconds": report["seconds"],
        "counts": report["counts"],
        "divergences": [{k: d[k] for k in ("seed", "category", "config", "shape", "unpatched", "patched", "detail",
                                           "compact_source")} for d in report["divergences"]],
        **({"handlers_not_reached": not_reached(report["handlers"])} if report.get("handlers") else {}),
    }


def append_ledger(path: str, report: dict, started: tuple = (None, None)) -> None:
    """Append to the ledger ``{"doc": ..., "releases": {torch version: [entry, ...]}}`` under a file lock."""
    import fcntl

    entry = ledger_entry(report, started)
    release = report["versions"]["torch"].split("+")[0]
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        text = fh.read()
        data = json.loads(text) if text.strip() else {}
        data.setdefault("doc", LEDGER_DOC)
        data.setdefault("releases", {}).setdefault(release, []).append(entry)
        data["releases"] = dict(sorted(data["releases"].items(), key=lambda kv: _version_key(kv[0])))
        fh.seek(0)
        fh.truncate()
        json.dump(data, fh, indent=1)
        fh.write("\n")
    print(f"ledger: {path} ({release}, seed {entry['seed']}, {entry['programs']} programs)", flush=True)


def _version_key(version: str):
    return tuple(int(p) if p.isdigit() else 0 for p in version.split(".")[:3])


LEDGER_DOC = ("Differential fuzz runs (scripts/fuzz.py --ledger; nox -s fuzz), per torch release: the base seed, "
              "the slices the workers ran (worker w: programs seed*1000003 + offset + i*stride), programs and runs, "
              "the tdcompat commit and whether the checkout had uncommitted changes (dirty), counts per category "
              "and every divergence (shrunk; compact_source: make() + f() with tests/fuzzer.py's classes).")


def _record_known(report) -> None:
    import fuzzer

    path = os.path.join(ROOT, "tests", "fuzz_known.json")
    with open(path) as fh:
        data = json.load(fh)
    minor = ".".join(report["versions"]["torch"].split("+")[0].split(".")[:2])
    found = {str(d["seed"]): d["category"] for d in report["divergences"] if d["category"] in fuzzer.BAD}
    data.setdefault("open", {})[minor] = dict(sorted(found.items(), key=lambda kv: int(kv[0])))
    with open(path, "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    sys.exit(main())
