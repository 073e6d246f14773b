"""Check the upstream kit (docs/upstream/<gap>/) against the installed torch.

For every gap folder (``fix.patch`` + ``test_*.py``), on a private copy of the
installed torch package::

    1. ``git apply --check`` then ``git apply`` of fix.patch (paths as in the
       PyTorch repo: a/torch/_dynamo/...);
    2. the gap's upstream tests on the unpatched copy, TDCOMPAT_DISABLE='*': must fail;
    3. the same tests on the patched copy, TDCOMPAT_DISABLE='*': must pass;
    4. the same tests on the unpatched copy with tdcompat imported first
       (TDCOMPAT_DISABLE unset): must pass, i.e. tdcompat and the PR agree.

One line per gap; exit status 1 if any gap misses (also: a patch tdcompat
applies on this torch that has no folder, or patches that do not apply
together). Run it with the interpreter of the environment to check::

    <env>/bin/python scripts/check_upstream.py [--gap NAME ...] [--keep] [-v]

The copy lives in a temporary directory: hard links for every file, real copies
of the files a fix.patch touches (so nothing is ever written through a link into
the installed package). Nothing outside that directory changes: child processes
run with PYTHONDONTWRITEBYTECODE=1, their working directory and the compiler
caches are inside it, and the touched installed files are hashed before and after.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "docs" / "upstream"
#: Top-level packages copied next to each other, so ``import torch`` (and what
#: it imports by name) resolves inside the copy. Missing ones are skipped.
PACKAGES = ("torch", "functorch", "torchgen")
TIMEOUT = 1800

# Runs one test file; ``--tdcompat NAME`` imports tdcompat first and checks that
# it applied the patch NAME. Prints where torch came from so the caller can
# check that the copy, not the installed package, was imported.
RUNNER = r"""
import json, runpy, sys
args = sys.argv[1:]
gap = None
if args[0] == "--tdcompat":
    gap, args = args[1], args[2:]
    import tdcompat
import torch
sys.stderr.write("check_upstream: torch from %s\n" % torch.__file__)
if gap is not None:
    import torch._dynamo
    states = {s.name: s.state.value for s in tdcompat.status()}
    sys.stderr.write("check_upstream: tdcompat %s %s\n" % (gap, states.get(gap)))
path = args[0]
sys.argv = [path] + args[1:]
runpy.run_path(path, run_name="__main__")
"""

# Which tdcompat patches this torch needs (those tdcompat applies when nothing is disabled).
NEEDED = r"""
import json, tdcompat, torch._dynamo
print(json.dumps(sorted(s.name for s in tdcompat.status() if s.state.value == "applied")))
"""

LOCATE = r"""
import importlib.metadata, importlib.util, json, sys
out = {"version": importlib.metadata.version("torch"), "packages": {}}
for name in sys.argv[1:]:
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.submodule_search_locations:
        out["packages"][name] = list(spec.submodule_search_locations)[0]
