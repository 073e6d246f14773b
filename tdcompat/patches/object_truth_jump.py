"""``if d.keys():`` is taken for an empty dict (a dict view, a ``mappingproxy``) (torch 2.13-2.15).

Symptom: ``if d.keys():``, ``if d.values():``, ``if d.items():``, ``while view:``, ``view and x``, ``if
types.MappingProxyType({}):`` take the branch of a true value when the view (the proxy) is empty: **silently
wrong**, measured on 2.13.0, 2.14.1
and 2.15.0 for a view of a dict passed in, made in the frame, an ``OrderedDict`` or a ``defaultdict``, and of
an instance ``__dict__``. ``bool(view)`` and ``not view`` are right; 2.12 is right for the views (case
``dict_view_truth_jump``).

Root cause: ``generic_jump`` (torch/_dynamo/symbolic_convert.py, the handler of every conditional jump), the
branch for a value that is neither a constant, a tensor, a module, a user object nor a symbolic value,
computes the truth with ``generic_bool`` (2.13-2.14; ``generic_is_true`` on 2.15; the port of CPython's
``PyObject_IsTrue``) and then tests ``truth_fn(result)``: ``result`` is a ``ConstantVariable`` tracker, which
Python takes as true whatever it holds. The user-object branch just above reads ``result.as_python_constant()``.

What the handler accepts: a conditional jump whose value is a dict view (``DictViewVariable`` and its
subclasses) or a ``MappingProxyVariable`` that is not a constant (the other trackers take Dynamo's earlier
branches, which read the truth right). For it, the same call Dynamo makes
(``generic_bool``/``generic_is_true``: its guards, its inlined ``__len__``/``__bool__``) and, where the result
is a constant ``bool``, the jump as Dynamo takes it for a constant: that is ``PyObject_IsTrue``'s answer. A
result that is not a constant (a symbolic length) graph-breaks. An ``assert`` on such a value (Dynamo's
assert rewrite) is left to Dynamo.
"""

from __future__ import annotations

import operator

from ..dynamo_api import CONDITIONAL_JUMPS, graph_break, realize, stack_top_gate
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, routed_gate

NAME = "object-truth-jump"

#: The tracker families whose truth reaches ``generic_jump``'s last generic branch (measured wrong there).
_ROUTE = frozenset({"DictViewVariable", "MappingProxyVariable"})


def _routed(value) -> bool:
    return any(base.__name__ in _ROUTE for base in type(value).__mro__)


def _truth_function():
    from torch._dynamo import symbolic_convert

    return getattr(symbolic_convert, "generic_is_true", None) or getattr(symbolic_convert, "generic_bool", None)


def _assert_follows(tx) -> bool:
    """Is the jump the test of an ``assert`` (``LOAD_ASSERTION_ERROR`` next)? Dynamo rewrites those."""
    try:
        return tx.instructions[tx.instruction_pointer].opname == "LOAD_ASSERTION_ERROR"
    except Exception:  # noqa: BLE001 - cannot tell: leave it to Dynamo
        return True


def _handler(truth_fn, push):
    @fail_safe(NAME)
    def jump(wrapped, instance, args, kwargs):
        """A conditional jump on a dict view or a mappingproxy: taken on ``PyObject_IsTrue``."""
        if kwargs or len(args) != 1 or not instance.stack:
            return DEFER
        value = realize(instance.stack[-1])
        if not _routed(value) or value.is_python_constant():
            return DEFER
        if truth_fn is operator.truth and not push and _assert_follows(instance):
            return DEFER
        is_true = _truth_function()
        if is_true is None:
            return DEFER
        from torch._dynamo.variables import ConstantVariable

        effects_begin()
        result = is_true(instance, value)
        if type(result) is not ConstantVariable or type(result.value) is not bool:
            graph_break("truth of an object at a conditional jump", repr(value),
                        f"its truth is not a constant here: {result}")
        instance.pop()
        if truth_fn(result.value):
            if push:
                instance.push(value)
            instance.jump(args[0])
        return None

    return jump


_HANDLERS = {rule: _handler(*rule) for rule in set(CONDITIONAL_JUMPS.values())}


def _gate_for(handler):
    """What is installed on a conditional jump: a value of any tracker type outside the routed families goes
    straight to Dynamo (one set test)."""
    return routed_gate(handler, stack_top_gate, _ROUTE)


def _generic_branch_misreads() -> bool:
    """Does this torch's ``generic_jump`` compute the truth with ``generic_bool``/``generic_is_true``?"""
    return _truth_function() is not None


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`if d.keys():` / `if d.values():` / `if d.items():` / `while view:` on an **empty** dict's view (also "
         "`if types.MappingProxyType({}):`) **take the true branch** "
         "(silently wrong)",
         "2.13–2.15",
         "(`>=2.13`): taken on the truth Dynamo computes (`generic_bool`), read as a constant"),
    ),
    fixes="`if d.keys():` (values, items views), `if mappingproxy:` take the true branch for an empty one: "
    "generic_jump tests the truth tracker, not its value (silently wrong, torch 2.13-2.15)",
    upstream="torch/_dynamo/symbolic_convert.py: generic_jump (the generic branch tests truth_fn(result) on the "
    "ConstantVariable that generic_bool / generic_is_true returns)",
    mirrors="the same function's UserDefinedObjectVariable branch: truth_fn(result.as_python_constant())",
    torch=">=2.13",
    fixed_upstream="",
    targets=tuple(
        Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", name, _gate_for(_HANDLERS[rule]),
               params=("inst",), optional=True, when=_generic_branch_misreads)
        for name, rule in CONDITIONAL_JUMPS.items()
    ),
    summary="a conditional jump on a dict view or a mappingproxy takes the branch of its truth "
    "(generic_bool's constant), not of the tracker",
    history=(
        ("2.5-2.12", "not this gap: the generic branch reads the length of an iterable tracker"),
        ("2.13+", "`generic_jump` tests `truth_fn(generic_bool(...))`, a tracker: always true (silently wrong for "
         "an empty view)"),
    ),
)
