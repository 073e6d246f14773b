"""``T()`` of a ``tuple`` subclass with no argument crashes the compile (torch 2.8-2.13).

Symptom: ``class T(tuple): ...`` and ``t = T()`` in compiled code: ``InternalTorchDynamoError: IndexError:
list index out of range`` (2.8-2.10) or ``AssertionError: init_args must be provided when tuple_vt is None``
(2.11-2.13), also without ``fullgraph``: the user's program stops. Measured on 2.8.0-2.13.0 (2.7 breaks
cleanly under ``fullgraph`` and runs without it; 2.14 is right).

Root cause: ``UserDefinedTupleVariable.__init__`` (torch/_dynamo/variables/user_defined.py) emulates
``tuple.__new__`` for an object made in the frame from ``init_args[0]``, the iterable passed to the class,
and has no branch for no argument (``tuple.__new__(T)`` is the empty tuple). 2.14 builds an empty
``TupleVariable`` when ``init_args`` is empty.

What the handler accepts: a construction with no items tracker (``tuple_vt`` None), no source (an object
made in the frame) and no ``init_args`` (``None`` or empty). It passes Dynamo's own constructor an empty
``TupleVariable`` as the items, which is what ``tuple.__new__(T)`` makes in CPython. Everything else (an
argument given, an input's tracker built by ``VariableBuilder``) defers.
"""

from __future__ import annotations

from ..dynamo_api import new_object_kwargs
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "tuple-subclass-no-args"


@fail_safe(NAME)
def _init(wrapped, instance, args, kwargs):
    """``UserDefinedTupleVariable.__init__(value, tuple_vt=None, init_args=None, **kwargs)``."""
    if len(args) != 1 or kwargs.get("tuple_vt") is not None or kwargs.get("init_args"):
        return DEFER
    if kwargs.get("source") is not None:
        return DEFER
    from torch._dynamo.variables import TupleVariable

    effects_begin()
    rest = {k: v for k, v in kwargs.items() if k != "tuple_vt"}
    return wrapped(args[0], tuple_vt=TupleVariable([], **new_object_kwargs()), **rest)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`t = T()` for `class T(tuple)` in compiled code: **the compile crashes** "
         "(`InternalTorchDynamoError: IndexError: list index out of range`; from 2.11 `AssertionError: "
         "init_args must be provided when tuple_vt is None`), also without `fullgraph`",
         "2.8–2.13",
         "(`>=2.8,<2.14`)"),
    ),
    fixes="`T()` of a tuple subclass with no argument crashes the compile (IndexError / AssertionError), also "
    "without fullgraph (torch 2.8-2.13)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedTupleVariable.__init__",
    mirrors="torch 2.14: UserDefinedTupleVariable.__init__ builds an empty TupleVariable for no init_args",
    torch=">=2.8,<2.14",
    fixed_upstream="2.14: an empty tuple for T() with no argument",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedTupleVariable", "__init__", _init,
               params=("value", "tuple_vt", "init_args")),
    ),
    requires=("torch._dynamo.variables:TupleVariable",),
    summary="T() of a tuple subclass with no argument is the empty tuple, as tuple.__new__(T)",
    history=(
        ("2.5-2.7", "a tuple subclass made in the frame is a user object Dynamo does not build (a graph break)"),
        ("2.8-2.10", "`T()`: `InternalTorchDynamoError: IndexError` (`init_args[0]`), also without fullgraph"),
        ("2.11-2.13", "`T()`: `AssertionError: init_args must be provided when tuple_vt is None`"),
        ("2.14+", "right"),
    ),
)
