"""Run one case eagerly and compiled, and say how the compiled run differs.

The outcome vocabulary is the one users care about:

``ok``            compiled under ``fullgraph=True`` and equal to eager: return
                  value and the state of every input object afterwards, on two
                  calls with fresh inputs (the second catches stale guards).
``graph_break``   Dynamo refused (``Unsupported`` or any error it raised while tracing).
``wrong_result``  it ran, but the return value or some object's state differs
                  from eager (a silently lost side effect lands here).
``eager_error``   the case itself is broken: eager raised.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Sequence, Tuple

import torch

from .snapshot import diff, snapshot

OK, GRAPH_BREAK, WRONG_RESULT, EAGER_ERROR, SKIPPED = "ok", "graph_break", "wrong_result", "eager_error", "skipped"


@dataclasses.dataclass(frozen=True)
class Expect:
    """Without tdcompat, on torch in ``torch`` (and tensordict in ``tensordict``), the case ends as ``outcome``."""

    torch: str
    outcome: str
    tensordict: str = ""


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    #: The registry entries that make it pass ("" for a control case).
    patches: Tuple[str, ...]
    fn: Callable[..., Any]
    #: Builds fresh inputs; called under a fixed seed, so two calls give equal inputs.
    inputs: Callable[[], Sequence[Any]]
    #: Unpatched outcome per version range; the first match wins, no match means ``ok``.
    unpatched: Tuple[Expect, ...] = ()
    needs_tensordict: bool = False
    backends: Tuple[str, ...] = ("eager", "aot_eager")
    doc: str = ""

    def expected_unpatched(self, torch_version: str, tensordict_version: Optional[str]) -> str:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        tv = Version(Version(str(torch_version)).base_version)
        for expect in self.unpatched:
            if not SpecifierSet(expect.torch).contains(tv):
                continue
            if expect.tensordict:
                if tensordict_version is None or not SpecifierSet(expect.tensordict).contains(
                    Version(Version(tensordict_version).base_version)
                ):
                    continue
            return expect.outcome
        return OK


@dataclasses.dataclass
class Outcome:
    outcome: str
    detail: str = ""
    frames: int = 0

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _fresh(case: Case) -> Sequence[Any]:
    torch.manual_seed(0)
    return tuple(case.inputs())


def _eager(case: Case):
    args = _fresh(case)
    result = case.fn(*args)
    return snapshot(result), snapshot(args)


def run_case(case: Case, backend: str = "eager") -> Outcome:
    """Eager vs ``torch.compile(fullgraph=True, backend=backend)`` on fresh inputs, twice."""
    import torch._dynamo
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(case.fn, fullgraph=True, backend=counter)
    for call in (1, 2):
        try:
            expected_result, expected_state = _eager(case)
        except Exception as exc:  # noqa: BLE001
            return Outcome(EAGER_ERROR, f"{type(exc).__name__}: {exc}")
        args = _fresh(case)
        try:
            result = compiled(*args)
        except Exception as exc:  # noqa: BLE001 - any tracing failure is a break for the user
            return Outcome(GRAPH_BREAK, _first_line(exc), counter.frame_count)
        found = diff(expected_result, snapshot(result), "return")
        found = found or diff(expected_state, snapshot(args), "args")
        if found:
            return Outcome(WRONG_RESULT, f"call {call}: {found}", counter.frame_count)
    torch._dynamo.reset()
    return Outcome(OK, "", counter.frame_count)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
