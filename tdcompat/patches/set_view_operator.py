"""``s | d.keys()``, ``s |= d.items()``, ``e | d.keys()`` (``&``, ``-``, ``^``): a dict view on the right (2.8-2.12).

Symptom: a ``set`` or ``frozenset`` on the left of ``|``, ``&``, ``-``, ``^`` (or ``|=``, ``&=``, ``-=``,
``^=``) with a ``dict_keys``/``dict_items`` view on the right. CPython runs the view's reflected operator
(``set.__or__`` returns ``NotImplemented`` for a non-set): a **new** ``set``, the left operand untouched, even
for ``s |= d.keys()``. Measured with the case ``set_view_operator`` (and the fuzzer's ``ior_kept(set(...),
d.keys())``): 2.9-2.11 raise an observed ``TypeError`` inside the trace (**silently wrong under ``try: ...
except TypeError``**, a graph break otherwise); **2.12 updates the set in place** (``kept = s; s |= d.keys()``
changes ``kept``), gives a ``frozenset`` where CPython gives a ``set`` (``fs | d.keys()``) and keeps the left
operand's element of an equal pair (``{1} & {1.0: 0}.keys()`` is ``{1.0}``). 2.5-2.7 graph-break; 2.13 is right.
The same family, measured on 2.8.0-2.12.1 with the case ``set_view_operand``: **2.8 crashes the compile** on
``s | d.items()`` / ``s |= d.items()`` and on a plain dict left of a view (``e | d.keys()``:
``InternalTorchDynamoError: TypeError``, also without ``fullgraph``); 2.9-2.12 raise ``TypeError`` in the trace
for ``e | d.keys()`` (CPython: ``set(e)`` updated with the view); 2.9-2.11 crash on ``d.keys() | d.items()``
(``&``, ``-``, ``^`` too: ``AttributeError: 'DictItemsVariable' object has no attribute 'set_items'``), and
2.9-2.12 on a keys view with a dict, a list or a tuple (``{"a": 0}.keys() - d``: ``'ConstDictVariable' object
has no attribute 'set_items'``; found by the fuzzer on 2.10.0, program 1423 of seed 0).

Root cause: torch/_dynamo/variables/dicts.py (sets.py on 2.12): ``SetVariable.call_method`` answers the
operator dunders itself: 2.9-2.11 accept only set operands (``raise_observed_exception(TypeError)``), 2.12
(pytorch/pytorch#178613) accepts the views but runs the in-place method (``update``, ...) for ``__ior__`` and
the set's own method (``union``, ...) for the binary ones. 2.13 dispatches the operators through CPython's
number slots (pytorch/pytorch#178968, #181326, #182043: ``binary_op``/``binary_iop``), NotImplemented included.

What the handler accepts: ``SetVariable.call_method(tx, name, [view], {})`` for the eight operator dunders,
where ``self`` is an exact ``SetVariable`` or ``FrozensetVariable`` (a frozenset reaches it through
``FrozensetVariable.call_method``'s ``super()``), the operand an exact ``DictKeysVariable`` or
``DictItemsVariable``, and every element on both sides (the set's items, the view's keys, and for an items
view its values) a Python constant whose hash and ``==`` are pure functions of its value
(:func:`tdcompat.pure_values.hashes_by_value`: ``str``, ``bytes``, ``int``, ``bool``, ``None``, non-NaN
``float``, tuples/frozensets of them). It runs CPython's own operator on equal copies (``set(...) | {...}.keys()``,
the in-place forms as the binary one, which is what CPython falls back to) and returns the result as a new
sourceless ``set``. Sound: the result is a function of those values only (which copy of an equal pair is kept
included), the same values Dynamo's own set methods read; no user code can run; ``self`` is not mutated, as in
CPython. A user set or dict-subclass view, a set operand and every other method defer. A tensor or object
element (the result cannot be computed by value) graph-breaks, except for 2.12's binary operators on a ``set``,
which build a new set as CPython (deferred): 2.9-2.11 would raise the ``TypeError`` and 2.12's in-place forms
would update the set, which tdcompat's other patches must not turn a graph break into (the fuzzer found
exactly that when these deferred). Only a call made by the operator instruction itself
(``dynamo_api.current_binary_operator``: ``|`` for ``__or__``, ``|=`` for ``__ior__``, and on 2.8, whose
``call_ior`` is ``call_or_``, ``|=`` for ``__or__``) or by the ``operator`` function of the same semantics
(``operator.or_(s, view)``: the ``BuiltinVariable`` whose ``call_function`` led here, ``dynamo_api.
calling_builtin``) is answered; an explicit ``s.__or__(view)`` is ``NotImplemented`` in CPython: a graph break.
(Breaking ``operator.or_`` too made 32 of upstream's test_dicts.py tests that pass natively on 2.12 fail.)

Also accepted, computed the same way (real operands equal by value, CPython's own operator, a new sourceless
set; a graph break where an element is not a constant): ``BuiltinVariable.call_or_(tx, a, b)`` (2.8-2.12) with
``b`` an exact keys/items view and ``a`` a plain ``dict`` under the ``|`` instruction (only the dict's keys
reach ``set(a) | b``; an explicit ``d.__or__`` or ``operator.or_`` graph-breaks), or ``a`` a keys view and ``b``
an items view (only where an items view has no ``set_items``: 2.12 added it and computes that right);
``DictKeysVariable.call_method`` for the operator dunders (2.8-2.12) with an items view (to 2.11), a plain
dict, an ``OrderedDict`` or a ``defaultdict`` (its keys), or an exact list or tuple of constants (CPython's
view operators take any iterable; 2.9-2.12 read the operand's ``set_items`` and crash the compile); a set or
keys view operand stays Dynamo's.
Guarded: the keys of every dict whose view or keys the result is computed from, and each constant element.
"""

