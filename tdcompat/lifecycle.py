"""A patch's life cycle, in one place: what should be applied (:func:`plan`), and making it so.

:func:`plan` is the one place that decides each patch's state and reason, from the
patch declarations, the torch version and what the user chose (:class:`Settings`);
it has no side effects. :func:`activate` reads the settings, plans, and applies the
differences under the registry's lock; the doctor shows what it recorded.

When: lazily, the moment ``torch._dynamo`` finishes importing. ``import tdcompat``
only registers a post-import hook (:mod:`tdcompat.import_hook`) on the *package* ``torch._dynamo`` (a
hook on a leaf module would fire while the package is half-initialised). Importing Dynamo
costs seconds, so tdcompat never does it itself unless ``patch()`` is called explicitly.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional

from . import config
from .import_hook import when_imported
from .registry import Decision, Registry, State, TdcompatError, dependency_order, report

if TYPE_CHECKING:
    from .spec import Patch

DYNAMO = "torch._dynamo"


@dataclasses.dataclass(frozen=True)
class Settings:
    """What the user chose."""

    #: Patches switched off (``TDCOMPAT_DISABLE``).
    disabled: FrozenSet[str] = frozenset()
    #: ``patch(names)``: only these and what they need; None: every patch not disabled.
    requested: Optional[FrozenSet[str]] = None
    #: ``TDCOMPAT_STRICT``: a patch that cannot go in is an error, not a warning.
    strict: bool = False
    #: A malformed setting (its message): nothing is applied.
    error: Optional[str] = None


def read_settings(known: Iterable[str], requested: Optional[Iterable[str]] = None) -> Settings:
    """The settings from the environment (``TDCOMPAT_DISABLE`` is not read when ``requested`` names
    patches); a malformed strict value is a warning (non-strict), any other one ``Settings.error``."""
    strict = _strict()
    try:
        if requested is None:
            return Settings(disabled=config.disabled(known), strict=strict)
        named = config.names_from(",".join(requested), known, source="patch() argument")
        return Settings(requested=named, strict=strict)
    except config.ConfigError as exc:
        return Settings(strict=strict, error=str(exc))


def plan(patches: Iterable[Patch], torch_version: str, settings: Settings,
         installed: Optional[Mapping[str, Decision]] = None) -> Dict[str, Decision]:
    """Each patch's state and reason, in declaration order: what :func:`activate` records.

    Pure: no side effects, no import of Dynamo (a patch's ``probe`` is asked only for a
    pre-release at the edge of its range; see ``versions.py``). ``installed`` is what
    installing gave so far: an ``APPLIED`` decision for a patch in place (it stays in
    place, unless a patch it needs is off: then it goes), a ``NOT_APPLICABLE``/``FAILED``
    one for a patch that could not go in (what needs it then goes without it). With
    nothing installed, the plan is a fresh process's.
    """
    from .versions import needed, parse_torch_version

    declared = {patch.name: patch for patch in patches}
    installed = installed or {}
    in_place = {name: d for name, d in installed.items() if d.state is State.APPLIED}
    problem = global_problem(torch_version, settings)
    if problem is not None:
        return {name: in_place.get(name, problem) for name in declared}

    version = parse_torch_version(torch_version)
    order = dependency_order(declared.values())
    if settings.requested is None:
        chosen = set(declared) - settings.disabled
        not_chosen = Decision(State.DISABLED, f"disabled by {config.DISABLE_VAR}", choice=True)
    else:
        chosen, todo = set(), list(settings.requested)
        while todo:  # what was requested and everything it needs
            name = todo.pop()
            if name not in chosen:
                chosen.add(name)
                todo.extend(declared[name].needs)
        not_chosen = Decision(State.DISABLED, "not requested", choice=True)

    needs_here: Dict[str, object] = {}

    def needed_here(name: str):
        """True/False, or the exception the patch's probe raised."""
        if name not in needs_here:
            patch = declared[name]
            try:
                needs_here[name] = needed(version, patch.torch, patch.probe)
            except Exception as exc:  # noqa: BLE001 - a probe must not break the import
                needs_here[name] = exc
        return needs_here[name]

    decisions: Dict[str, Decision] = {}
    for name in order:
        patch = declared[name]
        if name not in in_place:
            if name not in chosen:
                decisions[name] = not_chosen
                continue
            wanted = needed_here(name)
            if isinstance(wanted, Exception):
                decisions[name] = Decision(State.NOT_APPLICABLE, f"internals probe failed: {wanted!r}", warn=True)
                continue
            if not wanted:
                decisions[name] = Decision(State.NOT_NEEDED, f"not needed on torch {version} (range {patch.torch})")
                continue
        # A need that is off here, where this torch needs it too (a probe that fails: the need is unmet).
        off = [dep for dep in patch.needs
               if decisions[dep].state not in (State.APPLIED, State.NOT_NEEDED) and needed_here(dep) is not False]
        if off:
            dep = decisions[off[0]]
            reason = f"needs {off[0]!r} on torch {version}, which is {dep.state.value}"
            if dep.reason.startswith("needs "):
                reason += f": it {dep.reason}"  # name the root: the patch actually switched off
            # A need the user switched off takes its dependents along quietly;
            # one that could not be applied is a skip like any other.
            decisions[name] = Decision(State.DISABLED, reason, choice=all(decisions[d].choice for d in off),
                                       warn=dep.state is not State.DISABLED)
            continue
        decisions[name] = installed.get(name) or Decision(
            State.APPLIED, f"needed on torch {torch_version} (range {patch.torch})")
    return {name: decisions[name] for name in declared}


