"""``python -m tdcompat doctor``: the user's first command."""

import os
import subprocess
import sys

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
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith(("setattr_mapping_new", "gap_dict_umod_dict_then_write"))]
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
    monkeypatch.setattr(doctor, "_run_side", lambda patched, backends, names: sides[patched])
    assert doctor.main(["--backend", "eager", name]) == 1
    assert "still fails: still broken" in capsys.readouterr().out
    sides[True]["results"][name]["eager"]["outcome"] = "ok"
    assert doctor.main(["--backend", "eager", name]) == 0


def test_unknown_case_is_a_clear_error():
    proc = _doctor("doctor", "no_such_case")
    assert proc.returncode == 2 and "unknown case(s) no_such_case" in proc.stderr
