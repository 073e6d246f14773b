"""The patch registry: which patches exist, which are applied, and why.

The registry holds the state: each patch's :class:`Decision` (what ``status()``
shows) and the handlers it installed, and it applies and reverts a patch exactly
(:mod:`tdcompat.installer`). Which patches *should* be applied is decided
elsewhere, by :func:`tdcompat.lifecycle.plan`. Every state change happens under
:attr:`Registry.lock`, so two threads that import Dynamo or call
``patch()``/``unpatch()`` at once cannot double-wrap or half-revert. Every skip is
reported once, as a :class:`TdcompatWarning`, and recorded in ``status()``; under
``TDCOMPAT_STRICT`` a skip is an error instead.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import threading
import warnings
from typing import TYPE_CHECKING, Dict, Iterable, List, NamedTuple, Optional

if TYPE_CHECKING:  # the installer (and wrapt's wrappers) load only when a patch is applied
    from .installer import Installed
    from .spec import Patch


class TdcompatWarning(UserWarning):
    """A patch could not be applied, or tdcompat's settings could not be read."""


class TdcompatError(RuntimeError):
    """Raised instead of a warning when ``TDCOMPAT_STRICT`` is set."""


class State(str, enum.Enum):
    PENDING = "pending"  # torch._dynamo not imported yet
    APPLIED = "applied"
    NOT_NEEDED = "not needed"
    DISABLED = "disabled"
    NOT_APPLICABLE = "not applicable"
    FAILED = "failed"


class Decision(NamedTuple):
    """A patch's state and why: what :func:`tdcompat.lifecycle.plan` decides and ``status()`` shows."""

    state: State
    reason: str
    #: Off because of what the user chose (``TDCOMPAT_DISABLE``, ``patch(names)``, ``unpatch()``),
    #: directly or because every patch it needs that is off here is off by such a choice.
    choice: bool = False
    #: Reported when recorded: a :class:`TdcompatWarning`, or :class:`TdcompatError` under strict mode.
    warn: bool = False


@dataclasses.dataclass(frozen=True)
class PatchStatus:
    name: str
    state: State
    reason: str
    torch: str
    upstream: str
    mirrors: str
    fixes: str
    fixed_upstream: str = ""

    def as_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["state"] = self.state.value
        return data


