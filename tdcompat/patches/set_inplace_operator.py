"""``s &= t``, ``s -= t``, ``s ^= t`` on a set rebind it to a new set; ``fs |= t`` on a frozenset is a set (2.5-2.8).

Symptom: ``def f(s): s -= {"a"}`` in compiled code **leaves the caller's set unchanged**, and ``kept = s;
s &= t`` leaves ``kept`` as it was (``s is kept`` False); CPython's ``set.__iand__``/``__isub__``/``__ixor__``
update the set in place. ``fs |= t`` (``&=``, ``-=``, ``^=``) on a frozenset gives a ``set`` (or, on 2.7,
garbage) where CPython gives a new ``frozenset``. Measured with the case ``set_inplace_operator``: silently
wrong on 2.5-2.8 for sets of constants (Dynamo folds ``operator.isub`` over copies of the sets), a graph break
with tensors among the items (``builtin: isub``, "Failed to trace builtin operator"); 2.9 is right.

Root cause: torch/_dynamo/variables/builtin.py: ``BuiltinVariable`` has no ``call_isub``/``call_ixor`` before
2.9 and ``call_iand = call_and_`` (2.6-2.8; absent on 2.5), so the in-place operators run the binary ones: a
new ``SetVariable``, the operand untouched. 2.9 sends them to ``SetVariable.call_method("__isub__")`` & co.,
which update in place. ``s |= t`` on a set is ``dict-ior-in-place``'s.

What the handlers accept: ``BuiltinVariable.call_iand``/``call_isub``/``call_ixor`` (and ``call_ior`` for a
frozenset) ``(tx, a, b)`` where ``b`` is an exact ``SetVariable`` or ``FrozensetVariable`` and ``a`` an exact
mutable ``SetVariable`` of a ``set`` (updated in place, ``a`` returned) or an exact ``FrozensetVariable`` (a new
frozenset; ``frozenset`` has no in-place operators, so CPython runs the binary one). The elements of both must
be all constants whose hash and ``==`` are pure functions of their value (``pure_values.hashes_by_value``) or
all tensors: then Dynamo's membership test (its hashable trackers: value equality for constants, identity for
tensors) is CPython's, and the handler runs CPython's own algorithm on it (``set_intersection_update`` keeps
the copies of the smaller operand, ``b``'s on a tie; ``-=``/``^=`` discard or add ``b``'s items one by one), so
even which copy of an equal pair (``1``/``1.0``) survives is CPython's. Other elements (a mix, NaN, objects)
graph-break (where Dynamo lets a handler break: a call it can fold over constants, NaN included, folds as
before). A set Dynamo built immutable (2.7-2.8's ``a | b`` result) and every other operand (a view, a user
set, a non-set) defer: Dynamo's own result, wrong as before.
"""

from __future__ import annotations

from ..dynamo_api import bind_args, graph_break, is_mutable, realize
from ..pure_values import hashes_by_value
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "set-inplace-operator"


def _comparable(items) -> bool:
    """All constants that hash and compare by value, or all tensors (identity): never a mix."""
    from torch._dynamo.variables import TensorVariable

    constants = tensors = 0
    for vt in items:
        if isinstance(vt, TensorVariable):
            tensors += 1
        elif vt.is_python_constant() and hashes_by_value(vt.as_python_constant()):
            constants += 1
        else:
            return False
    return not (constants and tensors)


def _result(op: str, a: list, b, b_items: list, a_var) -> list:
    """The items of ``a op b`` as CPython picks them (``a_var`` answers membership in ``a``)."""
    if op == "|":
        return a + [vt for vt in b_items if vt not in a_var]
    if op == "&":  # set_intersection: iterate the smaller operand (b on a tie), keep its copies
        if len(b_items) > len(a):
            return [vt for vt in a if vt in b]
        return [vt for vt in b_items if vt in a_var]
    if op == "-":
        return [vt for vt in a if vt not in b]
    return [vt for vt in a if vt not in b] + [vt for vt in b_items if vt not in a_var]