from __future__ import annotations

import collections
import functools
import operator

from ..dynamo_api import (
    bind_args,
    build_sourceless,
    calling_builtin,
    current_binary_operator,
    dict_class,
    graph_break,
    guard_dict_keys,
    is_plain_dict,
    or_through_number_slots,
    realize,
)
from ..spec import Patch, Target
from ..view_values import NOT_PURE, constant, set_value, view_value
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "set-view-operator"

#: The operator dunders ``SetVariable.call_method`` answers -> the binary operator CPython ends up running for
#: a view operand (``set.__ior__`` returns NotImplemented too, so ``s |= view`` is ``s = s | view``).
_OPERATORS = {
    "__or__": operator.or_, "__and__": operator.and_, "__sub__": operator.sub, "__xor__": operator.xor,
    "__ior__": operator.or_, "__iand__": operator.and_, "__isub__": operator.sub, "__ixor__": operator.xor,
}

_BINARY = frozenset({"__or__", "__and__", "__sub__", "__xor__"})

#: The dunder -> the operator symbol of the instruction that reaches it (``"|"``; ``"|="`` for ``__ior__``).
_SYMBOLS = {"__or__": "|", "__and__": "&", "__sub__": "-", "__xor__": "^",
            "__ior__": "|=", "__iand__": "&=", "__isub__": "-=", "__ixor__": "^="}


#: The dunder -> the ``operator`` functions whose semantics are its operator's (``operator.and_(s, view)`` is
#: ``s & view``, reflected operator included; ``operator.iand`` is ``&=``, which reaches ``__and__`` where
#: ``call_iand`` is the binary handler).
_FUNCTIONS = {
    "__or__": (operator.or_, operator.ior), "__and__": (operator.and_, operator.iand),
    "__sub__": (operator.sub, operator.isub), "__xor__": (operator.xor, operator.ixor),
    "__ior__": (operator.ior,), "__iand__": (operator.iand,), "__isub__": (operator.isub,),
    "__ixor__": (operator.ixor,),
}


