"""Differential fuzzing (issue 11, "never worse"): a seeded budget of generated programs.

Every program (tests/fuzzer.py) runs eagerly, compiled without tdcompat and
compiled with it; with tdcompat it may graph-break, but it must never be wrong
where plain ``torch.compile`` was not (``introduced``), never wrong at all in
tdcompat's families (``native``), never raise where plain ``torch.compile``
worked (``regressed``), and the generator must not write programs eager rejects
(``eager_error``).

The run toggles ``tdcompat.patch()``/``unpatch()`` per program, so it happens in
its own interpreter (``scripts/fuzz.py``), never in the pytest process: safe under
xdist and random order. Budget: ``TDCOMPAT_FUZZ_SECONDS`` (default 60; CI sets
about 300); seed: ``TDCOMPAT_FUZZ_SEED`` (default 0, so a run is reproducible:
the programs are the same, only how many fit the budget depends on the machine).
Reproduce one program with ``python scripts/fuzz.py --replay <seed>``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "fuzz.py")
MUST_BE_ZERO = ("introduced", "native", "regressed", "eager_error")


def test_fuzz_never_worse(tmp_path):
    seconds = float(os.environ.get("TDCOMPAT_FUZZ_SECONDS", "60"))
    seed = int(os.environ.get("TDCOMPAT_FUZZ_SEED", "0"))
    # A program count makes the run the same on every machine (CI sets it); else a time budget.
    programs = os.environ.get("TDCOMPAT_FUZZ_PROGRAMS")
    budget = ["--programs", programs] if programs else ["--seconds", str(seconds)]
    out = tmp_path / "fuzz.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--seed", str(seed), *budget, "--json", str(out), "--quiet",
         "--shrink-seconds", "60"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=(int(programs) if programs else seconds * 4) + 900,
    )
    if not out.exists():
        raise AssertionError(f"fuzzer failed ({proc.returncode}):\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-6000:]}")
    report = json.loads(out.read_text())
    print(proc.stdout)
    assert report["programs"] > 0, proc.stdout
    bad = {c: report["counts"][c] for c in MUST_BE_ZERO if report["counts"][c]}
    assert not bad, f"{bad}\n{proc.stdout}"