def global_problem(torch_version: str, settings: Settings) -> Optional[Decision]:
    """What keeps every patch off: a malformed setting, or a torch version tdcompat cannot use."""
    from .versions import UnsupportedTorchVersion, parse_torch_version

    if settings.error is not None:
        return Decision(State.DISABLED, f"not applied: {settings.error}")
    try:
        parse_torch_version(torch_version)
    except UnsupportedTorchVersion as exc:
        return Decision(State.NOT_APPLICABLE, str(exc))
    return None


# -- applying the plan ----------------------------------------------------------------
_seen: set = set()


def _strict() -> bool:
    try:
        return config.strict()
    except config.ConfigError as exc:
        report(f"tdcompat: {exc}; continuing in non-strict mode", strict=False, key=str(exc), seen=_seen)
        return False


def activate(registry: Registry, names: Optional[Iterable[str]], explicit: bool) -> List[str]:
    """Apply what this torch needs. ``names=None`` means every patch not disabled by the user.

    Records :func:`plan`'s decisions and applies the differences in dependency order;
    a patch that cannot go in is planned again around (its dependents go without it).
    Never takes out a patch in place, except one whose need went off (``unpatch()`` does).
    """
    settings = read_settings(registry.names, names)
    torch_version = getattr(sys.modules.get("torch"), "__version__", "unknown")
    with registry.lock:
        installed = {name: registry.decision(name) for name in registry.names if registry.is_applied(name)}
        decisions = plan(registry.patches, torch_version, settings, installed)
        problem = global_problem(torch_version, settings)
        if problem is not None:
            for name, decision in decisions.items():
                registry.record(name, decision)
            if settings.error is None:  # an unreadable or unsupported torch version
                report(f"tdcompat: {problem.reason}", strict=settings.strict, key=problem.reason, seen=_seen)
            elif explicit:
                raise config.ConfigError(settings.error)
            else:
                report(f"tdcompat applied NO patch, torch runs unpatched: {settings.error}. tdcompat cannot tell "
                       "which patch you meant to switch off, so it leaves every one off; fix the setting to get them "
                       "back", strict=settings.strict, key=settings.error, seen=_seen)
            return []
        applied = []
        for name in registry.order:
            decision = decisions[name]
            if decision.state is State.APPLIED and not registry.is_applied(name):
                if registry.apply(name, settings.strict) is State.APPLIED:
                    registry.record(name, decision)
                    applied.append(name)
                else:  # recorded and reported by the registry; what needs it is planned again
                    installed[name] = registry.decision(name)
                    decisions = plan(registry.patches, torch_version, settings, installed)
                continue
            if decision.state is not State.APPLIED and registry.is_applied(name):
                registry.revert(name, decision.reason)  # a need went off: without it the patch would be wrong
            registry.record(name, decision, settings.strict)
        if applied:
            clear_dynamo_caches()
        return applied