def _from_operator(tx, name: str) -> bool:
    """Is ``name`` reached from its operator instruction (``s | view``; ``s |= view`` also as ``__or__`` where
    ``call_ior`` is ``call_or_``, 2.8) or from the ``operator`` function of the same semantics
    (``operator.or_(s, view)``, found as the ``BuiltinVariable`` whose ``call_function`` led here), not from an
    explicit ``s.__or__(view)`` (``NotImplemented`` in CPython)?"""
    symbol = current_binary_operator(tx)
    if symbol in (_SYMBOLS[name], _SYMBOLS[name] + "=") if name in _BINARY else symbol == _SYMBOLS[name]:
        return True
    return symbol is None and calling_builtin() in _FUNCTIONS[name]


@functools.lru_cache(maxsize=None)
def _binary_takes_views() -> bool:
    """Do ``SetVariable``'s binary operators take a dict view (2.12: #178613, which also moved the class to
    variables/sets.py) rather than raise ``TypeError`` (2.9-2.11)?"""
    from torch._dynamo.variables import SetVariable

    return SetVariable.__module__ == "torch._dynamo.variables.sets"


@fail_safe(NAME)
def _set_operator(wrapped, instance, args, kwargs):
    """``SetVariable.call_method(tx, "__or__" | "__ior__" | ..., [dict view], {})``."""
    from torch._dynamo.variables import FrozensetVariable, SetVariable
    from torch._dynamo.variables.dicts import DictItemsVariable, DictKeysVariable

    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    op = _OPERATORS.get(name)
    if op is None or call_kwargs or len(call_args) != 1:
        return DEFER
    if type(instance) not in (SetVariable, FrozensetVariable):
        return DEFER
    view = call_args[0]
    if type(view) not in (DictKeysVariable, DictItemsVariable) or view.kv not in ("keys", "items"):
        return DEFER
    if not _from_operator(tx, name):
        graph_break("set-view-operator", f"{type(instance).__name__}.{name}({type(view).__name__}) called",
                    "an explicit set dunder call with a dict view: NotImplemented in CPython, which Dynamo's own "
                    "method does not give (tdcompat)")
    kind = frozenset if type(instance) is FrozensetVariable else set
    left = set_value(instance, kind)
    right = NOT_PURE if left is NOT_PURE else view_value(view)
    if right is NOT_PURE:
        if name in _BINARY and type(instance) is SetVariable and _binary_takes_views():
            return DEFER  # 2.12's set.union & co. with a view: a new set, as CPython
        graph_break("set-view-operator", f"{type(instance).__name__}.{name}({type(view).__name__})",
                    "a set with a dict view whose elements are not all constants: CPython runs the view's "
                    "reflected operator (a new set), which Dynamo's own method does not (tdcompat)")
    effects_begin()
    return build_sourceless(tx, op(left, right))


_call_method_gate = routed_gate(_set_operator, method_name_gate, frozenset(_OPERATORS))


def _keys_operators_read_set_items() -> bool:
    """2.8-2.12: ``DictKeysVariable``'s operators (2.9-2.12: ``set_items`` of the operand) run from
    ``call_method``; 2.13 dispatches them through the number slots."""
    return not or_through_number_slots()


@functools.lru_cache(maxsize=None)
def _items_view_lacks_set_items() -> bool:
    """2.8-2.11: an items view has no ``set_items``, which ``DictKeysVariable``'s operators read from their
    operand (2.9-2.11 crash; 2.12 gave it one and computes them right)."""
    from torch._dynamo.variables.dicts import DictItemsVariable

    return not hasattr(DictItemsVariable, "set_items")


def _is_view(vt, kinds=("keys", "items")) -> bool:
    from torch._dynamo.variables.dicts import DictItemsVariable, DictKeysVariable

    return type(vt) in (DictKeysVariable, DictItemsVariable) and vt.kv in kinds


