"""``python -m tdcompat doctor``: what tdcompat does on this install, shown by running it.

The catalog runs twice, each side in its own subprocess (without tdcompat, then
with it), so patches and Dynamo caches of one side cannot leak into the other.
A malformed setting or a patch that could not go in is a plain message, never a
traceback.

Exit status:

0  every patch this torch needs is applied or was switched off by you with
   ``TDCOMPAT_DISABLE`` (a choice: listed as such, not an error; so is a patch that
   goes off because it needs one you switched off), and every case that an applied
   patch claims to fix passes.
1  a patch this torch needs is not applied for any other reason: Dynamo's internals
   are not what it expects (``not applicable``), it failed, a patch it needs did, or
   ``TDCOMPAT_STRICT`` stopped at an earlier error; torch is too old or its version
   unreadable; or a case that an applied patch claims to fix still fails.
2  a setting tdcompat reads (``TDCOMPAT_DISABLE``, ``TDCOMPAT_STRICT``) or the command
   line is malformed: the message names the closest valid value. The cases are not run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from typing import Callable, Dict, List, Optional

from .lifecycle import Settings, plan, process_registry
from .registry import State

#: The backends the catalog's cases run under (``Case.backends``).
BACKENDS = ("eager", "aot_eager")


def _run_side(patched: bool, backends: List[str], names: List[str], progress: Optional[Callable] = None) -> dict:
    """Run the catalog in a fresh interpreter; ``progress(done, total, case)`` after each case."""
    # A strict-mode error is reported by the doctor itself; the runner must still fill the table.
    env = {k: v for k, v in os.environ.items() if k != "TDCOMPAT_STRICT"}
    if not patched:
        env["TDCOMPAT_DISABLE"] = "*"
    cmd = [sys.executable, "-m", "tdcompat.cases.runner", "--progress"]
    cmd += ["--patched"] if patched else []
    for backend in backends:
        cmd += ["--backend", backend]
    # stdout (one JSON line, often more than a pipe holds) goes to a file, so reading the
    # progress lines of stderr as they come can never block the runner's final write.
    with tempfile.TemporaryFile("w+") as out, subprocess.Popen(
        cmd + names, stdout=out, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        errors = []
        assert proc.stderr is not None
        for line in proc.stderr:
            parts = line.split(" ", 3)
            if parts[0] == "progress" and len(parts) == 4 and progress is not None:
                progress(int(parts[1]), int(parts[2]), parts[3].strip())
            elif parts[0] != "progress":
                errors.append(line)
        proc.wait()
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        raise RuntimeError(f"case runner failed ({'patched' if patched else 'unpatched'}):\n{''.join(errors)[-3000:]}")
    return json.loads(text.strip().splitlines()[-1])


class _Progress:
    """A line per step on stderr (``side  done/total  case  ETA``), so a minute of cases is never silent."""

    def __init__(self, sides: int, stream=None):
        import time

        self._clock = time.monotonic
        self._start = self._clock()
        self._sides = sides
        self._side = 0
        self._stream = stream or sys.stderr

    def side(self, label: str):
        self._side += 1
        self._label = label
        return self

    def __call__(self, done: int, total: int, case: str) -> None:
        elapsed = self._clock() - self._start
        steps_done = (self._side - 1) * total + done
        remaining = elapsed / steps_done * (self._sides * total - steps_done) if steps_done else 0.0
        print(f"  [{self._label} {done:>3}/{total}] ETA {remaining:4.0f}s  {case}", file=self._stream, flush=True)


def summary_line(before: dict, after: dict) -> str:
    """One line of counts over (case, backend) runs: what tdcompat changed, at a glance."""
    counts = {"fixed": 0, "ok both ways": 0, "still failing": 0, "skipped": 0, "worse": 0}
    for name, per_backend in before.items():
        for backend, result in per_backend.items():
            was = result["outcome"]
            now = after.get(name, {}).get(backend, {"outcome": "missing"})["outcome"]
            if "skipped" in (was, now):
                counts["skipped"] += 1
            elif was == "ok":
                counts["ok both ways" if now == "ok" else "worse"] += 1
            else:
                counts["fixed" if now == "ok" else "still failing"] += 1
    runs = sum(counts.values())
    return f"{runs} case runs: " + ", ".join(f"{n} {label}" for label, n in counts.items() if n or label == "worse")


def upstream_note(entry) -> str:
    """What it takes to drop the patch: a newer torch, or the upstream PR landing."""
    if entry.fixed_upstream:
        release, _, change = entry.fixed_upstream.partition(":")
        return f"fixed upstream in torch {release} ({change.strip()}): upgrading to {release} lets you drop it"
    # The wheel ships no docs: say where the kit is (the sdist and the repository have it).
    return f"open upstream: see docs/upstream/{entry.name}/ (its PR; in tdcompat's sdist and repository)"


def _label(result: dict) -> str:
    outcome = result["outcome"]
    return outcome.replace("_", " ")


def _activate(tdcompat) -> List[str]:
    """Apply what this torch needs, as the first Dynamo import would; every warning
    or error tdcompat raised, as messages (once each, never a traceback)."""
    from .config import ConfigError

    messages: List[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", tdcompat.TdcompatWarning)
        try:
            tdcompat.patch()
        except (ConfigError, tdcompat.TdcompatError) as exc:
            messages.append(f"{type(exc).__name__}: {exc}")
    for warning in caught:
        if issubclass(warning.category, tdcompat.TdcompatWarning):
            messages.append(str(warning.message))
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return list(dict.fromkeys(messages))


def classify(decisions) -> Dict[str, str]:
    """Per patch, from the decisions :func:`tdcompat.lifecycle.plan` made: ``ok`` (applied or not
    needed), ``choice`` (off by the user's choice, or because it needs a patch that is) or
    ``skipped`` (anything else)."""
    return {name: "ok" if d.state in (State.APPLIED, State.NOT_NEEDED) else "choice" if d.choice else "skipped"
            for name, d in decisions.items()}


def _needed_here(registry) -> Dict[str, bool]:
    """Per patch: would this torch apply it, had nothing been switched off (a failing probe: "may be")?"""
    import torch

    unchosen = plan(registry.patches, str(torch.__version__), Settings())
    return {name: d.state is not State.NOT_NEEDED for name, d in unchosen.items()}


def _print_record_comparison(cases, before, td_version) -> None:
    """This torch's unpatched outcomes against what the cases record for it."""
    import torch

    from .cases.records import MEASURED, differences, is_measured

    td = None if td_version == "not installed" else td_version
    found = differences(cases, before, str(torch.__version__), td)
    print()
    where = (f"recorded for torch {torch.__version__}" if is_measured(torch.__version__) else
             f"expected from the ranges: torch {torch.__version__} is not one of the releases measured "
             f"({', '.join(MEASURED)})")
    if not found:
        print(f"unpatched outcomes: all as {where}.")
        return
    print(f"unpatched outcomes that differ from what is {where}:")
    for d in found:
        seen = (f"as recorded on {', '.join(d.seen_on)}" if d.seen_on
                else "differs from every release measured")
        print(f"  {d.case} [{d.backend}]: {d.got.replace('_', ' ')} here, {d.expected.replace('_', ' ')} recorded "
              f"({seen}): {d.detail[:120]}")
    print("  this torch behaves differently from the records for these cases: a patch's range may be off "
          "for it. Please report the lines above with this output.")


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tdcompat doctor", description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", choices=BACKENDS,
                        help="backend to run the cases with, repeatable (default: eager)")
    parser.add_argument("--status-only", action="store_true", help="only print versions and patch states")
    parser.add_argument("names", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    backends = args.backend or ["eager"]

    import platform

    try:
        import torch
    except ImportError as exc:
        print(f"torch cannot be imported ({exc}); tdcompat needs torch>=2.5 installed.")
        return 1

    import tdcompat

    from . import config

    settings = config.problems(tdcompat.patch_names())
    # The doctor applies non-strictly, so that it can show everything; what strict mode
    # would have raised is said below (under it a program's first Dynamo import raises).
    strict_raw = os.environ.pop(config.STRICT_VAR, None)
    try:
        strict = config.strict({config.STRICT_VAR: strict_raw}) if strict_raw else False
    except config.ConfigError:
        strict = False
    messages = [m for m in _activate(tdcompat) if not any(p in m for p in settings)]
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
    statuses = tdcompat.status()
    kinds = classify(process_registry().decisions())
    needed_here = _needed_here(process_registry())
    print("patches:")
    name_width = max((len(entry.name) for entry in statuses), default=0) + 1
    for entry in statuses:
        note = ""
        if kinds[entry.name] == "choice" and not settings:
            note = "  (your choice: " + ("the cases it fixes fail here)" if needed_here[entry.name]
                                       else "not needed on this torch anyway)")
        elif kinds[entry.name] == "skipped" and not settings:
            note = "  <-- not applied"
        malformed = any(problem in entry.reason for problem in settings)
        reason = "not applied: a setting is malformed (see below)" if malformed else entry.reason
        print(f"  {entry.name:<{name_width}} {entry.state.value:<15} {reason}{note}")
    print()
    print("upstream (for each patch applied here):")
    for entry in statuses:
        if entry.state is tdcompat.State.APPLIED:
            print(f"  {entry.name:<{name_width}} {upstream_note(entry)}")
    if messages:
        print()
        print(f"tdcompat {'would raise TdcompatError under TDCOMPAT_STRICT (set here)' if strict else 'warned'}:")
        for message in messages:
            print(f"  {message}")
    if settings:
        print()
        print("malformed setting(s):")
        for problem in settings:
            print(f"  {problem}")
        print("fix the setting(s) above and run the doctor again (exit status 2).")
        return 2
    skipped = [name for name, kind in kinds.items() if kind == "skipped"]
    status = 0
    if skipped:
        print()
        print(f"{len(skipped)} patch(es) this torch may need are not applied: {', '.join(skipped)} (see above); "
              "please report it with this output (exit status 1).")
        status = 1
    if args.status_only:
        return status

    from .cases.catalog import all_cases

    cases = all_cases()
    unknown = [n for n in args.names if n not in cases]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    print()
    print(f"running {len(args.names) or len(cases)} cases without and with tdcompat "
          f"(backends: {', '.join(backends)}) ...")
    progress = _Progress(sides=2)
    try:
        before = _run_side(False, backends, args.names, progress.side("without tdcompat"))["results"]
        after = _run_side(True, backends, args.names, progress.side("with tdcompat"))["results"]
    except (RuntimeError, ValueError, IndexError) as exc:  # the runner died or printed no JSON
        print(f"the case runner failed, please report it with this output:\n{exc}")
        return 1
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
    _print_record_comparison(cases, before, td_version)
    print()
    print(summary_line(before, after))
    if failures:
        print(f"{failures} case(s) that tdcompat should fix still fail; please report them with this output.")
        return 1
    if status:
        print("every case an applied patch claims to fix passes, but see the patches not applied above.")
        return status
    print("every case tdcompat claims to fix passes on this install.")
    return 0
