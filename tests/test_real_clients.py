"""Real clients (issue 14): TorchRL's losses compiled without and with tdcompat.

Runs only when selected (``pytest -m real_client``, or ``nox -s "real_clients(minor='2.5')"``),
and is skipped when torchrl is not installed. Each side runs in its own interpreter
(``benchmarks/real_clients.py``; the isolation rule of conftest.py), the estimator made lazily
by the first call, as TorchRL does by default.

Asserted: compiled with tdcompat equals eager (loss values, gradients, Adam steps and the
SoftUpdate of the target networks), tdcompat never adds graph breaks, and it is no worse than
the figures recorded in ``benchmarks/results/real_clients-<torch>.json``. Where tdcompat still
leaves more graphs than unpatched Dynamo (a known gap of issue 14, recorded), that check is an
expected failure naming the figures; the targets of issue 14 (the graph and break counts of the
newest torch) are measured by the benchmark, not asserted here.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
import types

import pytest

# find_spec, not import: torchrl is only ever imported by the measuring subprocesses.
if importlib.util.find_spec("torchrl") is None:
    pytest.skip("the real-client suite needs torchrl (requirements/torchrl-<minor>.txt)", allow_module_level=True)

import torch

pytestmark = pytest.mark.real_client

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "real_clients.py"


def _bench():
    spec = importlib.util.spec_from_file_location("_real_clients_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()
LOSSES = bench.LOSSES
STEPS = 3


def _recorded():
    path = ROOT / "benchmarks" / "results" / f"real_clients-{torch.__version__.split('+')[0]}.json"
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    return {(r.get("side"), r.get("mode")): r.get("losses", {}) for r in doc.get("runs", [])}


@pytest.fixture(scope="module")
def measured(request):
    if "real_client" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("slow (minutes): select it with -m real_client, or nox -s \"real_clients(minor='2.5')\"")
    # Only the losses whose tests were selected (``-k sac`` measures SAC alone).
    selected = {item.callspec.params["name"] for item in request.session.items
                if item.module is sys.modules[__name__] and hasattr(item, "callspec")}
    losses = [name for name in LOSSES if name in selected] or LOSSES
    opts = types.SimpleNamespace(losses=",".join(losses), steps=STEPS, backend="eager", tol=1e-5,
                                 skip="explain", timeout=3000, verbose=False, time_reps=0)
    sides = {side: bench.run_side(sys.executable, side, "lazy", opts) for side in bench.SIDES}
    for side, run in sides.items():
        assert "losses" in run, f"{side} tdcompat: {run.get('error')}\n{run.get('stderr', '')}"
    assert sides["with"]["tdcompat_imported"] and not sides["without"]["tdcompat_imported"]
    return sides


def _compile(measured, side, name):
    entry = measured[side]["losses"][name]["compile"]
    assert "graphs" in entry, f"{name} {side} tdcompat did not run: {entry.get('error')}\n{entry.get('traceback', '')}"
    return entry


@pytest.mark.parametrize("name", LOSSES)
def test_equal_to_eager_with_tdcompat(measured, name):
    entry = _compile(measured, "with", name)
    assert entry["initial_state_diff"] == 0.0
    assert "error" not in entry, f"{name} compiled with tdcompat crashed: {entry['error']}\n{entry['traceback']}"
    assert entry["equal"], f"{name}: largest differences from eager over {STEPS} steps: {entry['diffs']}"


@pytest.mark.parametrize("name", LOSSES)
def test_no_more_breaks_than_without(measured, name):
    without = measured["without"]["losses"][name].get("compile", {})
    with_ = _compile(measured, "with", name)
    if "breaks" not in without:
        return  # unpatched Dynamo did not get through the first call: nothing to compare
    assert with_["breaks"] <= without["breaks"], (with_["break_events"], without.get("break_events"))


@pytest.mark.parametrize("name", LOSSES)
def test_no_more_graphs_than_without(measured, name):
    without = measured["without"]["losses"][name].get("compile", {})
    with_ = _compile(measured, "with", name)
    if "graphs" not in without:
        return
    if with_["graphs"] > without["graphs"]:
        rec = _recorded()
        known = rec.get(("with", "lazy"), {}).get(name, {}).get("compile", {})
        known_without = rec.get(("without", "lazy"), {}).get(name, {}).get("compile", {})
        if known.get("graphs", 0) > known_without.get("graphs", 0):
            pytest.xfail(f"known gap (issue 14): {name} compiles to {with_['graphs']} graphs with tdcompat, "
                         f"{without['graphs']} without (recorded {known['graphs']} vs {known_without['graphs']})")
    assert with_["graphs"] <= without["graphs"]


@pytest.mark.parametrize("name", LOSSES)
def test_no_worse_than_recorded(measured, name):
    known = _recorded().get(("with", "lazy"), {}).get(name, {}).get("compile", {})
    if "graphs" not in known:
        pytest.skip(f"no figures recorded for torch {torch.__version__} in benchmarks/results/")
    entry = _compile(measured, "with", name)
    assert entry["graphs"] <= known["graphs"] and entry["breaks"] <= known["breaks"], (
        f"{name}: {entry['graphs']} graphs / {entry['breaks']} breaks with tdcompat, "
        f"recorded {known['graphs']} / {known['breaks']}", entry["break_events"])
