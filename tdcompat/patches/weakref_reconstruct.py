"""weakref-reconstruct: a ``weakref.ref`` made inside the compiled region can leave it.

Symptom (torch 2.6): ``Unsupported: reconstruct: WeakRefVariable()``. tensordict
0.7 records ``out._last_op = (name, (args, kwargs, weakref.ref(self)))`` on every
``to_module``/``lock_`` result (``tensordict.utils._as_context_manager``), so
documented cells 1 and 3 stop at the end of the frame, when Dynamo writes that
attribute back and has to rebuild the weak reference in the output bytecode.

Root cause: Dynamo's ``WeakRefVariable`` (``user_defined.py``, later ``misc.py``) did
not model a weak reference made in the region: upstream added the ``weakref.ref``
call, then ``reconstruct``, then the callback, one release at a time.
Version history: ``PATCH.history`` (rendered in docs/compatibility.md).

The patch wraps one method, ``UserDefinedClassVariable.call_function``, and only
for calls of ``weakref.ref`` itself with a referent whose type accepts weak
references: it returns a weak-reference tracker that has the upstream
``reconstruct`` (``weakref.ref(referent[, callback])``, as 2.8 emits it) and keeps
the callback. On 2.6 that tracker subclasses Dynamo's own ``WeakRefVariable`` (so
every ``isinstance`` check still holds); on 2.5 it is the same shape on
``VariableTracker``. Weak references read from a source are left to Dynamo (they
already reconstruct from their source on both releases).
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "weakref-reconstruct"

_TRACKER = None


def _tracker_class():
    """The tracker type, built once on first use (it needs torch internals)."""
    global _TRACKER
    if _TRACKER is not None:
        return _TRACKER
    import importlib
    import weakref

    from torch._dynamo.bytecode_transformation import create_call_function
    from torch._dynamo.variables import base

    misc = importlib.import_module("torch._dynamo.variables.misc")
    parent = getattr(misc, "WeakRefVariable", None)
    if parent is None or not hasattr(parent, "build"):  # 2.5: no in-frame weakref tracker
        parent = base.VariableTracker

    class InFrameWeakRefVariable(parent):
        """``weakref.ref(referent[, callback])`` made in the compiled region."""

        def __init__(self, referent_vt, callback_vt=None, **options):
            base.VariableTracker.__init__(self, **options)
            self.referent_vt = referent_vt
            self.callback_vt = callback_vt

        def python_type(self):
            return weakref.ReferenceType

        def call_function(self, tx, args, kwargs):
            return self.referent_vt

        def reconstruct(self, codegen):
            # pytorch/pytorch#148083 + #155761: weakref.ref(referent[, callback])
            codegen.add_push_null(lambda: codegen.load_import_from("weakref", "ref"))
            codegen(self.referent_vt)
            nargs = 1
            if self.callback_vt is not None:
                codegen(self.callback_vt)
                nargs = 2
            codegen.extend_output(create_call_function(nargs, False))

        def __repr__(self):
            return f"WeakRefVariable({self.referent_vt!r})"

    InFrameWeakRefVariable.__qualname__ = "tdcompat.InFrameWeakRefVariable"
    _TRACKER = InFrameWeakRefVariable
    return _TRACKER


def _weakrefable(vt) -> bool:
    """False only when the referent's type is known not to take weak references
    (``weakref.ref(1)`` raises in eager): then Dynamo's own path decides."""
    try:
        typ = vt.python_type()
    except Exception:  # noqa: BLE001 - unknown type: as upstream, accept
        return True
    return not isinstance(typ, type) or typ.__weakrefoffset__ != 0


@fail_safe(NAME)
def _call_function(wrapped, instance, args, kwargs):
    import weakref

    if getattr(instance, "value", None) is not weakref.ref:
        return DEFER
    if len(args) == 3 and not kwargs:
        tx, call_args, call_kwargs = args
    else:
        return DEFER
    if call_kwargs or not 1 <= len(call_args) <= 2:
        return DEFER
    referent = call_args[0]
    if not _weakrefable(referent):
        return DEFER
    callback = call_args[1] if len(call_args) == 2 else None
    if callback is not None and callback.is_python_constant() and callback.as_python_constant() is None:
        callback = None
    return _tracker_class()(referent, callback)


def _probe() -> bool:
    """The gap is there while Dynamo's WeakRefVariable cannot reconstruct itself
    with its callback (no ``callback_vt`` before 2.8)."""
    import inspect

    from torch._dynamo.variables import misc

    tracker = getattr(misc, "WeakRefVariable", None)
    return tracker is None or "callback_vt" not in inspect.signature(tracker.__init__).parameters


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: reconstruct: WeakRefVariable()` (tensordict 0.7), `ReferenceType.__new__`; a '
             '`weakref.ref(obj, callback)` made in compiled code comes back without its callback',
         '2.5–2.6; callback lost on 2.7',
         '(`<2.8`)'),
    ),
    fixes="Unsupported: reconstruct: WeakRefVariable() (2.6; tensordict 0.7 _last_op weakref); "
    "unsupported builtin None.ReferenceType.__new__ (2.5); weakref callback silently dropped (2.7)",
    upstream="torch/_dynamo/variables/misc.py: WeakRefVariable.reconstruct "
    "(entry: user_defined.py: UserDefinedClassVariable.call_function for weakref.ref)",
    mirrors="pytorch/pytorch PR #148083 (WeakRefVar reconstruct), #155761 (callback), #139914 (weakref.ref call)",
    torch="<2.8",
    fixed_upstream="2.8: WeakRefVariable reconstructs with its callback",
    targets=(
        Target(
            "torch._dynamo.variables.user_defined",
            "UserDefinedClassVariable",
            "call_function",
            _call_function,
            params=("tx", "args", "kwargs"),
        ),
    ),
    requires=(
        "torch._dynamo.bytecode_transformation:create_call_function",
        "torch._dynamo.codegen:PyCodegen.add_push_null",
        "torch._dynamo.codegen:PyCodegen.load_import_from",
    ),
    probe=_probe,
    summary="weakref.ref(...) made in the compiled region can be returned/stored (rebuilt as weakref.ref(referent))",
    history=(
        ("2.5",
         "`weakref.ref(obj)` cannot be called in the compiled region (`unsupported builtin "
         "None.ReferenceType.__new__`): 2.5's `WeakRefVariable` only models weak references from a source. "
         "tensordict 0.6 keeps strong references, so only code that makes weak references itself is hit "
         "(tensordict 0.7 requires torch >= 2.6)"),
        ("2.6",
         "`weakref.ref(...)` traces (pytorch/pytorch#139914), dropping a callback, but `WeakRefVariable` has no "
         "`reconstruct`: one that escapes (returned, stored on an object, in a container that escapes) is "
         "`Unsupported: reconstruct: WeakRefVariable()`, e.g. tensordict 0.7's `_last_op` (documented cells 1 "
         "and 3)"),
        ("2.7",
         "`reconstruct` = `weakref.ref(referent)` (pytorch/pytorch#148083), but the callback is still dropped at "
         "the call: `weakref.ref(obj, cb)` that escapes comes back without its callback (silently wrong)"),
        ("2.8+", "fixed upstream: `WeakRefVariable` keeps the callback (`callback_vt`, pytorch/pytorch#155761)"),
    ),
)
