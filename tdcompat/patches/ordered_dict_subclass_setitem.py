"""An ``OrderedDict`` subclass's own ``__setitem__`` is skipped when it is filled from a mapping (2.5-2.15).

Symptom (silently wrong, measured on 2.5.1-2.15.0, ``fullgraph=True``): for ``class S(OrderedDict)`` with its
own ``__setitem__`` (one that transforms or records what it stores), ``S(d)``, ``S(**kw)``, ``s.update(d)``,
``s.setdefault(k, v)`` and ``s |= d`` compiled store the items as given; eager stores what ``S.__setitem__``
stores. Found by tdcompat's fuzzer (seed 0 program 153 on 2.15.0, ``TODSet(o).copy()``).

Root cause: CPython's ``OrderedDict`` fills itself through ``PyObject_SetItem`` (``Objects/odictobject.c``:
``odict_init`` and ``update`` are ``mutablemapping_update``; ``odict_setdefault``, ``odict_or``/``odict_inplace_or``
likewise), so a subclass's ``__setitem__`` runs for each
item. Dynamo writes the storage directly: ``UserDefinedClassVariable.call_function`` builds the instance with
its items (2.5-2.6 ``CustomizedDictVariable``; 2.15), and ``UserDefinedDictVariable.call_method`` sends
``__init__``/``update``/``setdefault`` to the storage's ``ConstDictVariable`` (2.7-2.14).

What the handlers accept: nothing. They graph-break where CPython would run the class's own ``__setitem__``
and Dynamo would not: the class (read statically; Dynamo guards the type of every input it calls a method of)
is a strict ``OrderedDict`` subclass whose ``__setitem__`` is not ``OrderedDict``'s, and the call is

- the class called with arguments, its ``__init__`` being ``OrderedDict``'s (an own ``__init__`` is inlined,
  and its ``super().__init__(...)`` meets the ``super()`` handler) (``S.fromkeys(...)``, 2.13+, is
  ``dict-subclass-fromkeys``'s: it traces the class's ``__setitem__``);
- ``__init__``/``update`` with arguments, ``setdefault``, ``__ior__``, ``__or__`` on an instance, where the
  method is ``OrderedDict``'s (a class's own, e.g. a Hugging Face ``ModelOutput.update`` that raises, is
  inlined), or ``super().<one of them>(...)`` where ``super()`` finds ``OrderedDict``'s (or ``dict``'s);
- on 2.13+ (``|``/``|=`` through the number slots) ``|``/``|=`` with such an instance on either side (2.13:
  such an instance is no Python constant, so Dynamo cannot fold the operator over a plain ``OrderedDict``
  past the break).

Everything else is Dynamo's (one type test on the class call, one name test on the method calls).
"""

from __future__ import annotations

import collections
from typing import Optional

from ..dict_classes import ORDERED_SUBCLASS, class_call_gate, overrides
from ..dynamo_api import bind_args, graph_break, or_through_number_slots
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, method_name_gate, routed_gate

NAME = "ordered-dict-subclass-setitem"

#: Instance methods of ``OrderedDict`` that store through ``PyObject_SetItem`` (with arguments, for the first two).
_FILLS = frozenset({"__init__", "update", "setdefault", "__ior__", "__or__"})


def _runs_own_setitem(cls) -> bool:
    """Is ``cls`` a strict ``OrderedDict`` subclass with its own ``__setitem__``?"""
    return (isinstance(cls, type) and issubclass(cls, collections.OrderedDict) and cls is not collections.OrderedDict
            and overrides(cls, collections.OrderedDict, "__setitem__"))


def _refuse(cls: type, call: str) -> None:
    graph_break("OrderedDict subclass filled past its __setitem__", f"{cls.__qualname__}: {call}",
                f"CPython stores each item through {cls.__qualname__}.__setitem__; Dynamo writes the storage")


def _filling(args, kwargs) -> Optional[str]:
    """The method name of a ``call_method(tx, name, args, kwargs)`` that stores items (``__init__`` and
    ``update`` only with arguments), else None."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return None
    _tx, name, call_args, call_kwargs = bound
    if name in ("__init__", "update") and not call_args and not call_kwargs:
        return None
    return name


@fail_safe(NAME)
def _fill(wrapped, instance, args, kwargs):
    """``UserDefinedDictVariable.call_method(tx, name, args, kwargs)`` (2.7+) / ``CustomizedDictVariable`` (2.5-2.6),
    for the names in :data:`_FILLS` (the gate sends no other)."""
    name = _filling(args, kwargs)
    if name is None:
        return DEFER
    try:
        cls = instance.python_type()
    except Exception:  # noqa: BLE001 - no Python type: not a dict
        return DEFER
    if _runs_own_setitem(cls) and not overrides(cls, collections.OrderedDict, name):
        _refuse(cls, name)  # OrderedDict's own method (the class's own is inlined: its super() call meets us)
    return DEFER


@fail_safe(NAME)
def _class_call(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.call_function(tx, args, kwargs)`` of a strict ``OrderedDict`` subclass (the gate
    sends no other class)."""
    bound = bind_args(args, kwargs, ("tx", "args", "kwargs"))
    if bound is None:
        return DEFER
    _tx, call_args, call_kwargs = bound
    cls = instance.value
    own_init = overrides(cls, collections.OrderedDict, "__init__")
    if (call_args or call_kwargs) and _runs_own_setitem(cls) and not own_init:
        _refuse(cls, f"{cls.__qualname__}(...)")
    return DEFER


