"""A graph break inside ``[a, *b]`` / ``{a, *b}`` crashes the resumed frame (torch 2.5).

Symptom: ``out.append([x.sum(), *g()])`` or ``({*g()}, 2)``, where the call ``g()`` graph-breaks, stops the
user's program with a bare ``AssertionError`` from the compile of the resumed frame, also without
``fullgraph``. Measured on 2.5.1 for list and set displays with unpacking (dict displays, ``f(**d)``, list
appends and comprehensions resume fine); 2.6 is right. A program that compiles without tdcompat can meet it
when a tdcompat patch graph-breaks at such a call (a fresh 2.5.1 fuzz seed, 1955387548, found one: a
``[*filter(None, vars(o))]`` that ``dunder-dict-views`` refuses, inside a tuple display). Measured with
``tests/test_resume_display_extend.py``.

Root cause: torch/_dynamo/symbolic_convert.py ``InstructionTranslatorBase.LIST_EXTEND`` and ``SET_UPDATE``
``assert obj.mutable_local`` on the list or set being built. After a graph break at the call inside the
display, the half-built container is on the stack, handed to the resume function as an argument; there it is
an input, wrapped without ``mutable_local`` on 2.5, and the assertion fails. 2.6 asserts ``obj.is_mutable()``,
true for an input tracked for mutation.

What the handlers accept: ``LIST_EXTEND`` / ``SET_UPDATE`` whose target is a ``ListVariable`` / ``SetVariable``
without ``mutable_local``, the one shape that asserts. They graph-break there (``Unsupported``), which
``step()`` turns into a graph break at this instruction: the graph so far is compiled and the rest of the frame
runs in CPython, which extends the real list. Nothing is traced differently. Any other target (the usual
display built in the frame) goes straight to Dynamo through the gate.
"""

from __future__ import annotations

from ..dynamo_api import graph_break
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "resume-display-extend"


def _target(self, inst):
    """The container ``LIST_EXTEND``/``SET_UPDATE`` extends: below the iterable on top of the stack."""
    stack = self.stack
    arg = getattr(inst, "arg", None)
    if type(arg) is not int or not 0 < arg < len(stack):
        return None
    return stack[-arg - 1]


def _refuse(instance, args, opname: str) -> None:
    target = _target(instance, args[0]) if len(args) == 1 else None
    if target is None or getattr(target, "mutable_local", True):
        return
    effects_begin()
    graph_break(f"{opname} into a container from before a graph break", f"{opname} {target}",
                "this Dynamo asserts that the container is local to the frame; after a graph break inside the "
                "display it is the resume function's input: tdcompat breaks here, and CPython extends it")


@fail_safe(NAME)
def _extend(wrapped, instance, args, kwargs):
    """``InstructionTranslatorBase.LIST_EXTEND(inst)`` / ``SET_UPDATE(inst)``."""
    _refuse(instance, args, getattr(args[0], "opname", "LIST_EXTEND") if args else "LIST_EXTEND")
    return DEFER


def _extend_gate_for(name: str):
    @gate(_extend)
    def factory(original, handle):
        def handler(self, inst):
            stack, arg = self.stack, inst.arg  # the container sits below the iterable on top of the stack
            if type(arg) is int and 0 < arg < len(stack) and stack[-arg - 1].mutable_local:
                return original(self, inst)
            return handle(self, inst)  # (an odd shape too: the handler reads it again and defers)

        handler.__name__ = handler.__qualname__ = name
        return handler

    return factory


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("a graph break inside `[a, *g()]` / `{a, *g()}`: `AssertionError` from the resumed frame's compile "
         "(the program stops, also without `fullgraph`)", "2.5", "(`<2.6`)"),
    ),
    fixes="a graph break inside a list or set display with unpacking crashed the resumed frame (AssertionError)",
    upstream="torch/_dynamo/symbolic_convert.py: InstructionTranslatorBase.LIST_EXTEND, "
    "InstructionTranslatorBase.SET_UPDATE",
    mirrors="torch 2.6: LIST_EXTEND/SET_UPDATE assert obj.is_mutable() (an input tracked for mutation passes)",
    torch="<2.6",
    fixed_upstream="2.6: the display's container checked with is_mutable()",
    targets=(
        Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", "LIST_EXTEND",
               _extend_gate_for("LIST_EXTEND"), params=("inst",)),
        Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", "SET_UPDATE",
               _extend_gate_for("SET_UPDATE"), params=("inst",)),
    ),
    proven_by="tests/test_resume_display_extend.py::test_without_the_patch_the_resumed_frame_crashes",
    summary="a graph break inside [a, *b] / {a, *b} breaks cleanly where 2.5's resumed frame asserted",
    history=(
        ("2.5", "`assert obj.mutable_local` on the display's container: an input of the resume function fails it"),
        ("2.6+", "right: `obj.is_mutable()`"),
    ),
)
