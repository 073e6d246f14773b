"""Run a callback once a module has finished importing, without importing it.

Why not ``wrapt.register_post_import_hook``: importing wrapt costs about 3 ms, more than half of
``import tdcompat`` (``python -X importtime``), and the hook is all ``import tdcompat`` needs. The
patches still use wrapt's wrappers; wrapt loads with them, when Dynamo is imported.

The hook is a PEP 451 meta path finder that asks the finders after it for the module's spec and
wraps the spec's loader so that ``exec_module`` calls back once the module body has run (the
module is then in ``sys.modules`` and complete: for a package, its ``__init__`` has run). It
fires once and removes itself; a failed import leaves it in place for the next attempt.
"""

from __future__ import annotations

import sys
import threading
from importlib.abc import Loader, MetaPathFinder
from types import ModuleType
from typing import Any, Callable, Optional, Sequence

Callback = Callable[[ModuleType], None]


class _Loader(Loader):
    """The module's own loader, calling back after ``exec_module``; every other attribute is the
    wrapped loader's (``get_source``, ``get_resource_reader``, ``is_package``, ...)."""

    def __init__(self, loader: Any, hook: "_Hook") -> None:
        self._loader = loader
        self._hook = hook

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Optional[ModuleType]:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._hook.fire(module)


class _Hook(MetaPathFinder):
    def __init__(self, name: str, callback: Callback) -> None:
        self.name = name
        self._callback = callback
        self._searching = threading.local()
        self._fired = False
        self._lock = threading.Lock()

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None):
        if fullname != self.name or getattr(self._searching, "active", False):
            return None
        self._searching.active = True
        try:
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self._searching.active = False
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, self)
        return spec

    def fire(self, module: ModuleType) -> None:
        with self._lock:
            if self._fired:
                return
            self._fired = True
        remove(self)
        self._callback(module)


def when_imported(name: str, callback: Callback) -> Optional[_Hook]:
    """Call ``callback(module)`` once ``name`` has finished importing: at once if it already has.
    Returns the installed hook (None when it ran at once)."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return None
    hook = _Hook(name, callback)
    sys.meta_path.insert(0, hook)
    return hook


def remove(hook: _Hook) -> None:
    """Take ``hook`` off ``sys.meta_path`` (it no longer fires)."""
    try:
        sys.meta_path.remove(hook)
    except ValueError:
        pass
