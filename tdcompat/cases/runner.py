"""Run the catalog in this process and print JSON: ``python -m tdcompat.cases.runner``.

The doctor and the tests start it in a fresh subprocess per side (with and
without tdcompat), so neither side can leak patches or Dynamo caches into the other.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings


def versions() -> dict:
    import platform

    import torch

    try:
        import tensordict

        td = tensordict.__version__
    except ImportError:
        td = None
    return {"python": platform.python_version(), "torch": str(torch.__version__), "tensordict": td}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tdcompat.cases.runner")
    parser.add_argument("--patched", action="store_true", help="import tdcompat first")
    parser.add_argument("--backend", action="append", help="limit to these backends")
    parser.add_argument("--progress", action="store_true",
                        help="one line per case on stderr: 'progress <done> <total> <case>'")
    parser.add_argument("names", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if not args.patched:
        # This module lives inside tdcompat, whose import registered the hook; the
        # hook reads the setting when Dynamo is imported, which is below.
        os.environ["TDCOMPAT_DISABLE"] = "*"
    if args.patched:
        import tdcompat
    import torch  # noqa: F401

    from .catalog import runnable_cases
    from .harness import SKIPPED, run_case

    cases, skipped = runnable_cases()
    report = {"versions": versions(), "patched": args.patched, "results": {}}
    chosen = [name for name in cases if not args.names or name in args.names]
    for done, name in enumerate(chosen, 1):
        case = cases[name]
        backends = [b for b in case.backends if not args.backend or b in args.backend]
        report["results"][name] = {b: run_case(case, b).as_dict() for b in backends}
        if args.progress:
            print(f"progress {done} {len(chosen)} {name}", file=sys.stderr, flush=True)
    for name, why in skipped.items():
        if not args.names or name in args.names:
            report["results"][name] = {"*": {"outcome": SKIPPED, "detail": why, "frames": 0}}
    if args.patched:
        import tdcompat

        report["status"] = [s.as_dict() for s in tdcompat.status()]
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
