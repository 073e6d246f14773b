"""When patches go in: lazily, the moment ``torch._dynamo`` finishes importing.

``import tdcompat`` only registers a wrapt post-import hook on the *package*
``torch._dynamo`` (a hook on a leaf module would fire while the package is
half-initialised). Importing Dynamo costs seconds, so tdcompat never does it
itself unless ``patch()`` is called explicitly.
"""

from __future__ import annotations

import sys
import threading
from typing import Iterable, List, Optional

from . import config
from .registry import Registry, State, TdcompatError, TdcompatWarning, report

DYNAMO = "torch._dynamo"

_hook_lock = threading.Lock()
_hook_registered = False


def register_hook(registry: Registry) -> None:
    """Idempotent; runs the activation at once if Dynamo is already imported."""
    global _hook_registered
    with _hook_lock:
        if _hook_registered:
            return
        _hook_registered = True
    import wrapt

    wrapt.register_post_import_hook(lambda module: on_dynamo_import(registry), DYNAMO)


def on_dynamo_import(registry: Registry) -> None:
    """The hook body: never lets an exception escape into the user's import (unless strict)."""
    try:
        activate(registry, names=None, explicit=False)
    except TdcompatError:
        raise
    except Exception as exc:  # noqa: BLE001
        report(f"tdcompat: activation failed, torch left unpatched: {type(exc).__name__}: {exc}", strict=False)


def _strict() -> bool:
    try:
        return config.strict()
    except config.ConfigError as exc:
        report(f"tdcompat: {exc}; continuing in non-strict mode", strict=False, key=str(exc), seen=_seen)
        return False


_seen: set = set()


def activate(registry: Registry, names: Optional[Iterable[str]], explicit: bool) -> List[str]:
    """Apply what this torch needs. ``names=None`` means every patch not disabled by the user."""
    strict = _strict()
    from .versions import UnsupportedTorchVersion, needed, parse_torch_version

    torch = sys.modules.get("torch")
    with registry._lock:
        try:
            if names is None:
                off = config.disabled(registry.names)
                chosen = [n for n in registry.names if n not in off]
            else:
                named = config.names_from(",".join(names), registry.names, source="patch() argument")
                wanted = set(named).union(*(_needs_closure(registry, m) for m in named))
                chosen = [n for n in registry.order if n in wanted]
        except config.ConfigError as exc:
            registry.problem = str(exc)
            for name in registry.names:
                registry.set_state(name, State.DISABLED, f"not applied: {exc}")
            if explicit:
                raise
            report(f"tdcompat applied NO patch, torch runs unpatched: {exc}. tdcompat cannot tell which patch "
                   "you meant to switch off, so it leaves every one off; fix the setting to get them back",
                   strict=strict, key=str(exc), seen=_seen)
            return []
        try:
            version = parse_torch_version(getattr(torch, "__version__", "unknown"))
        except UnsupportedTorchVersion as exc:
            registry.problem = str(exc)
            for name in registry.names:
                registry.set_state(name, State.NOT_APPLICABLE, str(exc))
            report(f"tdcompat: {exc}", strict=strict, key=str(exc), seen=_seen)
            return []
        registry.problem = None
        applied = []
        for name in registry.order:
            patch = registry.get(name)
            if name not in chosen:
                if not registry.is_applied(name):
                    registry.set_state(name, State.DISABLED, f"disabled by {config.DISABLE_VAR}" if names is None else "not requested")
                continue
            try:
                wanted = needed(version, patch.torch, patch.probe)
            except Exception as exc:  # noqa: BLE001 - a probe must not break the import
                registry.set_state(name, State.NOT_APPLICABLE, f"internals probe failed: {exc!r}", strict, warn=True)
                continue
            if not wanted:
                registry.set_state(name, State.NOT_NEEDED, f"not needed on torch {version} (range {patch.torch})")
                continue
            missing = _missing_need(registry, patch, version)
            if missing is not None:
                dep, (dep_state, dep_reason) = missing
                reason = f"needs {dep!r} on torch {version}, which is {dep_state.value}"
                if dep_reason and dep_reason.startswith("needs "):
                    reason += f": it {dep_reason}"  # name the root: the patch actually switched off
                if registry.is_applied(name):
                    registry.revert(name, reason)
                # A dependency the user switched off takes its dependents along quietly;
                # one that could not be applied is a skip like any other.
                registry.set_state(name, State.DISABLED, reason, strict, warn=dep_state is not State.DISABLED)
                continue
            if registry.apply(name, strict) is State.APPLIED:
                applied.append(name)
        if applied:
            clear_dynamo_caches()
        return applied


def _needs_closure(registry: Registry, name: str) -> set:
    out, todo = set(), list(registry.get(name).needs)
    while todo:
        dep = todo.pop()
        if dep not in out:
            out.add(dep)
            todo.extend(registry.get(dep).needs)
    return out


def _missing_need(registry: Registry, patch, version):
    """The first patch ``patch`` needs that this torch needs too but is not applied, with its state."""
    from .versions import needed

    for dep in patch.needs:
        state = registry.state(dep)
        if state in (State.APPLIED, State.NOT_NEEDED):
            continue
        dep_patch = registry.get(dep)
        try:
            if not needed(version, dep_patch.torch, dep_patch.probe):
                continue  # fixed natively here: switching it off changes nothing
        except Exception:  # noqa: BLE001 - a failing probe: treat the need as unmet
            pass
        return dep, registry._states[dep]
    return None


def deactivate(registry: Registry, names: Optional[Iterable[str]]) -> List[str]:
    with registry._lock:
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


__all__ = ["register_hook", "activate", "deactivate", "TdcompatWarning"]
