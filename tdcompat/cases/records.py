"""What the catalog recorded for each measured torch release, and how this install compares.

The cases are the one source of truth for unpatched outcomes (``Case.unpatched``);
``docs/matrix/<release>.json`` are measurements of the same catalog, checked equal to
the cases by ``tests/test_records.py``. The doctor compares this torch's unpatched
outcomes with what the cases say for it, and says when it differs from every release
measured: the case is then behaving in a way nobody recorded, which is worth a report.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional

#: Releases whose unpatched outcomes the cases record, one per minor (requirements/torch-2.X.txt).
MEASURED = ("2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")


@dataclasses.dataclass(frozen=True)
class Difference:
    case: str
    backend: str
    got: str
    detail: str
    expected: str
    #: Measured releases whose record has ``got`` (empty: differs from every release measured).
    seen_on: tuple


def is_measured(torch_version: str) -> bool:
    from packaging.version import Version

    return Version(Version(str(torch_version)).base_version).public in MEASURED


def differences(cases, results: Dict[str, Dict[str, dict]], torch_version: str,
                tensordict_version: Optional[str]) -> List[Difference]:
    """Unpatched results (``{case: {backend: {"outcome", "detail"}}}``) that the cases do not expect here."""
    found = []
    for name, per_backend in results.items():
        case = cases.get(name)
        if case is None:
            continue
        expected = case.expected_unpatched(torch_version, tensordict_version)
        for backend, result in per_backend.items():
            got = result["outcome"]
            if got in ("skipped", expected):
                continue
            seen = tuple(r for r in MEASURED if case.runs_on(r)
                         and case.expected_unpatched(r, tensordict_version) == got)
            found.append(Difference(name, backend, got, result.get("detail", ""), expected, seen))
    return found
