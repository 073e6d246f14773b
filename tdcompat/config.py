"""The environment variables tdcompat reads, parsed strictly.

``TDCOMPAT_DISABLE``  comma-separated patch names, or ``*`` for all.
``TDCOMPAT_STRICT``   ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``.

A malformed value is never guessed at: it raises :class:`ConfigError` naming the
variable, the value, the closest valid value (``module_mapping_dict`` -> did you
mean ``module-mapping-dict``?) and what would be valid. :func:`problems` checks
every variable at once (the doctor prints its messages). The activation code turns that into
a warning and applies nothing (the unpatched torch is the safe state), or into
an error under ``TDCOMPAT_STRICT``.
"""

from __future__ import annotations

import difflib
import os
import re
from typing import FrozenSet, Iterable, List, Mapping, Optional

DISABLE_VAR = "TDCOMPAT_DISABLE"
STRICT_VAR = "TDCOMPAT_STRICT"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


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
    guess = _closest(value, sorted(_TRUE | _FALSE - {""}))
    hint = f" (did you mean {guess!r}?)" if guess and len(value) > 1 else ""
    raise ConfigError(
        f"{STRICT_VAR}={raw!r} is not a boolean{hint}; use one of 1, 0, true, false, yes, no, on, off"
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
        problems = "; ".join(_explain_name(name, known) for name in unknown)
        raise ConfigError(
            f"{source}: {problems}. It takes patch names separated by commas "
            f"(e.g. '{known[0]},{known[-1]}'), or '*' for all; valid names are: {', '.join(known)}"
        )
    return frozenset(items)


def _explain_name(name: str, known: List[str]) -> str:
    """Why ``name`` is not a patch name, with the closest valid one where there is one."""
    if name == "":
        return "an empty name (two commas in a row, or a comma at an end)"
    if name == "*":
        return "'*' (all) cannot be combined with other names"
    parts = [p for p in re.split(r"[;:\s|/]+", name) if p]
    if len(parts) > 1 and all(_closest(p, known) for p in parts):
        fixed = ",".join(_closest(p, known) for p in parts)  # type: ignore[misc]
        return f"unknown patch name {name!r} (separate names with commas: {fixed!r})"
    guess = _closest(name, known)
    return f"unknown patch name {name!r}" + (f" (did you mean {guess!r}?)" if guess else "")


def _closest(name: str, valid: Iterable[str]) -> Optional[str]:
    """The valid value nearest to ``name`` (case, ``_`` for ``-`` and typos forgiven), or None."""
    valid = list(valid)
    normal = name.strip().lower().replace("_", "-").replace(" ", "-")
    if normal in valid:
        return normal
    match = difflib.get_close_matches(normal, valid, n=1, cutoff=0.6)
    return match[0] if match else None


def problems(known: Iterable[str], environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """One message per malformed variable tdcompat reads (none: the settings are fine)."""
    known = sorted(known)
    out = []
    for read in (lambda: disabled(known, environ), lambda: strict(environ)):
        try:
            read()
        except ConfigError as exc:
            out.append(str(exc))
    return out