print(json.dumps(out))
"""


@dataclasses.dataclass
class TestRun:
    returncode: int
    ran: int
    failed: List[str]
    torch_file: str
    tdcompat_state: Optional[str]
    output: str

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and self.ran > 0 and not self.failed

    def counts(self) -> str:
        return f"{len(self.failed)}/{self.ran} tests"


def _run(cmd: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, **kwargs)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def patched_paths(patch: Path) -> List[str]:
    """Repo paths (torch/...) a unified diff writes to."""
    paths = []
    for line in patch.read_text().splitlines():
        if line.startswith("+++ "):
            target = line[4:].split("\t")[0].strip()
            if target == "/dev/null":
                continue
            if not target.startswith("b/"):
                raise ValueError(f"{patch}: expected b/<path> in {line!r}")
            paths.append(target[2:])
    if not paths:
        raise ValueError(f"{patch}: no file in the diff")
    return paths


class Sandbox:
    """The temporary directory, its copies of the installed packages, and the
    environment child processes run in."""

    def __init__(self, python: str, packages: Dict[str, str], keep: bool):
        self.python = python
        self.packages = {name: Path(path) for name, path in packages.items()}
        self.keep = keep
        self.dir = Path(tempfile.mkdtemp(prefix="tdcompat-upstream-"))
        self.linked = 0
        self.copied = 0

    def close(self) -> None:
        if self.keep:
            print(f"(kept {self.dir})")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _link(self, src: str, dst: str) -> None:
        try:
            os.link(src, dst)
            self.linked += 1
        except OSError:  # another file system, or links not allowed: a real copy
            shutil.copy2(src, dst)
            self.copied += 1

    def copy(self, name: str, writable: Sequence[str] = ()) -> Path:
        """A copy of the installed packages under ``name``; the repo paths in
        ``writable`` are real files, every other file is a hard link."""
        root = self.dir / name
        root.mkdir()
        for pkg, src in self.packages.items():
            shutil.copytree(src, root / pkg, symlinks=True, copy_function=self._link)
        for rel in writable:
            dst = root / rel
            src = self.source_of(rel)
            if not src.is_file():
                raise FileNotFoundError(f"{rel}: not in the installed package ({src})")
            dst.unlink()
            shutil.copyfile(src, dst)  # new inode, new mtime
            if dst.stat().st_nlink != 1 or os.path.samefile(dst, src):
                raise RuntimeError(f"{dst} still shares its inode with {src}")
            # Its cached bytecode (a link to the installed one) goes too.
            cache = dst.parent / "__pycache__"
            for pyc in cache.glob(dst.stem + ".*.pyc") if cache.is_dir() else ():
                pyc.unlink()
        return root

    def source_of(self, rel: str) -> Path:
        pkg, _, rest = rel.partition("/")
        if pkg not in self.packages:
            raise ValueError(f"{rel}: not under one of {sorted(self.packages)}")
        return self.packages[pkg] / rest

    def env(self, copy_root: Path, tdcompat: bool) -> Dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
        if not tdcompat:
            env["TDCOMPAT_DISABLE"] = "*"
        env["PYTHONPATH"] = os.pathsep.join([str(copy_root)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTORCH_PRINT_REPRO_ON_FAILURE"] = "0"
        caches = self.dir / "cache"
        env["TORCHINDUCTOR_CACHE_DIR"] = str(caches / "inductor")
        env["TRITON_CACHE_DIR"] = str(caches / "triton")
        env["TORCH_HOME"] = str(caches / "torch")
        env["GIT_CEILING_DIRECTORIES"] = str(self.dir.parent)
        return env

    def git_apply(self, copy_root: Path, patch: Path, check: bool) -> Tuple[bool, str]:
        cmd = ["git", "apply", "-p1", "--whitespace=nowarn"] + (["--check"] if check else []) + [str(patch)]
        proc = _run(cmd, cwd=copy_root, env=self.env(copy_root, tdcompat=False))
        return proc.returncode == 0, (proc.stderr or proc.stdout).strip()

    def run_tests(self, copy_root: Path, test: Path, tdcompat_gap: Optional[str]) -> TestRun:
        runner = self.dir / "runner.py"
        if not runner.exists():
            runner.write_text(RUNNER)
        cmd = [self.python, str(runner)]
        if tdcompat_gap is not None:
            cmd += ["--tdcompat", tdcompat_gap]
        cmd += [str(test), "-v"]
        try:
            proc = _run(cmd, cwd=self.dir, env=self.env(copy_root, tdcompat=tdcompat_gap is not None), timeout=TIMEOUT)
            rc, out = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc, out = -1, f"timed out after {TIMEOUT}s\n{exc.stdout or ''}{exc.stderr or ''}"
        ran = re.findall(r"^Ran (\d+) tests?", out, re.M)
        failed = sorted(set(re.findall(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (\w+)", out, re.M)))
        torch_file = (re.findall(r"^check_upstream: torch from (.*)$", out, re.M) or [""])[-1]
        state = re.findall(r"^check_upstream: tdcompat \S+ (\S+)$", out, re.M)
        return TestRun(rc, int(ran[-1]) if ran else 0, failed, torch_file, state[-1] if state else None, out)


@dataclasses.dataclass
class Gap:
    name: str
    folder: Path
    patch: Path
    tests: List[Path]
    paths: List[str]


def find_gaps(selected: Sequence[str]) -> Tuple[List[Gap], List[str]]:
    gaps, problems = [], []
    for folder in sorted(p for p in UPSTREAM.iterdir() if p.is_dir()):
        if selected and folder.name not in selected:
            continue
        patch = folder / "fix.patch"
        tests = sorted(folder.glob("test_*.py"))
        if not patch.is_file() or not tests:
            problems.append(f"{folder.name}: incomplete kit (needs fix.patch and test_*.py)")
            continue
        try:
            gaps.append(Gap(folder.name, folder, patch, tests, patched_paths(patch)))
        except ValueError as exc:
            problems.append(f"{folder.name}: {exc}")
    for name in selected:
        if not (UPSTREAM / name).is_dir():
            problems.append(f"{name}: no folder docs/upstream/{name}/")
    return gaps, problems


def describe_failures(run: TestRun, limit: int = 3) -> str:
    if run.failed:
        names = ", ".join(run.failed[:limit]) + (", ..." if len(run.failed) > limit else "")
        return f"{run.counts()}: {names}"
    if run.ran == 0:
        tail = run.output.strip().splitlines()[-1:] or ["no output"]
        return f"no test ran: {tail[0][:200]}"
    return run.counts()


def check_gap(box: Sandbox, gap: Gap, unpatched: Path, verbose: bool) -> Tuple[bool, str]:
    parts: List[str] = []
    patched = box.copy(f"patched-{gap.name}", gap.paths)
    ok, msg = box.git_apply(patched, gap.patch, check=True)
    if ok:
        ok, msg = box.git_apply(patched, gap.patch, check=False)
    if not ok:
        return False, f"does NOT apply: {msg.splitlines()[0] if msg else 'git apply failed'}"
    parts.append("applies")
    good = True

    def run_all(root: Path, tdcompat_gap: Optional[str]) -> TestRun:
        runs = [box.run_tests(root, test, tdcompat_gap) for test in gap.tests]
        merged = TestRun(
            max((abs(r.returncode) for r in runs), default=0),
            sum(r.ran for r in runs),
            sorted(n for r in runs for n in r.failed),
            runs[0].torch_file,
            runs[0].tdcompat_state,
            "\n".join(r.output for r in runs),
        )
        if not merged.torch_file.startswith(str(root)):
            merged.failed.append(f"<torch imported from {merged.torch_file or '?'}, not the copy>")
            merged.returncode = merged.returncode or 1
        if verbose:
            print(merged.output)
        return merged

    before = run_all(unpatched, None)
    if before.failed and before.ran:
        parts.append(f"fails before ({before.counts()})")
    else:
        good = False
        parts.append(f"does NOT fail before ({describe_failures(before)})")

    after = run_all(patched, None)
    if after.passed:
        parts.append(f"passes after ({after.ran} tests)")
    else:
        good = False
        parts.append(f"FAILS after ({describe_failures(after)})")

    with_td = run_all(unpatched, gap.name)
    if with_td.tdcompat_state != "applied":
        good = False
        parts.append(f"tdcompat did not apply {gap.name} (state: {with_td.tdcompat_state})")
    elif with_td.passed:
        parts.append("passes with tdcompat")
    else:
        good = False
        parts.append(f"FAILS with tdcompat ({describe_failures(with_td)})")
    return good, ", ".join(parts)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gap", action="append", default=[], help="check only this gap (repeatable)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the environment to check")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the test output")
    args = parser.parse_args(argv)

    if shutil.which("git") is None:
        print("check_upstream: git is needed (git apply)", file=sys.stderr)
        return 2
    quiet = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
    quiet["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the installed packages
    located = _run([args.python, "-c", LOCATE, *PACKAGES], env=quiet)
    if located.returncode != 0:
        print(f"check_upstream: cannot locate torch with {args.python}:\n{located.stderr}", file=sys.stderr)
        return 2
    info = json.loads(located.stdout)
    if "torch" not in info["packages"]:
        print(f"check_upstream: torch is not installed for {args.python}", file=sys.stderr)
        return 2

    gaps, problems = find_gaps(args.gap)
    needed_proc = _run([args.python, "-c", NEEDED], env=quiet)
    needed = json.loads(needed_proc.stdout.strip().splitlines()[-1]) if needed_proc.returncode == 0 else None
    print(f"torch {info['version']} ({info['packages']['torch']}); "
          f"tdcompat patches applied here: {', '.join(needed) if needed else needed}")
    if needed is None:
        problems.append(f"cannot ask tdcompat which patches this torch needs:\n{needed_proc.stderr[-2000:]}")
    elif not args.gap:
        have = {g.name for g in gaps}
        problems += [f"{name}: no upstream kit (docs/upstream/{name}/), though tdcompat applies it on this torch"
                     for name in needed if name not in have]

    protected = {rel: None for gap in gaps for rel in gap.paths}
    box = Sandbox(args.python, info["packages"], keep=args.keep)
    misses = len(problems)
    try:
        for rel in protected:
            protected[rel] = _sha256(box.source_of(rel))
        unpatched = box.copy("unpatched")
        for gap in gaps:
            if needed is not None and gap.name not in needed:
                print(f"{gap.name}: skipped (tdcompat does not apply it on torch {info['version']}: "
                      "the gap is closed here)")
                continue
            good, line = check_gap(box, gap, unpatched, args.verbose)
            misses += not good
            print(f"{gap.name}: {line}", flush=True)
        active = [g for g in gaps if needed is None or g.name in needed]
        if len(active) > 1:
            together = box.copy("together", sorted({p for g in active for p in g.paths}))
            failed = []
            for gap in active:
                ok, msg = box.git_apply(together, gap.patch, check=False)
                if not ok:
                    failed.append(f"{gap.name} ({msg.splitlines()[0] if msg else 'git apply failed'})")
            if failed:
                misses += 1
                print(f"all {len(active)} patches together: do NOT apply: {'; '.join(failed)}")
            else:
                print(f"all {len(active)} patches together: apply")
        for rel, digest in protected.items():
            if _sha256(box.source_of(rel)) != digest:
                misses += 1
                print(f"INSTALLED FILE CHANGED: {box.source_of(rel)}")
    finally:
        box.close()
    for problem in problems:
        print(problem)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
