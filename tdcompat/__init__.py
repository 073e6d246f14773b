"""tdcompat: make ``torch.compile`` trace what TorchDynamo mistraces.

``import tdcompat`` before the first ``torch.compile`` call is the whole
integration. Nothing heavy happens at import: the patches go in when
``torch._dynamo`` is first imported, and only those the installed torch needs.
"""

from __future__ import annotations

from typing import Iterable, List, Optional

from . import activation as _activation
from .config import ConfigError
from .registry import PatchStatus, Registry, State, TdcompatError, TdcompatWarning

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml reads it, so do the wheel and sdist

def _all_patches():
    from .patches import ALL_PATCHES

    return ALL_PATCHES


# Survives importlib.reload(tdcompat): the applied wrappers belong to this registry.
# The patch modules load on first use, keeping ``import tdcompat`` to the hook alone.
_registry = globals().get("_registry") or Registry(_all_patches)


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

    return _activation.activate(_registry, names, explicit=True)


def unpatch(names: Optional[Iterable[str]] = None) -> List[str]:
    """Restore Dynamo's original methods (all, or ``names``); returns those reverted. Idempotent."""
    return _activation.deactivate(_registry, names)


def status() -> List[PatchStatus]:
    """One entry per known patch: its state on this install and why."""
    return _registry.status()


def patch_names() -> List[str]:
    return _registry.names


__all__ = [
    "ConfigError",
    "PatchStatus",
    "State",
    "TdcompatError",
    "TdcompatWarning",
    "patch",
    "patch_names",
    "status",
    "unpatch",
]

_activation.register_hook(_registry)