def deactivate(registry: Registry, names: Optional[Iterable[str]]) -> List[str]:
    with registry.lock:
        chosen = registry.names if names is None else sorted(
            config.names_from(",".join(names), registry.names, source="unpatch() argument")
        )
        reverted = []
        for name in chosen:
            # What needs a reverted patch would be silently wrong without it: it goes first.
            for dependent in reversed(registry.needed_by(name)):
                if registry.revert(dependent, f"reverted with {name!r}, which it needs"):
                    reverted.append(dependent)
            if registry.revert(name, "reverted by tdcompat.unpatch()"):
                reverted.append(name)
        if reverted:
            clear_dynamo_caches()
        return reverted


def clear_dynamo_caches() -> None:
    """Drop compiled code and memoised trace decisions made before the change.

    Code compiled before a patch went in (or out) embeds the old decisions;
    ``torch._dynamo.reset()`` discards it so the next call re-traces.
    """
    dynamo = sys.modules.get(DYNAMO)
    if dynamo is None or not hasattr(dynamo, "reset"):
        return
    try:
        dynamo.reset()
    except Exception as exc:  # noqa: BLE001
        report(f"tdcompat: torch._dynamo.reset() failed after patching: {exc!r}", strict=False, key="reset", seen=_seen)


# -- the process's registry -------------------------------------------------------------
_start_lock = threading.Lock()
_registry: Optional[Registry] = None


def start(load_patches: Callable[[], Iterable[Patch]]) -> Registry:
    """Create the process's registry and hook activation to Dynamo's import; idempotent
    (``importlib.reload(tdcompat)`` keeps the registry, whose handlers are in place).

    ``tdcompat/__init__`` passes ``load_patches``: it alone imports the patch modules
    (on first use), so a patch can ask :func:`is_applied` without an import cycle.
    Runs the activation at once if Dynamo is already imported.
    """
    global _registry
    with _start_lock:
        if _registry is not None:
            return _registry
        _registry = registry = Registry(load_patches)
    when_imported(DYNAMO, lambda module: on_dynamo_import(registry))
    return registry


def process_registry() -> Registry:
    """The registry ``tdcompat.patch()``, ``unpatch()`` and ``status()`` act on."""
    if _registry is None:
        raise RuntimeError("tdcompat.lifecycle.start() has not run (import tdcompat runs it)")
    return _registry


def is_applied(name: str) -> bool:
    """Is patch ``name`` applied in this process (its handlers in place)?"""
    registry = process_registry()
    if name not in registry.names:
        raise ValueError(f"unknown patch name {name!r}; valid names are: {', '.join(sorted(registry.names))}")
    return registry.is_applied(name)


def on_dynamo_import(registry: Registry) -> None:
    """The hook body: never lets an exception escape into the user's import (unless strict)."""
    try:
        activate(registry, names=None, explicit=False)
    except TdcompatError:
        raise
    except Exception as exc:  # noqa: BLE001
        report(f"tdcompat: activation failed, torch left unpatched: {type(exc).__name__}: {exc}", strict=False)


__all__ = ["Decision", "Settings", "read_settings", "plan", "global_problem", "activate", "deactivate", "start",
           "process_registry", "is_applied"]