def _in_place(op: str, wrapped, args, kwargs):
    from torch._dynamo.variables.dicts import FrozensetVariable, SetVariable

    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    tx, a, b = bound
    a, b = realize(a), realize(b)
    if type(b) not in (SetVariable, FrozensetVariable) or type(a) not in (SetVariable, FrozensetVariable):
        return DEFER
    frozen = type(a) is FrozensetVariable
    if op == "|" and not frozen:
        return DEFER  # set |= set: dict-ior-in-place's
    a_items = [item.vt for item in a.set_items]
    b_items = [item.vt for item in b.set_items]
    if not frozen and not is_mutable(a):
        return DEFER  # a set Dynamo built immutable (2.7-2.8's `a | b`): it cannot be updated; Dynamo's as before
    if not _comparable(a_items + b_items):
        graph_break("set-inplace-operator", f"{type(a).__name__} {op}= {type(b).__name__}",
                    "an in-place set operator whose items are not all constants or all tensors: Dynamo runs the "
                    "binary operator (a new object), tdcompat cannot prove CPython's result (tdcompat)")
    effects_begin()
    if frozen:
        return FrozensetVariable(_result(op, a_items, b, b_items, a))
    if b is a:  # CPython: s &= s keeps s, s -= s and s ^= s clear it
        if op != "&":
            a.call_method(tx, "clear", [], {})
        return a
    if op == "&":
        keep = _result("&", a_items, b, b_items, a)
        a.call_method(tx, "clear", [], {})
        for vt in keep:
            a.call_method(tx, "add", [vt], {})
        return a
    for vt in b_items:  # set_difference_update / set_symmetric_difference_update: b's items one by one
        if vt in a:
            a.call_method(tx, "discard", [vt], {})
        elif op == "^":
            a.call_method(tx, "add", [vt], {})
    return a


def _gate_for(handler):
    @gate(handler)
    def set_operand_gate(original, handle):
        """What is installed on ``call_iand``/``call_isub``/``call_ixor``/``call_ior``: every left operand but a
        set or frozenset tracker (``x -= 1`` on constants, tensors never get here) goes straight to Dynamo."""
        from torch._dynamo.variables.dicts import FrozensetVariable, SetVariable

        kinds = frozenset({SetVariable, FrozensetVariable})

        def call(self, *args, **kwargs):  # (tx, a, b); the added methods have no signature of their own
            if len(args) != 3 or type(args[1]) not in kinds:
                return original(self, *args, **kwargs)
            return handle(self, *args, **kwargs)

        return call

    return set_operand_gate


@fail_safe(NAME)
def _call_iand(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_iand(tx, a, b)``: ``a &= b``."""
    return _in_place("&", wrapped, args, kwargs)


@fail_safe(NAME)
def _call_isub(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_isub(tx, a, b)`` (added): ``a -= b``."""
    return _in_place("-", wrapped, args, kwargs)


@fail_safe(NAME)
def _call_ixor(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_ixor(tx, a, b)`` (added): ``a ^= b``."""
    return _in_place("^", wrapped, args, kwargs)


@fail_safe(NAME)
def _call_ior(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_ior(tx, a, b)``: ``fs |= b`` on a frozenset (a set's is dict-ior-in-place's)."""
    return _in_place("|", wrapped, args, kwargs)


_BUILTIN = "torch._dynamo.variables.builtin"

PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`s -= t` / `s &= t` / `s ^= t` on a set passed in: **the caller's set is not updated** (`kept = s; "
         "s -= t` leaves `kept` unchanged); `fs |= t` on a frozenset is a `set`",
         "2.5–2.8",
         "(`<2.9`): updated in place, a frozenset stays a frozenset, as CPython"),
    ),
    fixes="s &= t, s -= t, s ^= t on a set rebind it to a new set (the caller's set and aliases unchanged); "
    "fs |= t (&=, -=, ^=) on a frozenset gives a set (silently wrong, torch 2.5-2.8)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_iand (= call_and_ on 2.6-2.8), no "
    "call_isub/call_ixor; call_ior (a frozenset)",
    mirrors="torch 2.9: SetVariable.call_method('__iand__'/'__isub__'/'__ixor__') updates in place (BuiltinVariable "
    "sends the in-place operators there); CPython Objects/setobject.c set_intersection_update, "
    "set_difference_update_internal, set_symmetric_difference_update",
    torch="<2.9",
    fixed_upstream="2.9: the in-place set operators update the set",
    targets=(
        Target(_BUILTIN, "BuiltinVariable", "call_iand", _gate_for(_call_iand), params=("tx", "a", "b"),
               optional=True),  # 2.6-2.8: call_iand = call_and_
        Target(_BUILTIN, "BuiltinVariable", "call_iand", _gate_for(_call_iand), added=True, optional=True),  # 2.5
        Target(_BUILTIN, "BuiltinVariable", "call_isub", _gate_for(_call_isub), added=True),
        Target(_BUILTIN, "BuiltinVariable", "call_ixor", _gate_for(_call_ixor), added=True),
        Target(_BUILTIN, "BuiltinVariable", "call_ior", _gate_for(_call_ior), params=("tx", "a", "b"),
               optional=True),  # 2.6-2.8; on 2.5 dict-ior-in-place adds it, and this chains on it
    ),
    summary="`s &= t` / `-=` / `^=` update a set in place; `fs |= t` and friends on a frozenset give a frozenset",
    history=(
        ("2.5-2.8", "in-place set operators run the binary ones: a new set (constants folded over copies); a "
         "frozenset's result a set"),
        ("2.9+", "right: SetVariable's in-place dunders"),
    ),
)
