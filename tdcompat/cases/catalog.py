"""One catalog of cases, shared by the doctor and the test suite."""

from __future__ import annotations

import importlib.util
from typing import Dict, Tuple

from .harness import Case

_MODULES = ("documented", "gap_instance_dict", "gap_setattr", "gap_dict", "gap_dict_lookup", "gap_dict_keys",
            "gap_class_attrs", "gap_misc", "gap_clients_misc", "gap_clients_dict", "gap_clients_module_dict")


def tensordict_available() -> bool:
    try:
        return importlib.util.find_spec("tensordict") is not None
    except (ImportError, ValueError):  # blocked or half-imported: treat as absent
        return False


def all_cases() -> Dict[str, Case]:
    import importlib

    cases: Dict[str, Case] = {}
    for name in _MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        for case in module.CASES:
            if case.name in cases:
                raise ValueError(f"duplicate case name {case.name!r}")
            cases[case.name] = case
    return cases


def cases_for(patch: str) -> Dict[str, Case]:
    """The cases that prove ``patch``: those that list it among the patches they need, by name.

    A patch that only turns a wrong result into a graph break has none (its ``proven_by`` test
    proves it). An unknown patch name raises ``ValueError`` naming the closest one."""
    from ..patches import ALL_PATCHES

    names = [p.name for p in ALL_PATCHES]
    if patch not in names:
        import difflib

        close = difflib.get_close_matches(patch, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown patch {patch!r}{hint}")
    return {name: case for name, case in all_cases().items() if patch in case.patches}


def runnable_cases() -> Tuple[Dict[str, Case], Dict[str, str]]:
    """(cases to run, {skipped case: why})."""
    cases, skipped = {}, {}
    have_td = tensordict_available()
    import torch

    for name, case in all_cases().items():
        if case.needs_tensordict and not have_td:
            skipped[name] = "tensordict is not installed (pip install tdcompat[tensordict])"
        elif not case.runs_on(torch.__version__):
            skipped[name] = f"runs on torch {case.torch} only"
        else:
            cases[name] = case
    return cases, skipped
