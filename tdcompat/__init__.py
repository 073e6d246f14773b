"""tdcompat: make ``torch.compile`` trace what TorchDynamo mistraces.

``import tdcompat`` before the first ``torch.compile`` call is the whole
integration. Nothing heavy happens at import: the patches go in when
``torch._dynamo`` is first imported, and only those the installed torch needs.
"""

from __future__ import annotations

from typing import Iterable, List, Optional

from . import lifecycle as _lifecycle
from .config import ConfigError
from .lifecycle import is_applied
from .registry import PatchStatus, State, TdcompatError, TdcompatWarning

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml reads it, so do the wheel and sdist

def _all_patches():
    # The one import of the patch modules, on first use: ``import tdcompat`` stays the hook alone.
    from .patches import ALL_PATCHES

    return ALL_PATCHES


def __getattr__(name):  # PEP 562: ``tdcompat.patches`` without importing it up front
    if name == "patches":
        import importlib

        return importlib.import_module(f"{__name__}.patches")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def patch(names: Optional[Iterable[str]] = None) -> List[str]:
    """Apply the patches this torch needs (all not disabled, or ``names``); returns those newly applied.

    Imports ``torch._dynamo`` if it is not imported yet. Idempotent.
    """
    import torch._dynamo  # noqa: F401  (the hook may already have done the work)

    return _lifecycle.activate(_lifecycle.process_registry(), names, explicit=True)


def unpatch(names: Optional[Iterable[str]] = None) -> List[str]:
    """Restore Dynamo's original methods (all, or ``names``); returns those reverted. Idempotent."""
    return _lifecycle.deactivate(_lifecycle.process_registry(), names)


def status() -> List[PatchStatus]:
    """One entry per known patch: its state on this install and why."""
    return _lifecycle.process_registry().status()


def patch_names() -> List[str]:
    return _lifecycle.process_registry().names


__all__ = [
    "ConfigError",
    "PatchStatus",
    "State",
    "TdcompatError",
    "TdcompatWarning",
    "is_applied",
    "patch",
    "patch_names",
    "status",
    "unpatch",
]

# Idempotent (importlib.reload(tdcompat) keeps the registry, whose handlers are in place).
_lifecycle.start(_all_patches)
