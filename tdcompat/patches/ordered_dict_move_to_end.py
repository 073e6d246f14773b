"""``od.move_to_end(k, last)`` with ``last`` given crashes the compile (2.7-2.8) or is read wrong (2.9-2.15).

Symptom, measured on 2.7.1-2.15.0 (``fullgraph=True``, an ``OrderedDict`` or subclass passed in or made in the
frame): 2.7-2.8 crash on any ``last`` (``od.move_to_end(k, False)``, ``last=False``, even ``last=True``) and on
a missing key (``AssertionError`` / ``InternalTorchDynamoError: KeyError``, also without ``fullgraph``, so the
user's program fails). 2.9-2.15 read ``last`` only when it is a constant tracker (2.9-2.10: a
``ConstantVariable``, so ``last=[]`` is read as True), else silently move the key to the end: ``last=obj`` with
its own ``__bool__``, ``last=bool(t.sum() < 0)``; 2.13-2.14 read a positional ``last`` only when the *key* is a
constant (``args[0].is_python_constant()``), 2.13-2.15 crash on a positional ``last`` that is no constant
(``AsPythonConstantNotImplementedError``). And 2.7-2.12's ``dict`` branch takes ``move_to_end`` of any dict
tracker: a plain ``dict`` or a ``defaultdict`` (passed in or made in the frame), where CPython raises
``AttributeError``, has the key moved (2.7-2.8, silently) or crashes the compile (2.9-2.12,
``InternalTorchDynamoError``).

Root cause: ``ConstDictVariable.call_method``'s ``move_to_end`` branch (``torch/_dynamo/variables/dicts.py``,
2.7-2.12; 2.7-2.8: ``assert not kwargs and len(args) == 1``), ``OrderedDictVariable.call_method``
(``variables/user_defined.py``, 2.13) and ``OrderedDictVariable.move_to_end`` (``variables/dicts.py``,
2.14-2.15: reached from its own ``call_method`` on 2.14; on 2.15 a ``tp_methods`` entry reached from the
inherited ``VariableTracker.call_method`` of an ``OrderedDict`` and ``UserDefinedObjectVariable.call_method``
of a subclass, where the handler is installed on ``OrderedDictVariable`` and ``UserDefinedOrderedDictVariable``
themselves). CPython's ``odict_move_to_end(key, last=True)``
(``Objects/odictobject.c``) takes ``last`` positionally or by keyword and moves the key to the end when
``last`` is true, else to the front; a missing key raises ``KeyError``.

What the handler accepts: ``move_to_end`` called with the arguments CPython accepts (the key, and ``last``
once, positionally or by keyword) on an ``OrderedDict`` or a subclass that does not define its own
``move_to_end``. ``last`` is read as Python would only where its truth runs no user code: a constant tracker
whose value's exact type is a builtin (``bool``, ``int``, ``float``, ``str``, ``None``, a ``tuple``/``list``/
``dict``/``set``: :func:`tdcompat.pure_values.truth_of`; Dynamo guards the constants it reads); any other
``last`` graph-breaks. 2.9-2.15 then run Dynamo's own branch with ``last=`` a constant ``bool`` by keyword
(the keyword is read whatever the key; 2.13+ read a positional ``last`` only for a constant key). 2.7-2.8 move the
entry themselves as the 2.9 branch does: the dict's keys guarded, the mutation recorded, ``KeyError`` for a
missing key, the entry re-inserted last or first. Calls without ``last`` on 2.9+ are Dynamo's. A tracker whose class is
known and has no ``move_to_end`` anywhere in its MRO graph-breaks (eager then raises ``AttributeError``); a
``dict`` subclass that defines one is never routed here (Dynamo inlines its method). Still open
upstream on 2.15: ``docs/upstream/ordered-dict-move-to-end/``.
"""

from __future__ import annotations

import collections

from ..dict_classes import overrides, python_type
from ..dynamo_api import (
    MISSING,
    bind_args,
    graph_break,
    raise_observed,
    static_lookup,
    torch_release,
    user_dict_storage,
)
from ..pure_values import truth_of
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "ordered-dict-move-to-end"


