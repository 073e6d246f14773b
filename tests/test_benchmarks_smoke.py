"""The benchmarks still run (smoke mode: one repetition; says nothing about speed)."""

import os
import subprocess
import sys

import pytest

RUN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "run.py")


def _run(*args):
    proc = subprocess.run([sys.executable, RUN, *args, "--smoke"], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def test_import_benchmark_runs():
    out = _run("import")
    assert "import tdcompat after torch" in out and "apply all needed patches" in out


def test_workload_benchmark_runs():
    pytest.importorskip("tensordict")
    out = _run("workloads", "--only", "tensordict_from_params", "--only", "neutral_dict_heavy")
    assert "fullgraph+tdcompat" in out and "neutral_dict_heavy" in out


def test_neutral_benchmark_runs_over_caller_depths():
    out = _run("neutral", "--only", "neutral_dict_heavy", "--depths", "2")
    assert "calls (all)" in out and "trace, 2 depths" in out and "caller +1 frame" in out
    assert "page faults/trace" in out and "re-trace (s)" in out
