"""A call Dynamo skips on a method descriptor crashes the compile instead of graph-breaking (torch 2.5-2.6).

Symptom: ``Sub.get(Sub(a=v), "a")`` for ``class Sub(dict)`` (an unbound ``dict`` method called on a dict
subclass made in the frame), or any call Dynamo refuses whose callee is a method descriptor (``dict.get``,
``list.append``, ... looked up on a class): ``InternalTorchDynamoError: AttributeError: 'method_descriptor'
object has no attribute '__module__'``, also without ``fullgraph``: the user's program stops. Found by the
differential fuzzer on 2.5.1 (fresh seed 703000370, program 703002479006529: a ``__dict__`` pop that
tdcompat traces let the frame reach the call, where plain torch had skipped the frame); measured on 2.5.1
and 2.6.0 (2.7 builds the message with ``getattr(value, "__module__", None)``).

Root cause: ``SkipFunctionVariable.call_function`` (torch/_dynamo/variables/functions.py) reaches its last
branch to refuse the call (``unimplemented(msg)``) and builds the message from ``self.value.__module__``,
which a method descriptor does not have.

The fix accepts nothing: an ``AttributeError`` about ``__module__`` raised by Dynamo's method becomes the
graph break Dynamo meant to raise (the branch runs no user code and records nothing before it fails).
"""

from __future__ import annotations

from ..dynamo_api import graph_break
from ..spec import Patch, Target
from ..wrappers import fail_safe

NAME = "skipped-descriptor-call"


@fail_safe(NAME)
def _call_function(wrapped, instance, args, kwargs):
    """``SkipFunctionVariable.call_function(tx, args, kwargs)``."""
    try:
        return wrapped(*args, **kwargs)
    except AttributeError as error:
        if "__module__" not in str(error) or hasattr(getattr(instance, "value", None), "__module__"):
            raise
        value = getattr(instance, "value", None)
        graph_break("call of a skipped function", f"{getattr(value, '__qualname__', value)}",
                    "Dynamo does not trace this callable (a method descriptor)")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`Sub.get(Sub(a=v), 'a')` for `class Sub(dict)`, or another refused call of a method descriptor: "
         "**the compile crashes** (`InternalTorchDynamoError: AttributeError: 'method_descriptor' object has "
         "no attribute '__module__'`), also without `fullgraph` (tdcompat: a graph break)",
         "2.5–2.6",
         "(`<2.7`)"),
    ),
    fixes="a refused call of a method descriptor (`Sub.get(Sub(a=v), 'a')`) crashes the compile "
    "(AttributeError: 'method_descriptor' object has no attribute '__module__'), also without fullgraph "
    "(torch 2.5-2.6)",
    upstream="torch/_dynamo/variables/functions.py: SkipFunctionVariable.call_function (the refusal message)",
    mirrors="torch 2.7: the message reads getattr(value, '__module__', None)",
    torch="<2.7",
    fixed_upstream="2.7: SkipFunctionVariable.call_function builds its message without value.__module__",
    targets=(
        Target("torch._dynamo.variables.functions", "SkipFunctionVariable", "call_function", _call_function,
               params=("tx", "args", "kwargs")),
    ),
    summary="a refused call of a method descriptor graph-breaks instead of crashing on its message",
    proven_by="tests/test_skipped_descriptor_call.py::test_without_the_patch_the_compile_crashes",
    history=(
        ("2.5-2.6", "`AttributeError: 'method_descriptor' object has no attribute '__module__'` out of "
         "`SkipFunctionVariable.call_function`, also without fullgraph"),
        ("2.7+", "a clean graph break"),
    ),
)
