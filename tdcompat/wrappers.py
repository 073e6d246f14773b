"""The fail-safe shape every patch wrapper has.

A patch handler sees the call, handles the one pattern it was written for, and
returns :data:`DEFER` for everything else, which runs Dynamo's original method.
If the handler itself fails in a way it did not foresee (anything but Dynamo's
own control-flow exceptions), the failure is reported once and the original
runs: the worst case is today's unpatched behaviour, never a new crash.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

DEFER = object()

Handler = Callable[[Callable[..., Any], Any, tuple, dict], Any]


def fail_safe(patch_name: str) -> Callable[[Handler], Handler]:
    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def wrapper(wrapped, instance, args, kwargs):
            try:
                result = handler(wrapped, instance, args, kwargs)
            except Exception as error:  # noqa: BLE001
                from .dynamo_api import is_dynamo_control_flow

                if is_dynamo_control_flow(error):
                    raise
                _report(patch_name, handler, error)
                return wrapped(*args, **kwargs)
            if result is DEFER:
                return wrapped(*args, **kwargs)
            return result

        wrapper.__tdcompat_handler__ = handler
        return wrapper

    return decorate


_reported: set = set()


def _report(patch_name: str, handler: Handler, error: BaseException) -> None:
    from . import config
    from .registry import report

    try:
        strict = config.strict()
    except config.ConfigError:
        strict = False
    message = (
        f"tdcompat: patch {patch_name!r} failed in {handler.__name__} "
        f"({type(error).__name__}: {error}); Dynamo's original behaviour was used instead"
    )
    report(message, strict=strict, key=(patch_name, handler.__name__, type(error)), seen=_reported)
