"""Installing and removing one patch's wrappers, exactly.

Resolution happens before anything changes: a patch whose targets or
requirements are missing raises :class:`NotApplicable` and leaves torch as it
was. Installation stores the attribute found in the owning class's own
``__dict__`` (or its absence) and revert puts back that very object (or deletes
the wrapper), so a reverted class is byte-for-byte what it was.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, List, Optional

import wrapt

from .spec import Patch, Target

_MISSING = object()


class NotApplicable(Exception):
    """The installed torch does not have the internals a patch needs."""


@dataclasses.dataclass
class Installed:
    owner: type
    attribute: str
    original: Any  # the owner's own __dict__ entry, or _MISSING
    wrapper: Any


def resolve(path: str) -> Any:
    """``"pkg.module:Class.attr"`` -> object; NotApplicable naming what is missing."""
    module_name, _, dotted = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any failure means "not there"
        raise NotApplicable(f"cannot import {module_name} ({type(exc).__name__}: {exc})") from None
    walked = module_name
    for part in filter(None, dotted.split(".")):
        walked = f"{walked}.{part}" if walked != module_name else f"{module_name}:{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise NotApplicable(f"{walked} does not exist") from None
    return obj


def _raw_lookup(owner: type, attribute: str) -> Any:
    for klass in owner.__mro__:
        if attribute in vars(klass):
            return vars(klass)[attribute]
    return _MISSING


def _check_params(target: Target, raw: Any) -> None:
    if not target.params:
        return
    func = getattr(raw, "__func__", raw)
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        raise NotApplicable(f"{target.qualname} has no readable signature") from None
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    missing = [p for p in target.params if p not in parameters and not accepts_any]
    if missing:
        raise NotApplicable(
            f"{target.qualname}{inspect.signature(func)} lacks parameter(s) {', '.join(missing)}"
        )


def _prepare(target: Target) -> tuple:
    owner = resolve(f"{target.module}:{target.owner}")
    if not isinstance(owner, type):
        raise NotApplicable(f"{target.module}:{target.owner} is not a class")
    own = vars(owner).get(target.attribute, _MISSING)
    raw = own if own is not _MISSING else _raw_lookup(owner, target.attribute)
    if raw is _MISSING:
        raise NotApplicable(f"{target.qualname} does not exist")
    if own is _MISSING and not target.inherited:
        raise NotApplicable(f"{target.qualname} is no longer defined on {target.owner} itself")
    if not callable(getattr(raw, "__func__", raw)):
        raise NotApplicable(f"{target.qualname} is not a method")
    _check_params(target, raw)
    return owner, own, raw


def install(patch: Patch) -> List[Installed]:
    """Wrap every target of ``patch``; all or nothing."""
    prepared, absent = [], []
    for target in patch.targets:
        try:
            prepared.append((target, *_prepare(target)))
        except NotApplicable as exc:
            if not target.optional:
                raise
            absent.append(str(exc))
    if not prepared:
        raise NotApplicable("; ".join(absent))
    for requirement in patch.requires:
        resolve(requirement)
    installed: List[Installed] = []
    for target, owner, own, raw in prepared:
        wrapper = wrapt.FunctionWrapper(raw, target.wrapper)
        setattr(owner, target.attribute, wrapper)
        installed.append(Installed(owner, target.attribute, own, wrapper))
    _drop_bound_handlers(entry.owner for entry in installed)
    return installed


#: Class attributes where Dynamo keeps handlers bound to methods tdcompat may wrap:
#: ``BuiltinVariable._make_handler`` binds ``call_<builtin>`` once per argument types and
#: keeps it in ``call_function_handler_cache`` (2.5-2.15). A wrapper installed after the
#: first use would never run, and one removed would keep running.
_HANDLER_CACHES = ("call_function_handler_cache",)


def _drop_bound_handlers(owners) -> None:
    for owner in owners:
        for klass in owner.__mro__:
            for name in _HANDLER_CACHES:
                cache = vars(klass).get(name)
                if isinstance(cache, dict):
                    cache.clear()


def uninstall(installed: List[Installed]) -> Optional[str]:
    """Restore what :func:`install` replaced; returns a note if someone re-wrapped on top."""
    note = None
    for entry in reversed(installed):
        if vars(entry.owner).get(entry.attribute, _MISSING) is not entry.wrapper:
            note = f"{entry.owner.__name__}.{entry.attribute} was replaced by someone else after tdcompat patched it"
        if entry.original is _MISSING:
            if entry.attribute in vars(entry.owner):
                delattr(entry.owner, entry.attribute)
        else:
            setattr(entry.owner, entry.attribute, entry.original)
    _drop_bound_handlers(entry.owner for entry in installed)
    return note
