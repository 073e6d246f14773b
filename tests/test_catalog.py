"""``cases_for(patch)``: which catalog cases prove a patch (issue 29)."""

import pytest

from tdcompat.cases.catalog import all_cases, cases_for
from tdcompat.patches import ALL_PATCHES


def test_every_patch_is_proven_by_cases_or_a_named_test():
    for patch in ALL_PATCHES:
        cases = cases_for(patch.name)
        assert cases or patch.proven_by, f"{patch.name}: no case names it and no proven_by test"
        assert all(patch.name in case.patches for case in cases.values())


def test_every_case_belongs_to_the_patches_it_names():
    by_patch = {p.name: set(cases_for(p.name)) for p in ALL_PATCHES}
    for name, case in all_cases().items():
        for patch in case.patches:
            if patch:
                assert name in by_patch[patch], (name, patch)


def test_unknown_patch_name_is_an_error_with_a_hint():
    with pytest.raises(ValueError, match="did you mean 'builtin-subclass-truth'"):
        cases_for("builtin_subclass_truth")


def test_catalog_modules_register_their_cases_instead_of_rebinding():
    import importlib
    import re

    from tdcompat.cases import catalog
    from tdcompat.cases.harness import CaseList

    for name in catalog._MODULES:
        module = importlib.import_module(f"tdcompat.cases.{name}")
        assert isinstance(module.CASES, CaseList), name
        with open(module.__file__, encoding="utf-8") as fh:
            assert not re.search(r"^CASES\s*=\s*CASES\b", fh.read(), re.M), f"{name}: CASES rebound; use CASES.add(...)"


def test_case_list_takes_cases_only():
    from tdcompat.cases.harness import CaseList

    with pytest.raises(TypeError, match="Case objects"):
        CaseList().add(("not", "a", "case"))
