"""``python -m tdcompat doctor``: what tdcompat does on this install, shown by running it.

The catalog runs twice, each side in its own subprocess (without tdcompat, then
with it), so patches and Dynamo caches of one side cannot leak into the other.
Exit status 1 when a case that tdcompat claims to fix still fails patched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import List, Optional


def _run_side(patched: bool, backends: List[str], names: List[str]) -> dict:
    env = dict(os.environ)
    if not patched:
        env["TDCOMPAT_DISABLE"] = "*"
    cmd = [sys.executable, "-m", "tdcompat.cases.runner"]
    cmd += ["--patched"] if patched else []
    for backend in backends:
        cmd += ["--backend", backend]
    proc = subprocess.run(cmd + names, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"case runner failed ({'patched' if patched else 'unpatched'}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def upstream_note(entry) -> str:
    """What it takes to drop the patch: a newer torch, or the upstream PR landing."""
    if entry.fixed_upstream:
        release, _, change = entry.fixed_upstream.partition(":")
        return f"fixed upstream in torch {release} ({change.strip()}): upgrading to {release} lets you drop it"
    return f"open upstream: see docs/upstream/{entry.name}/"


def _label(result: dict) -> str:
    outcome = result["outcome"]
    return outcome.replace("_", " ")


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tdcompat doctor", description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", help="backends to run (default: eager)")
    parser.add_argument("--status-only", action="store_true", help="only print versions and patch states")
    parser.add_argument("names", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    backends = args.backend or ["eager"]

    import platform

    import torch

    import tdcompat

    tdcompat.patch()
    try:
        import tensordict

        td_version = tensordict.__version__
    except ImportError:
        td_version = "not installed"
    print(f"python      {platform.python_version()}")
    print(f"torch       {torch.__version__}")
    print(f"tensordict  {td_version}")
    print(f"tdcompat    {tdcompat.__version__}")
    print()
    print("patches:")
    for entry in tdcompat.status():
        print(f"  {entry.name:<24} {entry.state.value:<15} {entry.reason}")
    print()
    print("upstream (for each patch applied here):")
    for entry in tdcompat.status():
        if entry.state is tdcompat.State.APPLIED:
            print(f"  {entry.name:<24} {upstream_note(entry)}")
    if args.status_only:
        return 0

    from .cases.catalog import all_cases

    cases = all_cases()
    unknown = [n for n in args.names if n not in cases]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    print()
    print(f"running {len(args.names) or len(cases)} cases without and with tdcompat (backends: {', '.join(backends)}) ...")
    before = _run_side(False, backends, args.names)["results"]
    after = _run_side(True, backends, args.names)["results"]
    applied = {s.name for s in tdcompat.status() if s.state is tdcompat.State.APPLIED}
    width = max(len(n) for n in before) + 2
    print()
    print(f"{'case':<{width}}{'backend':<11}{'unpatched':<15}{'patched':<15}")
    failures = 0
    for name, per_backend in before.items():
        for backend, result in per_backend.items():
            patched = after.get(name, {}).get(backend, {"outcome": "missing", "detail": ""})
            mark = ""
            claimed = set(cases[name].patches) & applied if name in cases else set()
            if patched["outcome"] not in ("ok", "skipped") and (claimed or result["outcome"] == "ok"):
                failures += 1
                mark = "  <-- still fails: " + patched["detail"][:100]
            print(f"{name:<{width}}{backend:<11}{_label(result):<15}{_label(patched):<15}{mark}")
    print()
    if failures:
        print(f"{failures} case(s) that tdcompat should fix still fail; please report them with this output.")
        return 1
    print("every case tdcompat claims to fix passes on this install.")
    return 0
