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
Reproduce one program with ``python scripts/fuzz.py --replay <seed>``. CI runs the
first 600 programs of seed 0 (``TDCOMPAT_FUZZ_PROGRAMS``); since issue 26, 60% of them
are programs of the patch families (tests/fuzzer.py ``FAMILIES``), so the open
divergences of tests/fuzz_known.json include Dynamo's own (``native``) ones there.
Volume from fresh seeds: ``nox -s fuzz`` (benchmarks/fuzz_ledger.json).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "fuzz.py")
MUST_BE_ZERO = ("introduced", "native", "regressed", "eager_error")


KNOWN = os.path.join(ROOT, "tests", "fuzz_known.json")


def _minor(torch_version: str) -> str:
    return ".".join(torch_version.split("+")[0].split(".")[:2])


def known_divergences(torch_version: str) -> dict:
    """{program seed: category} recorded as still open on this torch minor (tests/fuzz_known.json)."""
    with open(KNOWN) as fh:
        data = json.load(fh)
    return {int(k): v for k, v in data.get("open", {}).get(_minor(torch_version), {}).items()}


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
         "--shrink-seconds", "20"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=(int(programs) if programs else seconds * 4) + 900,
    )
    if not out.exists():
        raise AssertionError(f"fuzzer failed ({proc.returncode}):\nstdout:\n{proc.stdout[-4000:]}"
                             f"\nstderr:\n{proc.stderr[-6000:]}")
    report = json.loads(out.read_text())
    print(proc.stdout)
    assert report["programs"] > 0, proc.stdout
    assert not report["counts"]["eager_error"], proc.stdout
    # Divergences still open are listed in tests/fuzz_known.json (seed 0 only), each
    # one a defect tracked in the issue: the list may only shrink. Any other program
    # that diverges fails (a known one may change category: the defect is still open).
    known = known_divergences(report["versions"]["torch"]) if seed == 0 else {}
    new = {
        d["seed"]: d["category"]
        for d in report["divergences"]
        if d["category"] in MUST_BE_ZERO and d["seed"] not in known
    }
    assert not new, f"divergences not recorded as known: {new}\n{proc.stdout}"


def test_standalone_definitions_run_for_every_kind():
    """``--standalone`` scripts define each class before its use, whichever kinds a program draws (a 2.12.1
    crash's script once defined ``MEnum`` before its metaclass ``RevMeta``: a NameError, not a repro)."""
    import types

    import fuzzer

    for name, kind in fuzzer.KINDS.items():
        for deps in (kind.deps, tuple(reversed(kind.deps))):
            source = fuzzer.standalone_definitions(deps, kind.td)
            module = sys.modules["fuzz_standalone"] = types.ModuleType("fuzz_standalone")  # dataclasses look it up
            try:
                exec(compile(source, f"<standalone {name}>", "exec"), module.__dict__)
            except Exception as exc:  # pragma: no cover - the failure message is the point
                raise AssertionError(f"standalone definitions for kind {name} ({deps}) fail: {exc!r}") from exc
            finally:
                del sys.modules["fuzz_standalone"]
