"""The torch version matrix: one session per torch minor release from 2.5 on.

    nox                      # the whole matrix (before each release)
    nox -s "tests-2.5"       # one release
    nox -t ci                # what .ci/run runs: 2.5 (oldest), 2.13 (local CPU build), 2.15 (newest)
    nox -s "compat(minor='2.8')"   # only the catalog, recorded in docs/matrix/ for docs/compatibility.md
    nox -s package           # (in ci) build + check wheel and sdist, install the wheel fresh, run the doctor

Environments live in $TDCOMPAT_NOX_ENVDIR (default ~/.cache/tdcompat/nox) and
are reused between runs and clones: each holds torch with its CUDA packages,
about 5-7 GB (2.13.0 is a ~1 GB local CPU build here). A first install takes 1-2
minutes per release; a reused environment only reinstalls tdcompat itself.
"""

from __future__ import annotations

import ast
import os
import pathlib
import shutil
import tarfile
import zipfile

import nox

HERE = pathlib.Path(__file__).parent


def _pins(path: pathlib.Path) -> dict:
    """``name==version`` lines of one requirements file (comments and blanks skipped)."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip()] = version.strip()
    return pins


# torch minor -> (latest patch release, the tensordict pip pairs with it), from
# requirements/torch-<minor>.txt: one file per release, readable by any tooling.
MATRIX = {
    path.stem[len("torch-"):]: (pins["torch"], pins["tensordict"])
    for path in sorted(HERE.glob("requirements/torch-*.txt"), key=lambda p: tuple(map(int, p.stem[6:].split("."))))
    for pins in [_pins(path)]
}
CI = {"2.5", "2.13", "2.15"}

nox.options.envdir = os.environ.get("TDCOMPAT_NOX_ENVDIR", os.path.expanduser("~/.cache/tdcompat/nox"))
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = [f"tests-{m}" for m in MATRIX]

TENSORDICT_DEPS = (
    "import importlib.metadata as m; "
    "print(' '.join(r.split(';')[0].replace(' ', '') for r in (m.requires('tensordict') or []) "
    "if 'extra' not in r and not r.startswith('torch')))"
)


def install(session: nox.Session, minor: str, tensordict: str = "") -> None:
    torch_version, paired = MATRIX[minor]
    tensordict = tensordict or paired
    session.install(f"torch=={torch_version}")
    # tensordict 0.6/0.7 pin one torch and later ones may ask for a newer one: never let it move torch.
    session.install("--no-deps", f"tensordict=={tensordict}")
    run_install = getattr(session, "run_install", None) or session.run_always  # also under --install-only
    deps = run_install("python", "-c", TENSORDICT_DEPS, silent=True).split()
    session.install(*deps, "wrapt", "packaging", "pytest", "pytest-xdist", "pytest-random-order", "expecttest")
    session.install("--no-deps", "-e", ".")
    run_install("python", "-c", "import torch, tensordict, tdcompat; "
                "print('torch', torch.__version__, 'tensordict', tensordict.__version__)")


def _tests_session(minor: str):
    def tests(session: nox.Session) -> None:
        install(session, minor)
        # Random order proves the isolation rule of tests/conftest.py on every run; the
        # differential fuzzer (tests/test_fuzz.py) runs a fixed seeded set of programs on
        # each release (the first 600 of seed 0, 2-5 minutes), the same set on every machine, so that the
        # divergences still open (tests/fuzz_known.json) are exactly those it meets.
        env = {"TDCOMPAT_FUZZ_PROGRAMS": os.environ.get("TDCOMPAT_FUZZ_PROGRAMS", "600")}
        session.run("python", "-m", "pytest", "-n", "2", "-p", "random_order", "--random-order", *session.posargs,
                    env=env)

    tests.__doc__ = f"The whole suite on torch {MATRIX[minor][0]} with tensordict {MATRIX[minor][1]}."
    return nox.session(name=f"tests-{minor}", tags=["ci"] if minor in CI else [])(tests)


for _minor in MATRIX:
    globals()[f"tests_{_minor.replace('.', '_')}"] = _tests_session(_minor)


@nox.session(name="tests-2.15-tensordict-0.14")
def tests_newest_with_old_tensordict(session: nox.Session) -> None:
    """Users pin tensordict too: the newest torch with tensordict 0.14.3."""
    install(session, "2.15", tensordict="0.14.3")
    session.run("python", "-m", "pytest", "tests/test_cases.py", *session.posargs)


PACKAGE_TORCH = "2.13"  # a local CPU build here: a fresh environment installs it in seconds


@nox.session(name="package", tags=["ci"])
def package(session: nox.Session) -> None:
    """Build the wheel and sdist, check them, install the wheel (not editable) into a fresh
    environment with the torch 2.13 pins and run ``python -m tdcompat doctor`` outside the checkout."""
    session.install("build", "twine")
    tmp = pathlib.Path(session.create_tmp()).resolve()
    dist, venv, elsewhere = tmp / "dist", tmp / "fresh-venv", tmp / "elsewhere"
    for path in (dist, venv, elsewhere):
        shutil.rmtree(path, ignore_errors=True)
    elsewhere.mkdir()
    session.run("python", "-m", "build", "--outdir", str(dist), str(HERE))
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    session.run("python", "-m", "twine", "check", "--strict", *map(str, wheels + sdists))
    version = _check_dist(session, wheels, sdists)

    session.run("python", "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    requirements = HERE / "requirements" / f"torch-{PACKAGE_TORCH}.txt"
    session.run(python, "-m", "pip", "install", "-q", "-r", str(requirements), str(wheels[0]), external=True)
    # Not the checkout: from another directory, with no PYTHONPATH, tdcompat can only come from the wheel.
    clean = {"PYTHONPATH": "", "TDCOMPAT_DISABLE": "", "TDCOMPAT_STRICT": ""}
    session.chdir(str(elsewhere))
    session.run(python, "-c", "import tdcompat, sys; assert 'site-packages' in tdcompat.__file__, tdcompat.__file__; "
                f"assert tdcompat.__version__ == {version!r}; "
                "print('tdcompat', tdcompat.__version__, 'from', tdcompat.__file__)",
                env=clean, external=True)
    session.run(python, "-m", "tdcompat", "doctor", *session.posargs, env=clean, external=True)
    session.chdir(str(HERE))


def _check_dist(session: nox.Session, wheels: list, sdists: list) -> str:
    """One wheel and one sdist of the version in tdcompat/__init__.py, each with what a user needs."""
    if len(wheels) != 1 or len(sdists) != 1:
        session.error(f"expected one wheel and one sdist, got {wheels + sdists}")
    init = ast.parse((HERE / "tdcompat" / "__init__.py").read_text())
    version = next(node.value.value for node in init.body if isinstance(node, ast.Assign)
                   and [getattr(t, "id", None) for t in node.targets] == ["__version__"])
    wheel_names = set(zipfile.ZipFile(wheels[0]).namelist())
    with tarfile.open(sdists[0]) as sdist:
        sdist_names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for names, kind, path in [(wheel_names, "wheel", wheels[0]), (sdist_names, "sdist", sdists[0])]:
        if f"-{version}" not in path.name:
            session.error(f"{kind} {path.name} is not version {version} (tdcompat/__init__.py)")
        for needed in ("tdcompat/py.typed", "tdcompat/__main__.py", "tdcompat/cases/catalog.py",
                       "tdcompat/patches/__init__.py"):
            if needed not in names:
                session.error(f"{kind} {path.name} lacks {needed}")
        if kind == "wheel" and any(not name.startswith(("tdcompat/", "tdcompat-")) for name in names):
            session.error(f"wheel {path.name} ships more than the tdcompat package")
        if kind == "sdist" and not {"tests/conftest.py", "requirements/torch-2.13.txt", "CHANGELOG.md"} <= names:
            session.error(f"sdist {path.name} lacks the tests, the pins or the changelog (MANIFEST.in)")
    session.log(f"tdcompat {version}: {wheels[0].name} ({len(wheel_names)} files), "
                f"{sdists[0].name} ({len(sdist_names)} files)")
    return version


@nox.session(name="compat")
@nox.parametrize("minor", list(MATRIX))
def compat(session: nox.Session, minor: str) -> None:
    """Run the catalog both ways and record it for docs/compatibility.md."""
    install(session, minor)
    session.run("python", "scripts/matrix_run.py", "--out", f"docs/matrix/{MATRIX[minor][0]}.json")


def _tests_python(session: nox.Session, minor: str) -> str:
    """The interpreter of the ``tests-<minor>`` environment: long runs reuse it (5-7 GB each)."""
    python = pathlib.Path(nox.options.envdir) / f"tests-{minor.replace('.', '-')}" / "bin" / "python"
    if not python.exists():
        session.run("nox", "-s", f"tests-{minor}", "--install-only", external=True)
    return str(python)


@nox.session(name="fuzz", python=False, default=False)
def fuzz(session: nox.Session) -> None:
    """Differential fuzzing from a fresh seed, on every core, recorded in benchmarks/fuzz_ledger.json.

    ``nox -s fuzz -- [--minor 2.8 [--minor 2.13 ...]] [--seconds 600] [--seed N] [--workers K] [scripts/fuzz.py
    options, e.g. --all-configs]``: per release (default: the CI ones, 2.5, 2.13, 2.15) ``scripts/fuzz.py``
    in the reused ``tests-<minor>`` environment, ``--workers`` processes (default: one per core) on
    slices of one seed (default: a fresh random one, printed first and used for every release),
    for ``--seconds`` (default 600) each, appended to the ledger.
    """
    import argparse
    import secrets

    parser = argparse.ArgumentParser(prog="nox -s fuzz --")
    parser.add_argument("--minor", action="append", choices=list(MATRIX))
    parser.add_argument("--seconds", default="600")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ledger", default="benchmarks/fuzz_ledger.json")
    args, rest = parser.parse_known_args(session.posargs)
    seed = args.seed if args.seed is not None else secrets.randbelow(2 ** 31)
    session.log(f"fuzz seed {seed}")
    for minor in args.minor or sorted(CI, key=lambda m: tuple(map(int, m.split(".")))):
        session.run(_tests_python(session, minor), "scripts/fuzz.py", "--seed", str(seed), "--seconds",
                    args.seconds, "--workers", str(args.workers), "--ledger", args.ledger, *rest, external=True,
                    success_codes=[0, 1])  # a divergence: printed and in the ledger; go on to the next release


@nox.session(name="upstream", python=False, default=False)
def upstream(session: nox.Session) -> None:
    """Each open gap's PR (docs/upstream/<gap>/) applied to a private copy of the newest torch."""
    session.run(_tests_python(session, list(MATRIX)[-1]), "scripts/check_upstream.py", *session.posargs,
                external=True)


