"""Run one case eagerly and compiled, and say how the compiled run differs.

The outcome vocabulary is the one users care about:

``ok``            compiled under ``fullgraph=True`` and equal to eager: return
                  value and the state of every input object afterwards, on two
                  calls with fresh inputs. The second call's inputs differ
                  (other tensor values, integer attributes changed, an instance
                  key added: see :func:`vary`), so code that should have been
                  guarded and was not shows up as a wrong result.
``graph_break``   Dynamo refused (``Unsupported`` or any error it raised while tracing).
``wrong_result``  it ran, but the return value or some object's state differs
                  from eager (a silently lost side effect lands here).
``eager_error``   the case itself is broken: eager raised.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple

import torch

from .snapshot import diff, snapshot

OK, GRAPH_BREAK, WRONG_RESULT, EAGER_ERROR, SKIPPED = "ok", "graph_break", "wrong_result", "eager_error", "skipped"


@dataclasses.dataclass(frozen=True)
class Expect:
    """Without tdcompat, on torch in ``torch`` (and tensordict in ``tensordict``), the case ends as ``outcome``.

    ``detail`` is a regular expression the outcome's detail must match (``re.search``). A
    graph break's detail is ``"<exception type>: <first line>"``; without ``detail`` it must
    be Dynamo refusing to trace (:data:`DYNAMO_REFUSED`), so a compiled call that raised a
    plain Python exception (an ``AttributeError`` out of Dynamo's replay after the graph)
    has to be recorded as such, and a different failure fails the record.
    """

    torch: str
    outcome: str
    tensordict: str = ""
    detail: str = ""

    def detail_pattern(self) -> str:
        if self.detail:
            return self.detail
        return DYNAMO_REFUSED if self.outcome == GRAPH_BREAK else ""


#: The exceptions Dynamo raises when it refuses or fails to trace (torch._dynamo.exc).
DYNAMO_REFUSED = (r"^(Unsupported|ArgsMismatchError|UserError|InternalTorchDynamoError|TorchRuntimeError|"
                  r"BackendCompilerFailed): ")


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
    #: Changes the second call's inputs in place (default: :func:`vary`).
    vary: Optional[Callable[[Sequence[Any]], None]] = None
    #: The torch releases the case runs on (a ``packaging`` specifier; empty: all). For a
    #: pattern that is a graph break on older releases with and without tdcompat, where
    #: the case would only restate the break.
    torch: str = ""

    def runs_on(self, torch_version: str) -> bool:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        return not self.torch or SpecifierSet(self.torch).contains(Version(Version(str(torch_version)).base_version))

    def expectation(self, torch_version: str, tensordict_version: Optional[str]) -> Expect:
        """The recorded unpatched outcome here (``Expect(..., OK)`` where no entry matches)."""
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
            return expect
        return Expect("", OK)

    def expected_unpatched(self, torch_version: str, tensordict_version: Optional[str]) -> str:
        return self.expectation(torch_version, tensordict_version).outcome


class CaseList:
    """A catalog module's cases in the order they are registered.

    Each patch's section registers its own (``CASES.add(Case(...), ...)``) instead of rebinding a
    tuple, so a section can move, be removed or be stamped out by ``scripts/new_patch.py`` alone."""

    def __init__(self, cases: Iterable[Case] = ()) -> None:
        self._cases: List[Case] = []
        self.add(*cases)

    def add(self, *cases: Case) -> None:
        for case in cases:
            if not isinstance(case, Case):
                raise TypeError(f"CaseList.add takes Case objects, not {type(case).__name__}")
        self._cases.extend(cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)


@dataclasses.dataclass
class Outcome:
    outcome: str
    detail: str = ""
    frames: int = 0

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


#: The instance key :func:`vary` adds to the second call's objects.
EXTRA_KEY = "b"


def vary(args: Sequence[Any]) -> None:
    """The second call's inputs: integer attributes of the objects passed in are
    changed and, where it is not there yet, an instance key ``b`` is added, so a
    decision Dynamo took on the first call's keys or values without a guard gives
    a wrong result here. Tensordict objects are left alone (their ``__setattr__``
    is their own)."""
    for arg in args:
        if isinstance(arg, torch.Tensor) or type(arg).__module__.startswith("tensordict"):
            continue
        attrs = getattr(arg, "__dict__", None)
        if not isinstance(attrs, dict):
            continue
        for key, value in list(attrs.items()):
            if type(value) is int:
                attrs[key] = value + 1
        if EXTRA_KEY not in attrs and not hasattr(type(arg), EXTRA_KEY):
            attrs[EXTRA_KEY] = torch.full((3,), 7.0)


def _fresh(case: Case, call: int = 1) -> Sequence[Any]:
    torch.manual_seed(call - 1)
    args = tuple(case.inputs())
    if call == 2:
        (case.vary or vary)(args)
    return args


def _eager(case: Case, call: int = 1):
    args = _fresh(case, call)
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
            expected_result, expected_state = _eager(case, call)
        except Exception as exc:  # noqa: BLE001
            return Outcome(EAGER_ERROR, f"call {call}: {type(exc).__name__}: {exc}")
        args = _fresh(case, call)
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