class Registry:
    """``patches`` may be a callable: the patch modules are then imported on first
    use (when Dynamo is imported or ``status()`` is asked), not at ``import tdcompat``."""

    def __init__(self, patches):
        #: Held for every change; the life cycle holds it across a whole plan-and-apply.
        self.lock = threading.RLock()
        self._source = patches if callable(patches) else (lambda: patches)
        self._loaded = False
        self._declared: Dict[str, Patch] = {}
        self._order: List[str] = []
        self._installed: Dict[str, List[Installed]] = {}
        self._decisions: Dict[str, Decision] = {}
        self._warned: set = set()
        if not callable(patches):
            self._load()

    def _load(self) -> None:
        patches: Dict[str, Patch] = {}
        for patch in self._source():
            if patch.name in patches:
                raise ValueError(f"duplicate patch name {patch.name!r}")
            patches[patch.name] = patch
        self._order = dependency_order(patches.values())
        self._declared = patches
        self._decisions = {name: Decision(State.PENDING, "torch._dynamo is not imported yet") for name in patches}
        self._loaded = True

    @property
    def _patches(self) -> Dict[str, Patch]:
        if not self._loaded:
            with self.lock:
                if not self._loaded:
                    self._load()
        return self._declared

    # -- queries ---------------------------------------------------------
    @property
    def names(self) -> List[str]:
        return list(self._patches)

    @property
    def patches(self) -> List[Patch]:
        """The declarations, in declaration order."""
        return list(self._patches.values())

    @property
    def order(self) -> List[str]:
        """The names with every patch after the patches it ``needs``."""
        self._patches  # noqa: B018 - loads
        return list(self._order)

    def needed_by(self, name: str) -> List[str]:
        """Patches that need ``name``, directly or through others, in apply order."""
        out: List[str] = []
        for other in self.order:
            if any(dep == name or dep in out for dep in self._patches[other].needs):
                out.append(other)
        return out

    def state(self, name: str) -> State:
        return self.decision(name).state

    def decision(self, name: str) -> Decision:
        self._patches  # noqa: B018 - loads
        return self._decisions[name]

    def decisions(self) -> Dict[str, Decision]:
        """Every patch's decision, in declaration order."""
        with self.lock:
            return {name: self._decisions[name] for name in self._patches}

    def get(self, name: str) -> Patch:
        return self._patches[name]

    def is_applied(self, name: str) -> bool:
        """Are ``name``'s handlers in place (installed by this registry)?"""
        return name in self._installed

    def status(self) -> List[PatchStatus]:
        with self.lock:
            patches = self._patches
            return [
                PatchStatus(p.name, self._decisions[p.name].state, self._decisions[p.name].reason, torch=p.torch,
                            upstream=p.upstream, mirrors=p.mirrors, fixes=p.fixes, fixed_upstream=p.fixed_upstream)
                for p in patches.values()
            ]

    # -- changes ---------------------------------------------------------
    def record(self, name: str, decision: Decision, strict: bool = False) -> None:
        """Set ``name``'s decision; a ``warn`` decision is reported (once; raised under ``strict``)."""
        with self.lock:
            self._decisions[name] = decision
        if decision.warn:
            report(f"tdcompat: patch {name!r} skipped: {decision.reason}", strict=strict, key=(name, decision.reason),
                   seen=self._warned)

    def apply(self, name: str, strict: bool) -> State:
        """Install ``name`` (all targets or none); a patch that cannot go in is recorded and reported."""
        patch = self._patches[name]
        with self.lock:
            if name in self._installed:
                return State.APPLIED
            from .installer import NotApplicable, install

            try:
                self._installed[name] = install(patch)
            except NotApplicable as exc:
                reason = f"{exc} (torch {_torch_version()})"
                self.record(name, Decision(State.NOT_APPLICABLE, reason, warn=True), strict)
                return State.NOT_APPLICABLE
            except Exception as exc:  # noqa: BLE001 - a broken patch must not break torch
                self.record(name, Decision(State.FAILED, f"{type(exc).__name__}: {exc} (torch {_torch_version()})",
                                           warn=True), strict)
                return State.FAILED
            self._decisions[name] = Decision(State.APPLIED, f"needed on torch {_torch_version()} (range {patch.torch})")
            return State.APPLIED

    def revert(self, name: str, reason: str) -> bool:
        """Take ``name``'s handlers out exactly; False if it was not applied."""
        with self.lock:
            installed = self._installed.pop(name, None)
            if installed is None:
                return False
            from .installer import uninstall

            note = uninstall(installed)
            self._decisions[name] = Decision(State.DISABLED, reason, choice=True)
        if note:
            report(f"tdcompat: {note}", strict=False, key=note, seen=self._warned)
        return True


def dependency_order(declared: "Iterable[Patch]") -> List[str]:
    """Declaration order, moved so that each patch comes after what it needs."""
    patches = {patch.name: patch for patch in declared}
    order: List[str] = []
    visiting: List[str] = []

    def visit(name: str, by: str) -> None:
        if name in order:
            return
        if name not in patches:
            raise ValueError(f"patch {by!r} needs unknown patch {name!r}")
        if name in visiting:
            raise ValueError(f"patches need each other in a cycle: {' -> '.join(visiting + [name])}")
        visiting.append(name)
        for dep in patches[name].needs:
            visit(dep, name)
        visiting.pop()
        order.append(name)

    for name in patches:
        visit(name, name)
    return order


def report(message: str, strict: bool, key=None, seen: Optional[set] = None) -> None:
    """Warn once per ``key``, or raise under strict mode."""
    if strict:
        raise TdcompatError(message)
    if seen is not None:
        if key in seen:
            return
        seen.add(key)
    warnings.warn(message, TdcompatWarning, stacklevel=3)


def _torch_version() -> str:
    torch = sys.modules.get("torch")
    return str(getattr(torch, "__version__", "?"))
