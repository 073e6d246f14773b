"""Differential fuzzing of tdcompat (issue 11, "never worse"): eager vs compiled without vs with tdcompat.

    python scripts/fuzz.py --seed 0 --programs 200
    python scripts/fuzz.py --seed 7 --seconds 300 --all-configs --json fuzz.json
    python scripts/fuzz.py --replay 3000073 --standalone     # one program again, as a script

Generates seeded programs (tests/fuzzer.py), runs each eagerly, compiled with
tdcompat reverted and compiled with tdcompat applied, all in this one process,
and prints the count per category, the run rate and every divergence, shrunk
to a minimal program (``make()`` + ``f()``; with ``--standalone`` a
self-contained script that runs the check itself). Exit status 1 when a program was
``introduced`` (tdcompat made a result wrong), ``native`` (wrong with and
without tdcompat), ``regressed`` (tdcompat made a working program raise) or an
``eager_error`` (a generator bug).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="base seed; program i uses seed*1000003+i")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--programs", type=int, help="number of programs (default 100)")
    budget.add_argument("--seconds", type=float, help="time budget; programs are started until it is spent")
    parser.add_argument("--all-configs", action="store_true",
                        help="run every program under all four configs (fullgraph x backend eager/aot_eager)")
    parser.add_argument("--shrink-seconds", type=float, default=120.0, help="time limit to shrink one divergence")
    parser.add_argument("--replay", help="comma-separated program seeds to run (as printed with a divergence)")
    parser.add_argument("--standalone", action="store_true",
                        help="print each divergence as a self-contained script (classes included)")
    parser.add_argument("--json", help="write the full report here (it always holds both forms of each program)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--record-known", action="store_true",
                        help="write this run's divergences (seed 0) into tests/fuzz_known.json for this torch minor")
    args = parser.parse_args(argv)

    import tdcompat  # noqa: F401  (before Dynamo is imported, as users do)
    import fuzzer

    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    report = fuzzer.run_fuzz(args.seed, programs=args.programs, seconds=args.seconds,
                             all_configs=args.all_configs, shrink_seconds=args.shrink_seconds, log=log,
                             replay=[int(s) for s in args.replay.split(",")] if args.replay else None)
    print(fuzzer.summary(report, standalone=args.standalone), flush=True)
    if args.record_known:
        _record_known(report)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(fuzzer.main_json(report))
    return 1 if any(report["counts"][c] for c in fuzzer.BAD) else 0


def _record_known(report) -> None:
    import json

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