@nox.session(name="real_clients", python=False, default=False)
@nox.parametrize("minor", list(MATRIX))
def real_clients(session: nox.Session, minor: str) -> None:
    """TorchRL's losses without and with tdcompat (issue 14), in the reused ``tests-<minor>`` environment.

    ``nox -s "real_clients(minor='2.5')"`` runs ``tests/test_real_clients.py``; with
    ``-- --measure`` it writes ``benchmarks/results/real_clients-<torch>.json`` instead.
    TorchRL comes from requirements/torchrl-<minor>.txt, each line with ``--no-deps``.
    """
    python = _tests_python(session, minor)
    for line in (HERE / "requirements" / f"torchrl-{minor}.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            session.run(python, "-m", "pip", "install", "-q", "--no-deps", line, external=True)
    session.run(python, "-c", "import torch, tensordict, torchrl; "
                "print('torch', torch.__version__, 'tensordict', tensordict.__version__, "
                "'torchrl', torchrl.__version__)",
                external=True)
    if session.posargs[:1] == ["--measure"]:
        torch_version = MATRIX[minor][0]
        session.run(python, "benchmarks/real_clients.py", "--out",
                    f"benchmarks/results/real_clients-{torch_version}.json", *session.posargs[1:], external=True)
    else:
        session.run(python, "-m", "pytest", "-m", "real_client", "tests/test_real_clients.py", *session.posargs,
                    external=True)


# ---- lint (ruff + mypy) -------------------------------------------------------------------------------------------


@nox.session(name="lint", tags=["ci"])
def lint(session: nox.Session) -> None:
    """ruff over the tree and mypy over tdcompat, as pyproject.toml configures them.

    A small environment of its own with the versions pinned in pyproject.toml's ``[dependency-groups] lint``
    (no torch: mypy sees torch, wrapt and tensordict as untyped). ``nox -s lint -- --fix`` passes options to ruff.
    The changelog fragments in changelog.d/ must render (towncrier, pinned there too).
    """
    session.install(*nox.project.dependency_groups(nox.project.load_toml(HERE / "pyproject.toml"), "lint"))
    session.run("ruff", "check", *session.posargs)
    session.run("mypy")
    session.run("towncrier", "build", "--draft", "--version", "unreleased", silent=True)  # fragments render


# ---- end lint -----------------------------------------------------------------------------------------------------


# --- upstream-tests (issues 27, 28): PyTorch's own Dynamo tests per release, without and with tdcompat ---------
UPSTREAM_TESTS_MINORS = ("2.5", "2.6", "2.8", "2.10", "2.13", "2.15")


@nox.session(name="upstream-tests", python=False, default=False)
def upstream_tests(session: nox.Session) -> None:
    """PyTorch's own Dynamo tests per release, without and with tdcompat (docs/upstream_tests.md).

    ``nox -s upstream-tests -- --tests-dir DIR [--minor 2.8 ...] [--out-dir benchmarks/upstream_tests]``:
    ``scripts/upstream_tests.py`` in the reused ``tests-<minor>`` environments (default: 2.5, 2.6, 2.8,
    2.10, 2.13, 2.15), natively then with tdcompat, one pytest process at a time, then the report.
    DIR holds upstream's ``test/dynamo`` files (not committed; docs/upstream_tests.md says which)."""
    import argparse

    parser = argparse.ArgumentParser(prog="nox -s upstream-tests --")
    parser.add_argument("--tests-dir", required=True)
    parser.add_argument("--minor", action="append", choices=list(MATRIX))
    parser.add_argument("--out-dir", default="benchmarks/upstream_tests")
    args, rest = parser.parse_known_args(session.posargs)
    env = {"PYTHONPATH": str(HERE)}
    for minor in args.minor or UPSTREAM_TESTS_MINORS:
        python = _tests_python(session, minor)
        for mode in ("native", "tdcompat"):
            out = f"{args.out_dir}/{MATRIX[minor][0]}-{mode}.json"
            session.run(python, "scripts/upstream_tests.py", "--tests-dir", args.tests_dir, "--python", python,
                        "--mode", mode, "--out", out, *rest, external=True, env=env)
    session.run("python", "scripts/upstream_tests.py", "--report", args.out_dir, external=True)