@fail_safe(NAME)
def _super_fill(wrapped, instance, args, kwargs):
    """``SuperVariable.call_method(tx, name, args, kwargs)``: ``super().__init__(d)`` / ``super().update(d)`` in
    a subclass's own method, where the method ``super()`` finds is ``OrderedDict``'s."""
    name = _filling(args, kwargs)
    if name is None:
        return DEFER
    try:
        start = instance.typevar.as_python_constant()
        cls = instance.objvar.python_type()
    except Exception:  # noqa: BLE001 - not a super() of a class and an instance Dynamo knows: Dynamo's
        return DEFER
    if not _runs_own_setitem(cls) or not isinstance(start, type):
        return DEFER
    mro = type.__dict__["__mro__"].__get__(cls)
    if start not in mro:
        return DEFER
    for klass in mro[mro.index(start) + 1:]:
        found = type.__dict__["__dict__"].__get__(klass).get(name)
        if found is not None:
            if found is vars(collections.OrderedDict).get(name) or found is vars(dict).get(name):
                _refuse(cls, f"super().{name}(...)")
            return DEFER
    return DEFER


@fail_safe(NAME)
def _operator(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_or_(tx, a, b)`` / ``call_ior`` (2.13+, the number slots): ``s | d``, ``d | s``,
    ``s |= d`` (``OrderedDict.__or__``/``__ror__``/``__ior__`` store through ``__setitem__``)."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    for operand in bound[1:]:
        try:
            cls = operand.python_type()
        except Exception:  # noqa: BLE001 - a lazy or typeless operand: not an instance Dynamo built for us
            continue
        if _runs_own_setitem(cls):
            _refuse(cls, "|")
    return DEFER


@fail_safe(NAME)
def _not_a_constant(wrapped, instance, args, kwargs):
    """``OrderedDictVariable.is_python_constant()`` (2.13, ``variables/user_defined.py``: every ``OrderedDict``
    and subclass instance): False for an instance of a class with its own ``__setitem__``. Its
    ``as_python_constant()`` is a plain ``OrderedDict``, and ``BuiltinVariable``'s ``|``/``|=`` swallow the
    graph break of :func:`_operator` and fold the operator over that constant."""
    try:
        cls = instance.python_type()
    except Exception:  # noqa: BLE001
        return DEFER
    return False if _runs_own_setitem(cls) else DEFER


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`S(d)`, `S(**kw)`, `s.update(d)`, `s.setdefault(k, v)`, `s |= d` of an `OrderedDict` "
         "subclass with its own `__setitem__` store the items without it (eager: through it)", "2.5–2.15",
         "(`>=2.5`)"),
    ),
    fixes="an OrderedDict subclass with its own __setitem__ filled from a mapping (S(d), update, setdefault, |=) "
    "silently skips that __setitem__",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_function, "
    "UserDefinedDictVariable.call_method; "
    "torch/_dynamo/variables/dicts.py: CustomizedDictVariable.call_method (2.5-2.6); "
    "torch/_dynamo/variables/misc.py: SuperVariable.call_method; "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_or_, call_ior (2.13+); "
    "torch/_dynamo/variables/user_defined.py: OrderedDictVariable.is_python_constant (2.13)",
    mirrors="none upstream yet (docs/upstream/ordered-dict-subclass-setitem/): CPython's mutablemapping_update, "
    "odict_setdefault and odict_or store through PyObject_SetItem",
    torch=">=2.5",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method",
               routed_gate(_fill, method_name_gate, _FILLS), inherited=True,
               params=("tx", "name", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.dicts", "CustomizedDictVariable", "call_method",
               routed_gate(_fill, method_name_gate, _FILLS), inherited=True,
               params=("tx", "name", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_function",
               routed_gate(_class_call, class_call_gate, frozenset({ORDERED_SUBCLASS})),
               params=("tx", "args", "kwargs")),
        Target("torch._dynamo.variables.misc", "SuperVariable", "call_method",
               routed_gate(_super_fill, method_name_gate, _FILLS), params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_or_", _operator, params=("tx", "a", "b"),
               when=or_through_number_slots),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_ior", _operator, params=("tx", "a", "b"),
               when=or_through_number_slots, optional=True),
        Target("torch._dynamo.variables.user_defined", "OrderedDictVariable", "is_python_constant", _not_a_constant,
               optional=True),
    ),
    proven_by="tests/test_ordered_dict_subclass_setitem.py::test_without_the_patch_it_is_wrong",
    summary="filling an OrderedDict subclass with its own __setitem__ from a mapping graph-breaks",
    history=(
        ("2.5-2.6", "`S(d)` is a `CustomizedDictVariable` built with the items; `update`/`setdefault` write them"),
        ("2.7-2.14", "`UserDefinedDictVariable` sends `__init__`/`update`/`setdefault` to the storage"),
        ("2.15", "`S(d)` is built with the items; `update`/`setdefault`/`|=` write the storage"),
    ),
)
