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
from typing import Any, Callable, Optional, cast

DEFER = object()


class NotConstant(NotImplementedError):
    """Raised by a handler of ``as_python_constant``: Dynamo's own answer for "not a Python constant", passed on
    by the fail-safe (any other ``NotImplementedError`` from a handler is a handler failure)."""

Handler = Callable[[Callable[..., Any], Any, tuple, dict], Any]


class _State(threading.local):
    #: Has the innermost running handler of this thread had effects? Each wrapper
    #: saves its caller's value, starts at False and puts the caller's value back.
    effects = False


_state = _State()


def effects_begin() -> None:
    """Mark that the running handler is about to change Dynamo's state: from here
    on a failure of the handler graph-breaks instead of running the original."""
    _state.effects = True


def fail_safe(patch_name: str) -> Callable[[Handler], Handler]:
    """Wrap ``handler(wrapped, instance, args, kwargs)`` in the fail-safe.

    The bookkeeping on the way in and out is a few attribute reads and writes on
    a thread-local and no function call, so a call the handler defers costs this
    frame and the handler's. A handler on a method Dynamo calls for nearly
    everything it traces (``call_function``, ``_wrap``, ``var_getattr``) is
    reached through a *gate* instead: a plain function, installed as the
    wrapper, that sends every call it can tell is not its pattern (one type or
    identity test on the values at hand) straight to ``wrapped`` in its own
    frame, and passes the rest to the handler unchanged. A gate runs outside the
    fail-safe: a test that raises sends the call to the handler, which meets
    the same question under the fail-safe. A gate that has to run Dynamo's
    method first (the pattern shows in its result or its exception) passes the
    handler :func:`replay` or :func:`replay_error` of that outcome as
    ``wrapped``, so the handler, unchanged, sees what it saw before and the
    original still runs once.
    """

    def decorate(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def wrapper(wrapped, instance, args, kwargs):
            state = _state
            outer = state.effects
            state.effects = False

            raised = []

            def original(*a, **k):
                clean = not state.effects  # nothing changed by the handler before this call
                state.effects = True
                try:
                    return wrapped(*a, **k)
                except BaseException as error:
                    if clean:
                        raised.append(error)
                    raise

            try:
                result = handler(original, instance, args, kwargs)
            except Exception as error:
                had_effects = state.effects
                state.effects = outer
                from .dynamo_api import is_dynamo_control_flow

                if is_dynamo_control_flow(error) or isinstance(error, NotConstant) or any(
                        error is seen for seen in raised):
                    # Dynamo's own signal, or what Dynamo's method itself raised before the
                    # handler changed anything (a NotImplementedError that says "not a
                    # constant"): as without the patch. After effects_begin() it still breaks.
                    raise
                _report(patch_name, handler, error, had_effects)
                if had_effects:
                    _break_after_effects(patch_name, handler, error)
                return wrapped(*args, **kwargs)
            except BaseException:
                state.effects = outer
                raise
            state.effects = outer
            if result is DEFER:
                return wrapped(*args, **kwargs)
            return result

        cast(Any, wrapper).__tdcompat_handler__ = handler
        return wrapper

    return decorate


def gate(handler: Handler) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare ``factory(original, handle)`` as the gate in front of ``handler``.

    For a method Dynamo calls for nearly everything it traces. ``factory`` returns
    a function with the exact signature of Dynamo's method, or ``(self, *args,
    **kwargs)`` where that differs between releases (the installer checks it,
    installs ``handler`` alone where it does not fit, and ``installer.unfit_gates()``
    names it: a test holds that list empty on every release) that calls
    ``original(self, ...)`` for every call it can tell is not its pattern and
    ``handle(self, ...)`` (``handler`` under the fail-safe) for the rest. Its test
    must not raise: wrap it in ``try`` and send the call to ``handle`` on any error,
    where the handler meets the same question under the fail-safe.
    """

    def decorate(factory: Callable[..., Any]) -> Callable[..., Any]:
        cast(Any, factory).__tdcompat_gated__ = handler
        return factory

    return decorate


def routed_gate(handler: Handler, build: Callable[..., Any], route: Any,
                own: Optional[Callable[..., Any]] = None) -> Callable[..., Any]:
    """A gate declared as data: ``build(original, handle, route)`` makes it, ``route`` being the
    set of call kinds that ``handler`` may want (what the built gate tests).

    Several patches on one hot method each route a few kinds and send the rest on (every dict
    key Dynamo builds passes ``_HashableTracker.__init__``). The installer merges consecutive
    routed gates with the same ``build`` into one layer built from the union of their routes: a
    call no patch routes pays one test instead of one frame per patch, and a routed call passes
    each patch's own gate in order, reaching the handlers that route it, each deferring what is
    not its pattern. ``own(original, handle)``, if given, is that patch's own gate (alone, or its
    layer in the merge): a finer test than the route, for a routed kind that is common. Alone,
    it is the plain :func:`gate` of ``own`` or of ``build(.., route)``.
    """

    def factory(original: Callable[..., Any], handle: Callable[..., Any]) -> Callable[..., Any]:
        return own(original, handle) if own is not None else build(original, handle, route)

    cast(Any, factory).__tdcompat_gated__ = handler
    cast(Any, factory).__tdcompat_route__ = (build, frozenset(route))
    return factory


def method_name_gate(original: Callable[..., Any], handle: Callable[..., Any], route: Any) -> Callable[..., Any]:
    """The gate on a tracker's ``call_method(tx, name, args, kwargs)``, for :func:`routed_gate`: a
    method named in ``route`` goes to ``handle``, every other straight to Dynamo after one set test.
    Shared, so the patches on one tracker's methods (``ConstDictVariable.call_method``: every dict
    method Dynamo traces) cost one frame per call together."""

    def call_method(self, tx, name, args, kwargs):
        if name not in route:
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


def replay(outcome: Any) -> Callable[..., Any]:
    """A stand-in for ``wrapped`` that returns what a gate's own call of it returned."""

    def wrapped(*args, **kwargs):
        return outcome

    return wrapped


def replay_error(error: BaseException) -> Callable[..., Any]:
    """A stand-in for ``wrapped`` that raises what a gate's own call of it raised."""

    def wrapped(*args, **kwargs):
        raise error

    return wrapped


_reported: set = set()


def _break_after_effects(patch_name: str, handler: Handler, error: BaseException):
    from .dynamo_api import graph_break

    try:
        graph_break(
            "tdcompat patch failed after it had effects",
            f"{patch_name} ({handler.__name__}): {type(error).__name__}: {error}",
            "the handler had already changed the trace; running Dynamo's original would repeat that",
        )
    except Exception as unsupported:  # graph_break always raises
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