def _ordered(instance) -> bool:
    """Is the tracker an ``OrderedDict`` (or a subclass without its own ``move_to_end``)? 2.7-2.12's storage
    trackers carry it as ``user_cls``."""
    cls = getattr(instance, "user_cls", None)
    if not (isinstance(cls, type) and issubclass(cls, collections.OrderedDict)):
        cls = python_type(instance)
    return (isinstance(cls, type) and issubclass(cls, collections.OrderedDict)
            and not overrides(cls, collections.OrderedDict, "move_to_end"))


def _lacks_move_to_end(instance) -> bool:
    """Is the tracker's class known, and without any ``move_to_end`` (a plain ``dict``, a ``defaultdict``, a
    ``dict`` subclass that defines none)? 2.7-2.12's ``ConstDictVariable`` branch moves the key anyway (2.7-2.8)
    or crashes (2.9-2.12), where CPython raises ``AttributeError``."""
    cls = getattr(instance, "user_cls", None)
    if not isinstance(cls, type):
        cls = python_type(instance)
    return cls is not None and static_lookup(cls, "move_to_end") is MISSING


def _truth(vt):
    try:
        if not vt.is_python_constant():
            return None
        return truth_of(vt.as_python_constant())
    except Exception:  # noqa: BLE001 - no constant after all
        return None


def _move_by_hand(tx, instance, key, last: bool):
    """2.7-2.8: what 2.9's branch does, with ``last`` honoured, on the dict tracker (an ``OrderedDict``
    subclass's storage)."""
    from torch._dynamo.variables import ConstantVariable

    storage = user_dict_storage(instance)
    instance = instance if storage is None else storage

    effects_begin()
    instance.install_dict_keys_match_guard()
    tx.output.side_effects.mutation(instance)
    if key not in instance:
        raise_observed(KeyError, tx, "OrderedDict.move_to_end of a missing key")
    wanted = type(instance)._HashableTracker(key)
    hashable = next(k for k in instance.items if k == wanted)  # the entry's own key tracker (the replay reads it)
    value = instance.items.pop(hashable)
    if last:
        instance.items[hashable] = value
    else:
        rest = list(instance.items.items())
        instance.items.clear()
        instance.items[hashable] = value
        instance.items.update(rest)
    return ConstantVariable.create(None)


