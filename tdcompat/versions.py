"""How a torch version string maps onto a patch's version range.

The rule (documented in README, tested in ``tests/test_versions.py``):

1. The local part is ignored: ``2.6.0+cu124`` and ``2.13.0+cpu`` are 2.6.0 and 2.13.0.
2. A final or post release is in range exactly when ``packaging`` says so.
3. A pre-release or nightly (``2.9.0.dev20250601``, ``2.9.0rc1``) is classified
   by the release it leads to: if ``2.9.0`` is in the range, so is the nightly.
   If it is not, the nightly may predate the upstream fix or not, which its
   version cannot tell: the patch's internals probe decides, and a patch without
   a probe is left off (doing nothing is the safe default).
4. A string that is not a version at all makes every patch inapplicable, with a
   warning; torch older than :data:`OLDEST_SUPPORTED` is unsupported.
"""

from __future__ import annotations

import enum
from typing import Callable, Optional

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

OLDEST_SUPPORTED = Version("2.5.0")


class Verdict(enum.Enum):
    IN_RANGE = "in range"
    OUT_OF_RANGE = "out of range"
    ASK_PROBE = "pre-release at the edge of the range"


class UnsupportedTorchVersion(ValueError):
    """The installed torch version is unparseable or older than tdcompat supports."""


def parse_torch_version(text: str) -> Version:
    """Parse ``torch.__version__``; raise :class:`UnsupportedTorchVersion` with a clear message."""
    try:
        version = Version(str(text))
    except InvalidVersion:
        raise UnsupportedTorchVersion(
            f"tdcompat cannot read torch version {str(text)!r}; no patch is applied"
        ) from None
    if Version(version.base_version) < OLDEST_SUPPORTED:
        raise UnsupportedTorchVersion(
            f"torch {text} is older than {OLDEST_SUPPORTED}, the oldest release tdcompat "
            "supports; no patch is applied"
        )
    return version


def classify(version: Version, spec: str) -> Verdict:
    specifiers = SpecifierSet(spec)
    release = Version(version.base_version)
    if specifiers.contains(release):
        return Verdict.IN_RANGE
    if version.is_prerelease or version.is_devrelease:
        # A nightly of the release just past the range may or may not carry the fix.
        return Verdict.ASK_PROBE
    return Verdict.OUT_OF_RANGE


def needed(version: Version, spec: str, probe: Optional[Callable[[], bool]]) -> bool:
    verdict = classify(version, spec)
    if verdict is Verdict.ASK_PROBE:
        return bool(probe is not None and probe())
    return verdict is Verdict.IN_RANGE