def _by_value(tx, op, left, view, what: str):
    """``op(left, view)`` computed by CPython on equal copies, as a new sourceless tracker; a graph break where
    an element is not a constant by value."""
    right = NOT_PURE if left is NOT_PURE else view_value(view)
    if right is NOT_PURE:
        graph_break("set-view-operator", what,
                    "a dict view operand whose elements (or the other operand's) are not all constants: CPython "
                    "runs the view's set operator, which Dynamo does not model here (tdcompat)")
    effects_begin()
    return build_sourceless(tx, op(left, right))


def _keys_operand(vt):
    """A real operand equal to ``vt`` for a keys view's operator, ``NOT_PURE`` (not computable by value), or None
    where Dynamo's own ``set_items`` operator is right (a set, a keys view; an items view from 2.12)."""
    from torch._dynamo.variables import ConstDictVariable, DefaultDictVariable, ListVariable, TupleVariable

    if _is_view(vt, ("items",)):
        return view_value(vt) if _items_view_lacks_set_items() else None
    if is_plain_dict(vt) or (type(vt) in (ConstDictVariable, DefaultDictVariable)
                             and dict_class(vt) in (collections.OrderedDict, collections.defaultdict)):
        return _plain_dict_keys(vt)  # iterating one runs no user code: its keys
    if type(vt) in (ListVariable, TupleVariable):
        items = [constant(item) for item in vt.items]
        if any(item is NOT_PURE for item in items):
            return NOT_PURE
        return list(items) if type(vt) is ListVariable else tuple(items)
    return None


