"""``s.__and__(d.keys())``, ``s.__rand__(d.items())``: a set's operator dunder called with a dict view (2.12-2.13).

Symptom: an explicit call of a ``set``/``frozenset`` operator dunder with a ``dict_keys``/``dict_items`` view
(``s.__and__(d.keys())``, ``s.__iand__(d.items())``, ``s.__rsub__(d.keys())``, ...) returns ``NotImplemented``
in CPython (``set_and`` & co. take only sets: ``PyAnySet_Check``), and the in-place ones leave ``s`` alone.
Compiled, **2.13 computes the operation** for ten of the twelve (``__or__``/``__ror__`` are right) and the
in-place forms update ``s``; 2.12 computes all twelve natively, and with tdcompat the four reflected ones (its
forward ones are ``set-view-operator``'s graph break). Silently wrong, measured with the case
``set_dunder_view_operand`` and tests/test_set_dunder_view_operand.py (4 x 3 operators x keys/items x set/frozenset);
2.9-2.11 right or a break, 2.14 right (its dunders go through the number slots' ``NotImplemented`` checks).

Root cause: torch/_dynamo/variables/sets.py: ``SetVariable.call_method`` answers the operator dunders with
the set methods (``__iand__`` -> ``intersection_update``, ``__rand__`` -> the operand's ``__and__``) for any
set, user set or dict view operand; 2.13 dispatches the operators themselves through the number slots
(``nb_and_impl``: ``pyanyset_check``), so only the explicit dunder call is left on the old path.

What the handler accepts: ``SetVariable.call_method(tx, name, [view], {})`` for the forward, in-place and
reflected operator dunders (2.12: the reflected four only, the forward ones being ``set-view-operator``'s),
where ``self`` is an exact ``SetVariable`` or ``FrozensetVariable`` (a frozenset reaches it through
``super()``), the operand an exact ``DictKeysVariable`` or ``DictItemsVariable``, and the call is not made by
an operator instruction or an ``operator`` function (``dynamo_api.current_binary_operator`` is None and
``calling_builtin`` is not ``BuiltinVariable``'s: an explicit ``s.__and__(view)``). It answers
``NotImplemented``. Sound: CPython's answer depends on the operand's type only (a view is never a set), which
the tracker's exact class fixes; nothing is read, so nothing needs a guard; no effect is recorded. A ``set``
subclass's inherited dunder reaches it on the subclass's set tracker (CPython runs the same ``set`` slot: also
``NotImplemented``; a subclass's own dunder is inlined and reaches it only through ``super()``). A user view or
set operand and every other call defer.
"""

from __future__ import annotations

from ..dynamo_api import bind_args, build_sourceless, calling_builtin, current_binary_operator, or_through_number_slots
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, method_name_gate, routed_gate

NAME = "set-dunder-view-operand"

_REFLECTED = frozenset({"__ror__", "__rand__", "__rsub__", "__rxor__"})
_FORWARD = frozenset({"__or__", "__and__", "__sub__", "__xor__", "__ior__", "__iand__", "__isub__", "__ixor__"})


@fail_safe(NAME)
def _explicit_dunder(wrapped, instance, args, kwargs):
    """``SetVariable.call_method(tx, "__and__" | "__rand__" | ..., [dict view], {})``, called explicitly."""
    from torch._dynamo.variables import FrozensetVariable, SetVariable
    from torch._dynamo.variables.dicts import DictItemsVariable, DictKeysVariable

    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if name not in _REFLECTED and not (name in _FORWARD and or_through_number_slots()):
        return DEFER  # 2.12's forward dunders: set-view-operator's
    if call_kwargs or len(call_args) != 1 or type(instance) not in (SetVariable, FrozensetVariable):
        return DEFER
    if type(call_args[0]) not in (DictKeysVariable, DictItemsVariable):
        return DEFER
    if current_binary_operator(tx) is not None or calling_builtin() is not None:
        return DEFER  # reached from `s & view` / operator.and_(s, view): Dynamo's operator machinery
    return build_sourceless(tx, NotImplemented)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`s.__and__(d.keys())`, `s.__iand__(d.items())` (any of the 8 operator dunders): the set operation "
         "computed and `s` updated where CPython returns `NotImplemented`", "2.13", "(`>=2.13,<2.14`)"),
        ("`s.__rand__(d.keys())`, `s.__ror__(d.items())` (the 4 reflected dunders): computed where CPython "
         "returns `NotImplemented`", "2.12–2.13", "(`>=2.12,<2.14`)"),
    ),
    fixes="an explicit set operator dunder with a dict view computes the operation where CPython returns "
    "NotImplemented (torch 2.12-2.13)",
    upstream="torch/_dynamo/variables/sets.py: SetVariable.call_method (the operator dunders)",
    mirrors="CPython's set_and/set_or/set_sub/set_xor and their in-place forms (PyAnySet_Check -> "
    "NotImplemented); 2.14's number-slot dispatch of the dunders",
    torch=">=2.12,<2.14",
    fixed_upstream="2.14: the set dunders return NotImplemented for a view (measured)",
    targets=(
        Target("torch._dynamo.variables.sets", "SetVariable", "call_method",
               routed_gate(_explicit_dunder, method_name_gate, _REFLECTED | _FORWARD),
               params=("tx", "name", "args", "kwargs")),
    ),
    summary="an explicit set operator dunder with a dict view returns NotImplemented, as CPython",
    history=(
        ("2.5-2.11", "right or a graph break"),
        ("2.12", "the reflected dunders computed (the forward ones: set-view-operator's graph break)"),
        ("2.13", "all twelve computed, the in-place ones updating the set"),
        ("2.14-2.15", "right"),
    ),
)
