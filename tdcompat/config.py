"""The environment variables tdcompat reads, parsed strictly.

``TDCOMPAT_DISABLE``  comma-separated patch names, or ``*`` for all.
``TDCOMPAT_STRICT``   ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``.

A malformed value is never guessed at: it raises :class:`ConfigError` naming the
variable, the value and what would be valid. The activation code turns that into
a warning and applies nothing (the unpatched torch is the safe state), or into
an error under ``TDCOMPAT_STRICT``.
"""

from __future__ import annotations

import os
import re
from typing import FrozenSet, Iterable, Mapping, Optional

DISABLE_VAR = "TDCOMPAT_DISABLE"
STRICT_VAR = "TDCOMPAT_STRICT"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class ConfigError(ValueError):
    """An environment variable or argument tdcompat reads has a value it cannot accept."""


def strict(environ: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if environ is None else environ
    raw = env.get(STRICT_VAR, "")
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(
        f"{STRICT_VAR}={raw!r} is not a boolean; use one of 1, 0, true, false, yes, no, on, off"
    )


def disabled(known: Iterable[str], environ: Optional[Mapping[str, str]] = None) -> FrozenSet[str]:
    """Names of the patches the user switched off."""
    env = os.environ if environ is None else environ
    raw = env.get(DISABLE_VAR, "")
    known = sorted(known)
    return names_from(raw, known, source=f"{DISABLE_VAR}={raw!r}")


def names_from(raw: str, known: Iterable[str], source: str) -> FrozenSet[str]:
    known = sorted(known)
    items = [part.strip() for part in raw.split(",")]
    if items == [""]:
        return frozenset()
    if items == ["*"]:
        return frozenset(known)
    unknown = [name for name in items if name not in known]
    if unknown:
        bad = ", ".join(repr(name) for name in unknown)
        hint = "" if all(_NAME.match(n) for n in unknown) else " (names are comma-separated)"
        raise ConfigError(
            f"{source}: unknown patch name {bad}{hint}; valid names are: {', '.join(known)}, or '*' for all"
        )
    return frozenset(items)
