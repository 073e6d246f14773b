"""The few Dynamo entry points whose shape moved between releases.

Patches call these instead of Dynamo directly, so that one patch body serves
torch 2.5 through the newest release.
"""

from __future__ import annotations

import inspect
from typing import NoReturn


def graph_break(gb_type: str, context: str, explanation: str) -> NoReturn:
    """Raise Dynamo's ``Unsupported`` through whichever API this torch has.

    ``unimplemented(msg)`` (2.5-2.6), ``unimplemented_v2(gb_type=...)``
    (about 2.7-2.12), ``unimplemented(gb_type=...)`` (2.13 on).
    """
    from torch._dynamo import exc

    v2 = getattr(exc, "unimplemented_v2", None)
    if v2 is not None:
        v2(gb_type=gb_type, context=context, explanation=explanation, hints=[])
    params = inspect.signature(exc.unimplemented).parameters
    if "gb_type" in params:
        exc.unimplemented(gb_type=gb_type, context=context, explanation=explanation, hints=[])
    exc.unimplemented(f"{gb_type}: {context} ({explanation})")
    raise AssertionError("unreachable")  # pragma: no cover


def is_dynamo_control_flow(error: BaseException) -> bool:
    """True for the exceptions Dynamo uses to steer tracing (graph breaks,
    observed user exceptions, restarts): a patch wrapper must let these through."""
    from torch._dynamo import exc

    return isinstance(error, exc.TorchDynamoException) or type(error).__module__.startswith("torch._dynamo")


def guard_dict_contains(source, key: str, present: bool) -> None:
    """Guard that ``key in <the dict at source>`` stays ``present``.

    ``GuardBuilder.DICT_CONTAINS(key=, invert=)`` up to about 2.12;
    ``DICT_CONTAINS``/``DICT_NOT_CONTAINS`` (no ``invert``) from 2.13.
    """
    import functools

    from torch._dynamo.guards import GuardBuilder

    try:
        from torch._dynamo.guards import install_guard
    except ImportError:  # pragma: no cover - moved in some releases
        from torch._guards import install_guard  # type: ignore[no-redef]
    not_contains = getattr(GuardBuilder, "DICT_NOT_CONTAINS", None)
    if not_contains is not None:
        builder = functools.partial(GuardBuilder.DICT_CONTAINS if present else not_contains, key=key)
    else:
        builder = functools.partial(GuardBuilder.DICT_CONTAINS, key=key, invert=not present)
    install_guard(source.make_guard(builder))


def raise_observed(exc_type: type, tx, context: str) -> "NoReturn":
    """Raise ``exc_type`` inside the traced program, as eager would.

    ``raise_observed_exception(exc_type, tx, *, args=...)`` from about 2.6;
    2.5's ``raise_observed_exception(e, tx, vt)`` passes ``vt`` on as the
    translator of ``BuiltinVariable(e).call_function`` and knows only the
    exceptions in its ``observed_exception_map``; others graph-break.
    """
    from torch._dynamo import exc

    params = inspect.signature(exc.raise_observed_exception).parameters
    if "vt" in params:
        if exc_type not in getattr(exc, "observed_exception_map", {}):
            graph_break(f"{exc_type.__name__} in compiled code", context,
                        f"eager raises {exc_type.__name__} here; this torch cannot raise it inside the trace")
        exc.raise_observed_exception(exc_type, tx, tx)
    exc.raise_observed_exception(exc_type, tx)
    raise AssertionError("unreachable")  # pragma: no cover
