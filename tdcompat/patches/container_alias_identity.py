"""``e = d; e is d`` is ``False`` for a dict, set or frozenset of constants (torch 2.5-2.6).

Symptom: ``d is d``, ``alias is d``, ``d.__ior__(b) is d``, ``OrderedDict.__ior__(od, b) is od`` where ``d``
is a dict (``OrderedDict``, set, frozenset) whose items are constants: ``False`` in compiled code (``is not``:
``True``), silently; with a tensor among the items a graph break (``builtin: is_ [ConstDictVariable,
ConstDictVariable]``). Measured on 2.5.1 and 2.6.0 with the case ``container_alias_identity``; 2.7 is right.

Root cause: torch/_dynamo/variables/builtin.py, ``BuiltinVariable.call_function`` constant-folds
``operator.is_`` over ``as_python_constant()`` of both operands, which builds a new dict (set) for each: two
copies are never the same object. 2.7 added ``handle_is`` to the comparison handlers (the same tracker is
the same object) ahead of the fold.

What the handler accepts: the ``is`` / ``is not`` of a Python ``is`` expression
(``InstructionTranslatorBase.IS_OP``, which calls ``self.COMPARE_OP``; the bytecode dispatch table holds the
other comparisons, which never reach this handler) where both operands on the stack are the *same* tracker
object and that tracker stands for a ``dict``, ``OrderedDict``, ``defaultdict``, ``set``, ``frozenset`` or
``list`` (a realized dict/set/list tracker, or a lazy one whose value is one of those types, not realized:
no guard is needed). It pushes ``True`` for ``is`` (``False`` for ``is not``). Sound: Dynamo keeps one
tracker per container object (a container made in the frame gets one when it is built and is mutated in
place; an input's is found again through ``side_effects`` by ``id``, a second source of it gets the same
tracker under a duplicate-input guard), so one tracker on both sides is one object on both sides, which is
what ``is`` tests. Distinct trackers are deferred: Dynamo's own answer (the fold: ``False``) stands, as does
``operator.is_(a, b)`` spelled as a call.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, peek
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "container-alias-identity"

#: Dynamo's trackers of the containers whose identity it folds wrongly on 2.5-2.6.
_TRACKERS = frozenset({"ConstDictVariable", "DefaultDictVariable", "SetVariable", "FrozensetVariable",
                       "ListVariable"})
#: The same containers, for a lazy tracker not realized yet (its value's exact type).
_TYPES = (dict, collections.OrderedDict, collections.defaultdict, set, frozenset, list)


def _container(vt) -> bool:
    tracker, value = peek(vt)
    if tracker is None:
        return type(value) in _TYPES
    return type(tracker).__name__ in _TRACKERS


@fail_safe(NAME)
def _compare_op(wrapped, instance, args, kwargs):
    """``InstructionTranslatorBase.COMPARE_OP(inst)`` for ``is`` / ``is not`` (from ``IS_OP``)."""
    from torch._dynamo.variables import ConstantVariable

    bound = bind_args(args, kwargs, ("inst",))
    if bound is None or getattr(bound[0], "argval", None) not in ("is", "is not") or len(instance.stack) < 2:
        return DEFER
    left, right = instance.stack[-2], instance.stack[-1]
    if left is not right or not _container(left):
        return DEFER
    effects_begin()
    instance.popn(2)
    instance.push(ConstantVariable.create(bound[0].argval == "is"))
    return None


@gate(_compare_op)
def _compare_op_gate(original, handle):
    """What is installed on ``COMPARE_OP``: reached through ``IS_OP`` only (the dispatch table holds the
    unpatched method for the comparison bytecode itself); anything but the same object on both sides goes
    straight to Dynamo after one identity test."""

    def COMPARE_OP(self, inst):  # Dynamo's name for the opcode handler
        stack = self.stack
        if len(stack) < 2 or stack[-1] is not stack[-2]:
            return original(self, inst)
        return handle(self, inst)

    return COMPARE_OP


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`e = d; e is d` / `d is d` / `d.__ior__(b) is d` **is False** for a dict, OrderedDict, set or frozenset "
         "of constants (`is not`: True); with a tensor among the items: graph break "
         "`builtin: is_ [ConstDictVariable, ConstDictVariable]`",
         "2.5–2.6",
         "(`<2.7`)"),
    ),
    fixes="`e = d; e is d` is False for a dict / set of constants (silently wrong), a graph break with tensors "
    "among the items (torch 2.5-2.6)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_function (the constant fold of "
    "operator.is_); the handler sits on torch/_dynamo/symbolic_convert.py: InstructionTranslatorBase.COMPARE_OP",
    mirrors="torch 2.7: BuiltinVariable's comparison handlers gained handle_is (the same tracker is the same "
    "object)",
    torch="<2.7",
    fixed_upstream="2.7: handle_is in BuiltinVariable._binop_handlers' comparison handlers",
    targets=(
        Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", "COMPARE_OP", _compare_op_gate,
               params=("inst",)),
    ),
    summary="`x is y` where both are the same dict/set/list tracker is True (2.5-2.6 folded it over copies)",
    history=(
        ("2.5-2.6", "`is` on two dict/set trackers folds over `as_python_constant()` copies: `d is d` is False "
         "(constants), a graph break (tensors among the items)"),
        ("2.7+", "right: `handle_is` answers the same tracker with True"),
    ),
)
