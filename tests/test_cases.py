"""Every catalog case, both ways: the unpatched outcome this torch is recorded to
have (strict: a wrong version range fails here), and eager equality with tdcompat.

The catalog is shipped in ``tdcompat.cases`` so ``python -m tdcompat doctor``
runs exactly these cases on a user's install.
"""

import os
import re
import warnings

import pytest
import torch

import tdcompat
from tdcompat.cases.catalog import all_cases, tensordict_available
from tdcompat.cases.harness import OK, run_case
from tdcompat.versions import needed, parse_torch_version

CASES = all_cases()
PARAMS = [pytest.param(name, backend, id=f"{name}-{backend}")
          for name, case in CASES.items() for backend in case.backends]
TORCH = str(torch.__version__)


def _tensordict_version():
    if not tensordict_available():
        return None
    import tensordict

    return tensordict.__version__


def _skip_without_tensordict(case):
    if case.needs_tensordict and not tensordict_available():
        pytest.skip("needs tensordict (pip install tdcompat[tensordict])")
    if not case.runs_on(TORCH):
        pytest.skip(f"runs on torch {case.torch} only")


@pytest.mark.parametrize("name, backend", PARAMS)
def test_unpatched_outcome_matches_record(name, backend, unpatched_results):
    case = CASES[name]
    _skip_without_tensordict(case)
    expected = case.expectation(TORCH, _tensordict_version())
    got = unpatched_results["results"][name][backend]
    assert got["outcome"] == expected.outcome, f"torch {TORCH}: expected {expected.outcome}, got {got}"
    # The failure the record names, not just any failure (an AttributeError is no Dynamo graph break).
    assert re.search(expected.detail_pattern(), got["detail"]), (
        f"torch {TORCH}: {expected.outcome} as recorded, but {got['detail']!r} does not match "
        f"{expected.detail_pattern()!r}")


@pytest.mark.parametrize("name, backend", PARAMS)
def test_patched_equals_eager(name, backend):
    case = CASES[name]
    _skip_without_tensordict(case)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_case(case, backend)
    assert result.outcome == OK, result.detail
    # A patch that fell back to Dynamo's original (fail-safe) did not do its job here.
    fallbacks = [str(w.message) for w in caught if issubclass(w.category, tdcompat.TdcompatWarning)]
    assert not fallbacks, fallbacks


@pytest.mark.parametrize("patch", [p.name for p in tdcompat.patches.ALL_PATCHES])
def test_patch_range_matches_its_cases(patch):
    """A patch is needed here exactly when some case it fixes fails here unpatched."""
    spec = tdcompat.patches.ALL_PATCHES[[p.name for p in tdcompat.patches.ALL_PATCHES].index(patch)]
    mine = [c for c in CASES.values() if patch in c.patches and not (c.needs_tensordict and not tensordict_available())]
    if spec.proven_by and not [c for c in mine if c.runs_on(TORCH)]:
        # a break-only patch here (its cases, if any, run on other releases): its proof is a never-worse test
        # that asserts the unpatched wrong result
        path, _, test = spec.proven_by.partition("::")
        source = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), path)).read()
        assert f"def {test}(" in source and "without_patch" in source, spec.proven_by
        return
    assert mine, f"patch {patch} has no case"
    mine = [c for c in mine if c.runs_on(TORCH)]  # the others restate a graph break here, with tdcompat too
    td = _tensordict_version()
    failing_only_mine = [c.name for c in mine if c.patches == (patch,) and c.expected_unpatched(TORCH, td) != OK]
    any_failing = [c.name for c in mine if c.expected_unpatched(TORCH, td) != OK]
    in_range = needed(parse_torch_version(TORCH), spec.torch, spec.probe)
    if in_range:
        assert any_failing, f"{patch} applies on torch {TORCH} but none of its cases fails here unpatched"
    else:
        assert not failing_only_mine, f"{patch} is not applied on torch {TORCH} but {failing_only_mine} fail unpatched"


def test_every_case_names_known_patches():
    known = set(tdcompat.patch_names())
    for case in CASES.values():
        assert set(case.patches) <= known, (case.name, set(case.patches) - known)