@fail_safe(NAME)
def _move_to_end(wrapped, instance, args, kwargs):
    """``<dict tracker>.call_method(tx, "move_to_end", args, kwargs)`` (the gate sends no other name)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    call_args, call_kwargs = list(call_args), dict(call_kwargs)
    if not _ordered(instance):
        if _lacks_move_to_end(instance):
            graph_break("move_to_end of a mapping that has none", repr(instance),
                        "CPython raises AttributeError; Dynamo's dict branch would move the key (or crash)")
        return DEFER  # not an OrderedDict: Dynamo's
    if (not call_args or len(call_args) > 2 or set(call_kwargs) - {"last"}
            or (len(call_args) == 2 and call_kwargs)):
        return DEFER  # a call CPython refuses: Dynamo's
    by_hand = torch_release() < (2, 9)
    given = call_args[1] if len(call_args) == 2 else call_kwargs.get("last")
    if given is None and not by_hand:
        return DEFER  # Dynamo's one-argument branch is right from 2.9
    last = True if given is None else _truth(given)
    if last is None:
        graph_break("OrderedDict.move_to_end with a last= of unknown truth", repr(given),
                    "CPython moves the key to the front when bool(last) is false; Dynamo would not read it")
    key = call_args[0]
    if by_hand:
        return _move_by_hand(tx, instance, key, last)
    from torch._dynamo.variables import ConstantVariable

    # by keyword: 2.13+ read a positional last only when the *key* is a constant
    return wrapped(tx, name, [key], {"last": ConstantVariable.create(last)})


def _storage_branch() -> bool:
    """2.7-2.12: the branch is ``ConstDictVariable.call_method``'s (an ``OrderedDict`` subclass's storage too)"""
    return torch_release() < (2, 13)


def _method_table_branch() -> bool:
    """2.15+: ``move_to_end`` is an ``OrderedDictVariable.tp_methods`` entry, run from the inherited ``call_method``"""
    return torch_release() >= (2, 15)


_GATE = routed_gate(_move_to_end, method_name_gate, frozenset({"move_to_end"}))
_PARAMS = ("tx", "name", "args", "kwargs")

PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`od.move_to_end(k, False)` / `last=...` / a missing key crashes the compile (`AssertionError`, "
         "also without `fullgraph`)", "2.7–2.8", "(`>=2.7,<2.9`)"),
        ("`od.move_to_end(k, last=v)` ignores a `last` that is no constant tracker (an object's `__bool__`, a "
         "value computed in the frame): the key goes to the end", "2.9–2.15", "(`>=2.9`)"),
        ("`d.move_to_end(k)` of a plain `dict` or a `defaultdict` moves the key (2.7–2.8) or crashes the compile "
         "(2.9–2.12) where CPython raises `AttributeError`", "2.7–2.12", "(`>=2.7,<2.13`)"),
    ),
    fixes="od.move_to_end(k, last) crashes the compile (2.7-2.8) or silently ignores a last= that is no "
    "constant (2.9-2.15)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method ('move_to_end', 2.7-2.12), "
    "OrderedDictVariable.call_method (2.14, which runs OrderedDictVariable.move_to_end), "
    "OrderedDictVariable.move_to_end (2.15: its tp_methods entry); "
    "torch/_dynamo/variables/user_defined.py: OrderedDictVariable.call_method (2.13)",
    mirrors="torch 2.9's move_to_end branch (last= positional or keyword, KeyError for a missing key); "
    "none upstream for a last= of unknown truth (docs/upstream/ordered-dict-move-to-end/)",
    torch=">=2.7",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _GATE, params=_PARAMS,
               when=_storage_branch),
        # 2.7-2.12: a subclass made in the frame reaches its storage as a plain dict (user_cls dict)
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method", _GATE,
               params=_PARAMS, optional=True, when=_storage_branch),
        # 2.13: variables/user_defined.py's own class; 2.14: variables/dicts.py's, imported there
        Target("torch._dynamo.variables.user_defined", "OrderedDictVariable", "call_method", _GATE,
               params=_PARAMS, optional=True),
        # 2.15: the table entry, reached from VariableTracker.call_method (an OrderedDict) and
        # UserDefinedObjectVariable.call_method (a subclass)
        Target("torch._dynamo.variables.dicts", "OrderedDictVariable", "call_method", _GATE, params=_PARAMS,
               inherited=True, optional=True, when=_method_table_branch),
        Target("torch._dynamo.variables.user_defined", "UserDefinedOrderedDictVariable", "call_method", _GATE,
               params=_PARAMS, inherited=True, optional=True, when=_method_table_branch),
    ),
    requires=("torch._dynamo.variables:ConstantVariable",),
    summary="od.move_to_end(k, last) honours last= as CPython does, or graph-breaks where its truth is unknown",
    # 2.10-2.12 compile every last= Dynamo can read right: there the patch only turns the ones it misreads (an
    # object's own __bool__) into a graph break, which no catalog case can show (a case must compile)
    # and a dict without move_to_end only graph-breaks with the patch (test_without_the_patch_a_mapping_...)
    proven_by="tests/test_ordered_dict_move_to_end.py::test_without_the_patch_it_fails",
    history=(
        ("2.5-2.6", "a graph break on any `move_to_end` (no branch for it)"),
        ("2.7-2.8", "`assert not kwargs and len(args) == 1`: any `last`, and a missing key, crash the compile; "
         "a plain `dict`'s key is moved"),
        ("2.9-2.12", "`last` read only from a constant tracker (2.9-2.10: a `ConstantVariable`), else ignored; a "
         "plain `dict` crashes the compile"),
        ("2.13-2.15", "as 2.11, and a positional `last` read only when the key is a constant (crashes when `last` "
         "is no constant)"),
    ),
)
