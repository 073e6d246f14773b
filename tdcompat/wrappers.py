"""The fail-safe shape every patch wrapper has.

A patch handler sees the call, handles the one pattern it was written for, and
returns :data:`DEFER` for everything else, which runs Dynamo's original method.

If the handler itself fails in a way it did not foresee (anything but Dynamo's
own control-flow exceptions), the failure is reported once, and then:

* before the handler changed anything (it only looked at the call), Dynamo's
  original runs: the worst case is today's unpatched behaviour;
* after it had effects (it called the original, inlined user code, recorded a
  side effect, pushed onto the stack), running the original would repeat them,
  so the frame graph-breaks instead (``Unsupported``, chained to the error).

A handler announces its first effect with :func:`effects_begin`; calling the
``wrapped`` it was given counts as an effect by itself.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

DEFER = object()

Handler = Callable[[Callable[..., Any], Any, tuple, dict], Any]

_local = threading.local()


def _frames() -> list:
    frames = getattr(_local, "frames", None)
    if frames is None:
        frames = _local.frames = []
    return frames


def effects_begin() -> None:
    """Mark that the running handler is about to change Dynamo's state: from here
    on a failure of the handler graph-breaks instead of running the original."""
    frames = _frames()
    if frames:
        frames[-1] = True


def fail_safe(patch_name: str) -> Callable[[Handler], Handler]:
    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def wrapper(wrapped, instance, args, kwargs):
            frames = _frames()
            frames.append(False)
            depth = len(frames)

            def original(*a, **k):
                effects_begin()
                return wrapped(*a, **k)

            try:
                result = handler(original, instance, args, kwargs)
            except Exception as error:  # noqa: BLE001
                from .dynamo_api import is_dynamo_control_flow

                had_effects = frames[depth - 1]
                del frames[depth - 1:]
                if is_dynamo_control_flow(error):
                    raise
                _report(patch_name, handler, error, had_effects)
                if had_effects:
                    _break_after_effects(patch_name, handler, error)
                return wrapped(*args, **kwargs)
            del frames[depth - 1:]
            if result is DEFER:
                return wrapped(*args, **kwargs)
            return result

        wrapper.__tdcompat_handler__ = handler
        return wrapper

    return decorate


_reported: set = set()


def _break_after_effects(patch_name: str, handler: Handler, error: BaseException):
    from .dynamo_api import graph_break

    try:
        graph_break(
            "tdcompat patch failed after it had effects",
            f"{patch_name} ({handler.__name__}): {type(error).__name__}: {error}",
            "the handler had already changed the trace; running Dynamo's original would repeat that",
        )
    except Exception as unsupported:  # noqa: BLE001 - graph_break always raises
        raise unsupported from error


def _report(patch_name: str, handler: Handler, error: BaseException, had_effects: bool = False) -> None:
    from . import config
    from .registry import report

    try:
        strict = config.strict()
    except config.ConfigError:
        strict = False
    outcome = (
        "the frame graph-breaks instead (the handler had already had effects)"
        if had_effects
        else "Dynamo's original behaviour was used instead"
    )
    message = (
        f"tdcompat: patch {patch_name!r} failed in {handler.__name__} "
        f"({type(error).__name__}: {error}); {outcome}"
    )
    report(message, strict=strict, key=(patch_name, handler.__name__, type(error), had_effects), seen=_reported)
