"""A cache entry freed while Dynamo walks the cache entries of the frame it recompiles (torch 2.5).

Root cause: an ``ID_MATCH`` guard keeps a weak reference to the object it matches, with a
``weakref.finalize`` that calls ``CheckFunctionManager.invalidate`` (torch/_dynamo/guards.py) when the
object dies; on 2.5 that removes the cache entry from its code's list at once
(``ExtraState::invalidate``, torch/csrc/dynamo/extra_state.cpp, erases it from the ``std::list``). When
the object dies *while a frame is being compiled*, Python code of Dynamo may be walking that list: to
size the cache (``compute_cache_size``) and to say why it recompiles
(``get_and_maybe_log_recompilation_reason``, which runs ``check_verbose`` on each entry's guard manager,
Python code in which a cycle can be collected). The walk then reads the freed entry: ``AttributeError:
'GuardManager' object has no attribute 'global_scope'`` or a segmentation fault. Measured on 2.5.1:
a graph break inside a call expression (``out.append(o.__dict__.pop(k, v))``) ID-matches the bound
method ``out.append`` on the stack, which dies between calls; a second call that recompiles the frame
before it (a guard of ``getattr-missing-guard`` failing, a class seen for the first time) crashes the
interpreter (fresh fuzz seed 486679057, program 486680517039463; ``tests/test_recompile_cache_invalidation.py``).
2.6 replaces the entry's guard manager by a ``DeletedGuardManagerWrapper`` and keeps the entry, so a walk
never meets freed memory (the same program runs clean on 2.6.0 and 2.8.0).

The fix accepts every invalidation and changes only its time: one requested while
``ConvertFrameAssert.__call__`` runs (the whole compile of a frame, recompile walk included) is run when
that call returns or raises, before control goes back to the C++ frame evaluator. That is sound because no
cache entry is looked up while a frame compiles (the evaluator runs the callback with the callback unset:
nothing guarded can run), so an entry whose object died cannot be used in the meantime, and the entry is
removed before the next lookup, as on 2.5 without the patch. Invalidations outside a compile run at once
(Dynamo's). An error of a deferred invalidation goes where a finalizer's would (``sys.excepthook``).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, List

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate

NAME = "recompile-cache-invalidation"

#: How many ``ConvertFrameAssert.__call__`` are running (a compile can start another: nested frames).
_compiling = 0
#: The invalidations requested meanwhile, in order: each runs Dynamo's own ``invalidate``.
_deferred: List[Callable[[], Any]] = []


@fail_safe(NAME)
def _invalidate(wrapped, instance, args, kwargs):
    """``CheckFunctionManager.invalidate()``: deferred while a frame compiles, else Dynamo's. A deferred one is
    asked again of the manager when the compile ends, when this handler lets it through."""
    if not _compiling:
        return DEFER
    _deferred.append(lambda: instance.invalidate(*args, **kwargs))
    return None


def _enter() -> None:
    global _compiling
    _compiling += 1


def _leave() -> None:
    """One compile ended: the last one to end runs the invalidations they requested, in order."""
    global _compiling
    _compiling -= 1
    while not _compiling and _deferred:
        invalidate = _deferred.pop(0)
        try:
            invalidate()
        except Exception:  # noqa: BLE001 - what weakref.finalize does with its callback's error
            sys.excepthook(*sys.exc_info())


@fail_safe(NAME)
def _compile_frame(wrapped, instance, args, kwargs):
    """``ConvertFrameAssert.__call__(frame, cache_entry, hooks, frame_state)``: the invalidations its compile
    requested run when it ends, before the evaluator looks up or adds a cache entry. (Installed as the
    handler only where the gate below does not fit: the gate does the same in one frame.)"""
    _enter()
    try:
        return wrapped(*args, **kwargs)
    finally:
        _leave()


@gate(_compile_frame)
def _compile_frame_gate(original, handle):
    """What is installed on ``ConvertFrameAssert.__call__``: :func:`_compile_frame` in one frame, since this one
    stays on the stack through the whole trace (every ``traceback.extract_stack`` Dynamo makes reads each
    frame's source line: three frames of the fail-safe cost 2.5.1's neutral MLP step +360 calls).
    The handler is not called: there is nothing to decide per call."""

    def __call__(self, *args, **kwargs):
        _enter()
        try:
            return original(self, *args, **kwargs)
        finally:
            _leave()

    return __call__


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`Segmentation fault` or `AttributeError: 'GuardManager' object has no attribute 'global_scope'` when a "
         "frame recompiles after an object an `ID_MATCH` guard matched died during the compile (e.g. a graph "
         "break inside `out.append(...)`, then a call that recompiles the frame before it)",
         "2.5", "(`<2.6`)"),
    ),
    fixes="a cache entry invalidated (its ID_MATCH'd object died) while Dynamo walks the cache entries of the "
    "frame it recompiles: the walk reads freed memory (segfault)",
    upstream="torch/_dynamo/guards.py: CheckFunctionManager.invalidate; torch/csrc/dynamo/extra_state.cpp: "
    "ExtraState::invalidate (erases the entry)",
    mirrors="2.6: an invalidated entry is kept, with a DeletedGuardManagerWrapper as its guard manager",
    torch="<2.6",
    fixed_upstream="2.6: an invalidated cache entry keeps its place (DeletedGuardManagerWrapper)",
    targets=(
        Target("torch._dynamo.guards", "CheckFunctionManager", "invalidate", _invalidate),
        Target("torch._dynamo.convert_frame", "ConvertFrameAssert", "__call__", _compile_frame_gate,
               params=("frame", "cache_entry")),
    ),
    summary="an invalidation requested while a frame compiles runs when the compile ends",
    proven_by="tests/test_recompile_cache_invalidation.py::test_crashes_on_2_5_without_the_patch",
    history=(
        ("2.5", "ExtraState::invalidate erases the entry at once: a walk of the list during a compile reads "
         "freed memory (segfault)"),
        ("2.6+", "the entry is kept, its guard manager replaced by DeletedGuardManagerWrapper"),
    ),
)
