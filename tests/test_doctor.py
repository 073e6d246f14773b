"""``python -m tdcompat doctor``: the user's first command."""

import os
import subprocess
import sys

import pytest

import tdcompat


def _doctor(*args, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "tdcompat", *args], capture_output=True, text=True, env=full_env,
                          timeout=1200)


def test_status_only_lists_every_patch_with_its_state():
    proc = _doctor("doctor", "--status-only")
    assert proc.returncode == 0, proc.stderr
    for line in ("python", "torch", "tensordict", "tdcompat"):
        assert line in proc.stdout
    for patch in tdcompat.patch_names():
        assert patch in proc.stdout
    assert "pending" not in proc.stdout
    listing, upstream = proc.stdout.split("upstream (for each patch applied here):", 1)
    applied = [line.split()[0] for line in listing.splitlines() if line.split()[1:2] == ["applied"]]
    assert applied
    for name in applied:
        line = next(line for line in upstream.splitlines() if line.split()[:1] == [name])
        assert "fixed upstream in torch" in line or f"open upstream: see docs/upstream/{name}/" in line


def test_runs_cases_both_ways_and_prints_a_table():
    proc = _doctor("doctor", "--backend", "eager", "setattr_mapping_new", "gap_dict_umod_dict_then_write")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unpatched" in proc.stdout and "patched" in proc.stdout
    names = ("setattr_mapping_new", "gap_dict_umod_dict_then_write")
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith(names)]
    assert len(rows) == 2
    assert all(row[-1] == "ok" for row in rows)  # patched column
    # unhashable module-mappings fail unpatched on every release
    assert next(r for r in rows if r[0] == "gap_dict_umod_dict_then_write")[2] != "ok"


def test_exit_status_is_1_when_a_claimed_fix_still_fails(monkeypatch, capsys):
    from tdcompat import doctor

    name = "gap_dict_umod_dict_then_write"  # fixed by unhashable-module, applied on every release
    sides = {
        False: {"results": {name: {"eager": {"outcome": "graph_break", "detail": "x"}}}},
        True: {"results": {name: {"eager": {"outcome": "graph_break", "detail": "still broken"}}}},
    }
    monkeypatch.setattr(doctor, "_run_side", lambda patched, backends, names, progress=None: sides[patched])
    assert doctor.main(["--backend", "eager", name]) == 1
    assert "still fails: still broken" in capsys.readouterr().out
    sides[True]["results"][name]["eager"]["outcome"] = "ok"
    assert doctor.main(["--backend", "eager", name]) == 0


def test_unpatched_outcomes_are_compared_with_the_records(monkeypatch, capsys):
    """As recorded: one line saying so. Different: the case, what the records say, and whether
    any measured release behaved this way."""
    import torch

    from tdcompat import doctor
    from tdcompat.cases.catalog import all_cases

    name = "gap_dict_umod_dict_then_write"  # recorded as failing unpatched on every release
    recorded = all_cases()[name].expected_unpatched(torch.__version__, None)
    sides = {False: {"results": {name: {"eager": {"outcome": recorded, "detail": "x"}}}},
             True: {"results": {name: {"eager": {"outcome": "ok", "detail": ""}}}}}
    monkeypatch.setattr(doctor, "_run_side", lambda patched, backends, names, progress=None: sides[patched])
    assert doctor.main(["--backend", "eager", name]) == 0
    out = capsys.readouterr().out
    assert f"unpatched outcomes: all as recorded for torch {torch.__version__}" in out
    sides[False]["results"][name]["eager"] = {"outcome": "ok", "detail": ""}
    assert doctor.main(["--backend", "eager", name]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.strip().startswith(f"{name} [eager]"))
    assert f"ok here, {recorded.replace('_', ' ')} recorded (differs from every release measured)" in line
    assert "Please report" in out


def test_record_comparison_names_the_releases_that_behaved_so():
    from tdcompat.cases.catalog import all_cases
    from tdcompat.cases.records import differences

    cases = all_cases()
    # setattr_mapping_new: a graph break on 2.5, silently wrong on 2.6-2.8, ok from 2.9.
    results = {"setattr_mapping_new": {"eager": {"outcome": "ok", "detail": ""}}}
    (found,) = differences(cases, results, "2.6.0", None)
    assert found.expected == "wrong_result"
    assert found.seen_on and found.seen_on[0] == "2.9.1" and "2.6.0" not in found.seen_on
    assert not differences(cases, results, "2.9.1", None)


def test_unknown_case_is_a_clear_error():
    proc = _doctor("doctor", "no_such_case")
    assert proc.returncode == 2 and "unknown case(s) no_such_case" in proc.stderr


# -- exit status: 0 ok or your choice, 1 a needed patch not applied, 2 a malformed setting --------