@fail_safe(NAME)
def _keys_operator(wrapped, instance, args, kwargs):
    """``DictKeysVariable.call_method(tx, "__or__" | ..., [operand], {})``: 2.9-2.12 read the operand's
    ``set_items``, which an items view (to 2.11), a dict, a list or a tuple lacks: the compile crashes. CPython's
    view operators take any iterable."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    op = _OPERATORS.get(name)
    if op is None or call_kwargs or len(call_args) != 1 or not _is_view(instance, ("keys",)):
        return DEFER
    if name not in _BINARY and not _from_operator(tx, name):
        return DEFER  # ``keys.__ior__(...)``: dict_keys has no such method in CPython
    operand = realize(call_args[0])
    right = _keys_operand(operand)
    if right is None:
        return DEFER  # a set or a keys view: Dynamo's set_items operators, right
    left = NOT_PURE if right is NOT_PURE else view_value(instance)
    if left is NOT_PURE:
        graph_break("set-view-operator", f"dict_keys.{name}({type(operand).__name__})",
                    "a keys view with an operand whose elements are not all constants: CPython runs the view's "
                    "set operator, which Dynamo's own method cannot here (tdcompat)")
    effects_begin()
    return build_sourceless(tx, op(left, right))


_keys_call_method_gate = routed_gate(_keys_operator, method_name_gate, frozenset(_OPERATORS))


def _plain_dict_keys(vt):
    """A real dict with the keys of the plain-dict tracker ``vt`` (the values never reach the result of
    ``d | view``: CPython builds ``set(d)``), or ``NOT_PURE``."""
    guard_dict_keys(vt)
    keys = [constant(key.vt) for key in vt.items]
    return NOT_PURE if any(key is NOT_PURE for key in keys) else dict.fromkeys(keys)


@fail_safe(NAME)
def _view_or(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_or_(tx, a, b)`` for ``d | view`` (``dict.__or__`` gives NotImplemented for a view:
    CPython runs the view's reflected ``|``, ``set(d)`` updated with the view; 2.8 crashes, 2.9-2.12 raise
    ``TypeError``) and ``d.keys() | d.items()`` (2.8 breaks, 2.9-2.12 crash)."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    tx, a, b = bound
    if not _is_view(b):
        return DEFER
    a = realize(a)
    if _is_view(a, ("keys",)) and _is_view(b, ("items",)) and _items_view_lacks_set_items():
        return _by_value(tx, operator.or_, view_value(a), b, "dict_keys | dict_items")
    if not is_plain_dict(a):
        return DEFER
    if current_binary_operator(tx) != "|" and calling_builtin() is not operator.or_:
        graph_break("set-view-operator", f"dict.__or__({type(b).__name__}) called",
                    "an explicit dict.__or__ with a dict view (NotImplemented in CPython) or operator.or_ (the "
                    "view's reflected operator), which Dynamo sends to the same method (tdcompat)")
    return _by_value(tx, operator.or_, _plain_dict_keys(a), b, f"dict | {type(b).__name__}")

PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`s | d.items()`, `e | d.keys()` (a plain dict on the left), `d.keys() | d.items()`, `k.keys() - d`: "
         "**the compile crashes** (`InternalTorchDynamoError`, also without `fullgraph`; 2.8, keys view "
         "2.9–2.12), or `e | d.keys()` **raises `TypeError` in the trace** (2.9–2.12)",
         "2.8–2.12",
         "(`>=2.8,<2.13`): a new `set`, as CPython"),
        ("`s |= d.keys()` / `s & d.items()` (a set and a dict view): **a `TypeError` inside the trace** "
         "(silently taken by `except TypeError`)",
         "2.9–2.11",
         "(`>=2.8,<2.13`): a new `set`, as CPython's reflected view operator"),
        ("`kept = s; s |= d.keys()`: **`kept` changes too** (updated in place), `fs | d.keys()` **is a "
         "`frozenset`**",
         "2.12",
         "(`>=2.8,<2.13`)"),
    ),
    fixes="a set or frozenset with a dict keys/items view on the right of | & - ^ (or |= &= -= ^=): TypeError "
    "inside the trace on 2.9-2.11; updated in place / a frozenset / the other copy of an equal pair on 2.12; "
    "s | d.items() and d | d.keys() crash the compile on 2.8 (d | view: TypeError in the trace on 2.9-2.12), "
    "d.keys() | d.items() on 2.9-2.11",
    upstream="torch/_dynamo/variables/dicts.py (sets.py on 2.12): SetVariable.call_method (the operator dunders), "
    "DictKeysVariable.call_method; torch/_dynamo/variables/builtin.py: BuiltinVariable.call_or_",
    mirrors="pytorch/pytorch#178968, #181326, #182043 (2.13: the operators dispatched through CPython's number "
    "slots, NotImplemented and the reflected view operator included); #178613 (2.12: views accepted)",
    torch=">=2.8,<2.13",
    fixed_upstream="2.13: binary_op/binary_iop slot dispatch (pytorch/pytorch#178968, #181326)",
    targets=(
        # 2.12 moved the class to variables/sets.py; variables/dicts.py still imports it under this name
        Target("torch._dynamo.variables.dicts", "SetVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.dicts", "DictKeysVariable", "call_method", _keys_call_method_gate,
               params=("tx", "name", "args", "kwargs"), when=_keys_operators_read_set_items),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_or_", _view_or, params=("tx", "a", "b")),
    ),
    summary="a set, a dict or a keys view with a dict view on the right of `|`/`&`/`-`/`^` (and `|=` ...): a new "
            "`set`, as CPython",
    history=(
        ("2.5-2.7", "not this gap: a set with a dict view on the right is a graph break (2.5-2.7 fold `d.items()` "
         "as a tuple)"),
        ("2.8", "`s | d.items()`, `s |= d.items()` and `e | d.keys()` crash the compile (`BuiltinVariable.call_or_` "
         "sends them to `ConstDictVariable.__or__`); the other operators with a view graph-break"),
        ("2.9-2.11", "`SetVariable.call_method` takes only set operands: an observed `TypeError` in the trace; "
         "`d.keys() | d.items()` and `d.keys() - d` crash (the keys view reads `set_items`)"),
        ("2.12", "views accepted (#178613), but `|=` updates in place, `fs | view` is a frozenset and `&` keeps "
         "the set's copy of an equal pair; `d.keys() - d` (a dict, list or tuple operand) crashes"),
        ("2.13+", "right: CPython's number-slot dispatch"),
    ),
)
