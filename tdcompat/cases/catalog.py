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