def test_a_patch_you_disable_is_reported_as_your_choice_and_exits_0():
    # On 2.5 input-context-manager needs mutable-mapping-setattr and goes off with it: also a choice.
    proc = _doctor("doctor", "--status-only", env={"TDCOMPAT_DISABLE": "mutable-mapping-setattr"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.split()[:1] == ["mutable-mapping-setattr"])
    assert "disabled by TDCOMPAT_DISABLE" in line and "(your choice" in line
    assert "not applied" not in proc.stdout and "Traceback" not in proc.stderr


CHANGED_INTERNALS = """
    import dataclasses, os, sys
    import torch, torch._dynamo
    os.environ["TDCOMPAT_DISABLE"] = "*"  # pick the victim before anything is applied
    import tdcompat
    from tdcompat import doctor, lifecycle
    from tdcompat.versions import needed, parse_torch_version
    victim = next(p for p in tdcompat.patches.ALL_PATCHES
                  if needed(parse_torch_version(torch.__version__), p.torch, p.probe))
    # Dynamo's internals are not what the patch expects (torch itself stays intact):
    target = dataclasses.replace(victim.targets[0], attribute="renamed_in_a_future_torch", inherited=False)
    patches = lifecycle.process_registry()._patches
    patches[victim.name] = dataclasses.replace(victim, targets=(target,) + victim.targets[1:])
    del os.environ["TDCOMPAT_DISABLE"]
    print("victim", victim.name)
    sys.exit(doctor.main(["--status-only"]))
"""


@pytest.mark.parametrize("strict", ["", "1"])
def test_a_needed_patch_that_is_not_applicable_exits_1_without_a_traceback(strict):
    from conftest import run_python

    proc = run_python(CHANGED_INTERNALS, env={"TDCOMPAT_STRICT": strict}, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    victim = proc.stdout.split("victim ", 1)[1].split()[0]
    line = next(line for line in proc.stdout.splitlines() if line.split()[:1] == [victim])
    assert "not applicable" in line and "does not exist" in line and "<-- not applied" in line
    assert f"patch(es) this torch may need are not applied: {victim}" in proc.stdout
    assert ("would raise TdcompatError under TDCOMPAT_STRICT" in proc.stdout) == bool(strict)


def test_the_case_table_still_runs_when_a_patch_is_not_applied(monkeypatch, capsys):
    from tdcompat import doctor

    monkeypatch.setattr(doctor, "classify", lambda decisions: {name: "skipped" for name in decisions})
    ok = {"results": {"gap_dict_umod_dict_then_write": {"eager": {"outcome": "ok", "detail": ""}}}}
    monkeypatch.setattr(doctor, "_run_side", lambda patched, backends, names, progress=None: ok)
    assert doctor.main(["--backend", "eager", "gap_dict_umod_dict_then_write"]) == 1
    assert "see the patches not applied above" in capsys.readouterr().out


def test_a_dying_case_runner_is_a_message_and_exit_1(monkeypatch, capsys):
    from tdcompat import doctor

    def die(patched, backends, names, progress=None):
        raise RuntimeError("case runner failed (unpatched):\nboom")

    monkeypatch.setattr(doctor, "_run_side", die)
    assert doctor.main(["--backend", "eager", "gap_dict_umod_dict_then_write"]) == 1
    assert "the case runner failed" in capsys.readouterr().out


def test_version_is_written_once():
    """pyproject.toml reads the version from tdcompat/__init__.py; the installed metadata agrees."""
    import importlib.metadata
    import pathlib

    pyproject = (pathlib.Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'attr = "tdcompat.__version__"' in pyproject
    assert "\nversion =" not in pyproject.split("[tool.setuptools.dynamic]")[0]
    try:
        assert importlib.metadata.version("tdcompat") == tdcompat.__version__
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("tdcompat is not installed (run from the checkout)")
    assert (pathlib.Path(tdcompat.__file__).parent / "py.typed").exists()


def test_no_arguments_prints_help_and_runs_nothing():
    proc = _doctor()
    assert proc.returncode == 0, proc.stderr
    assert "usage: python -m tdcompat doctor" in proc.stdout
    assert "cases without and with tdcompat" not in proc.stdout


def test_unknown_backend_is_an_error_not_a_silent_success():
    proc = _doctor("doctor", "--backend", "aot_eagr")
    assert proc.returncode == 2, proc.stdout
    assert "invalid choice: 'aot_eagr'" in proc.stderr and "aot_eager" in proc.stderr


def test_cases_report_progress_on_stderr_while_they_run():
    """A line per case and side on stderr as it finishes, with an ETA; a count line at the end."""
    proc = _doctor("doctor", "--backend", "eager", "setattr_mapping_new", "gap_dict_umod_dict_then_write")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "ETA" in line]
    assert len(lines) == 4, proc.stderr
    assert "[without tdcompat   1/2]" in lines[0] and "[with tdcompat   2/2]" in lines[-1], lines
    assert "2 case runs: " in proc.stdout and "0 worse" in proc.stdout, proc.stdout


def test_summary_line_counts_what_changed():
    from tdcompat.doctor import summary_line

    before = {"a": {"eager": {"outcome": "graph_break"}}, "b": {"eager": {"outcome": "ok"}},
              "c": {"eager": {"outcome": "wrong_result"}}, "d": {"*": {"outcome": "skipped"}}}
    after = {"a": {"eager": {"outcome": "ok"}}, "b": {"eager": {"outcome": "graph_break"}},
             "c": {"eager": {"outcome": "wrong_result"}}, "d": {"*": {"outcome": "skipped"}}}
    assert summary_line(before, after) == "4 case runs: 1 fixed, 1 still failing, 1 skipped, 1 worse"
