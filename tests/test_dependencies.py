"""Patches that need other patches (``Patch.needs``), proven on the real registry.

For every declared need, the dependent runs with what it needs switched off
(``TDCOMPAT_DISABLE=<need>``): on a torch where the need applies, the dependent
must be off too and say why, and none of its catalog cases may end in a wrong
result that the unpatched torch does not give as well. (Without the
declaration, ``with m:`` on an input mapping compiled on 2.6-2.8 and lost the
writes of ``__enter__``/``__exit__``; issue 11.)
"""

import pytest
import torch

import tdcompat
from tdcompat.cases.catalog import all_cases, tensordict_available
from tdcompat.cases.harness import WRONG_RESULT
from tdcompat.doctor import _run_side
from tdcompat.versions import needed, parse_torch_version

PATCHES = {p.name: p for p in tdcompat.patches.ALL_PATCHES}
NEEDS = [(p.name, dep) for p in PATCHES.values() for dep in p.needs]
VERSION = parse_torch_version(str(torch.__version__))


def test_some_patches_declare_needs():
    assert NEEDS


@pytest.mark.parametrize("dependent, need", NEEDS, ids=[f"{d}-needs-{n}" for d, n in NEEDS])
def test_dependent_is_off_and_never_wrong_without_its_need(dependent, need, unpatched_results, monkeypatch):
    names = [c.name for c in all_cases().values()
             if dependent in c.patches and (tensordict_available() or not c.needs_tensordict)
             and c.runs_on(torch.__version__)]
    assert names, f"{dependent} has no case"
    monkeypatch.setenv("TDCOMPAT_DISABLE", need)
    report = _run_side(True, ["eager"], names)
    status = {s["name"]: s for s in report["status"]}
    need_applies = needed(VERSION, PATCHES[need].torch, PATCHES[need].probe)
    dependent_applies = needed(VERSION, PATCHES[dependent].torch, PATCHES[dependent].probe)
    if need_applies and dependent_applies:
        assert status[dependent]["state"] == "disabled", status[dependent]
        assert f"needs '{need}'" in status[dependent]["reason"]
    elif dependent_applies:
        assert status[dependent]["state"] == "applied", status[dependent]
    worse = {
        name: result["eager"]["detail"]
        for name, result in report["results"].items()
        if result["eager"]["outcome"] == WRONG_RESULT
        and unpatched_results["results"][name]["eager"]["outcome"] != WRONG_RESULT
    }
    assert not worse, f"torch {VERSION} with {need} disabled: wrong results unpatched torch does not give: {worse}"
