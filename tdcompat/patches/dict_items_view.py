"""``d.items()`` is a tuple snapshot, not a view of the dict (torch 2.5-2.7).

Symptom: ``v = d.items(); del d["a"]; list(v)`` still lists ``a``; ``v = e.items()`` of an empty dict stays
falsy after ``e["k"] = 1``; ``type(d.items())`` is ``tuple`` (``isinstance(v, tuple)`` is true,
``OrderedDict.items()`` is not ``odict_items``); ``return d.items()`` or ``o.v = d.items()`` hands out a tuple;
``d.items()[0]`` returns a pair where CPython raises ``TypeError``; ``"a" in d.items()`` and
``(["l"], 1) in d.items()`` answer where CPython answers ``False`` / raises; and without ``fullgraph`` a view
alive at a graph break is a tuple in the resumed code (``s | v`` raises ``TypeError``). **Silently wrong**,
measured on 2.5.1, 2.6.0 and 2.7.1 (eager vs compiled, with and without ``fullgraph``; case
``dict_items_view``). 2.8 is right.

Root cause: ``ConstDictVariable.call_method`` (torch/_dynamo/variables/dicts.py), branch ``items``, returns
``TupleVariable([TupleVariable([k, v]) ...])`` (pytorch/pytorch#150110). 2.8 returns a
``DictItemsVariable`` (a ``DictViewVariable`` of kind ``items``) that reads the dict's items when used.

What the handler accepts: ``items()`` with no argument on exactly a ``ConstDictVariable`` of a ``dict`` or an
``OrderedDict`` or a ``DefaultDictVariable`` of ``collections.defaultdict`` (not a user subclass, a set
tracker nor a user mapping). It runs Dynamo's own branch (so the dict gets exactly the guards Dynamo installs
for ``items()``) and returns instead a view tracker over the same dict tracker, mirroring 2.8's
``DictItemsVariable``: what it shows is read from the dict tracker's items *when it is used* (Dynamo's dict
tracker holds the items as the frame has changed them so far), its type is CPython's (``dict_items``,
``odict_items``), it is rebuilt outside the frame as ``<the dict>.items()`` (a live view of the dict object
itself). It answers: iteration and everything Dynamo builds from iteration (``for``, ``list``, ``sorted``,
unpacking), ``len()``, truth (from ``len``), and ``x in v`` where CPython's ``dictitems_contains`` needs
nothing Dynamo cannot compute: ``False`` for a constant that is not a tuple or a tuple of another length;
for a pair with a key whose hash and ``==`` are pure functions of its value, the key's presence, then the
stored value ``==`` the probe where both are such values. ``dict(v)``, ``OrderedDict(v)``, ``d.update(v)``
(which take a tuple of pairs on 2.5-2.6 and not a view) get the pairs as they are at that call, which is
what CPython's merge reads. On 2.7, whose ``cmp_eq`` polyfill asks the view's ``__eq__`` (``__lt__``, ...), a
comparison with a set, a frozenset, a keys view or another items view is CPython's ``dictview_richcompare`` on
equal real copies where every element is a constant by value (:mod:`tdcompat.view_values`; upstream's
``test_cross_type_cmp_dict_items_vs_set`` ``==``/``!=`` passed natively, the snapshot being unequal to any set).
On 2.5-2.6 ``BuiltinVariable`` refuses a (view, set) pair and only constant-folds a comparison of two constants:
there the view is a constant (a real ``dict_items`` of an equal copy) to the six comparison builtins alone, where
every key and value is a constant by value (``_comparison_constant``): the fold is CPython's comparison, which
reads contents only; ``is``, ``getattr``, ``type`` and every other builtin still see a non-constant.
Anything else (set operators, ``v[0]``, ``hash(v)``, a method) is a graph break. On 2.7,
``dict(v)``/``update`` iterate it (Dynamo's ``construct_dict`` polyfill).
"""

from __future__ import annotations

import collections
from typing import NoReturn

from ..dynamo_api import bind_args, calling_builtin, graph_break, realize, rebuild_dict_view
from ..pure_values import hashes_by_value
from ..spec import Patch, Target
from ..view_values import COMPARISONS, NOT_PURE, operand_set, view_value
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-items-view"

#: The view type CPython's ``items()`` returns, per dict class accepted.
_VIEW_TYPES: dict = {
    dict: type({}.items()),
    collections.OrderedDict: type(collections.OrderedDict().items()),
    collections.defaultdict: type(collections.defaultdict().items()),
}
_VIEW: list = []


def _view_class():
    """The view tracker, built once Dynamo is imported (``import tdcompat`` does not import it)."""
    if _VIEW:
        return _VIEW[0]
    from torch._dynamo.variables.base import VariableTracker
    from torch._dynamo.variables.constant import ConstantVariable
    from torch._dynamo.variables.lists import TupleVariable

    class DictItemsViewVariable(VariableTracker):
        """A dict's ``items()`` view: reads ``dv_dict``'s items each time it is used (2.8's
        ``DictItemsVariable``)."""

        _nonvar_fields = {"view_type", *VariableTracker._nonvar_fields}
        kv = "items"  # what view_values reads, as 2.8's DictItemsVariable

        def __init__(self, dv_dict, view_type, **kwargs):
            super().__init__(**kwargs)
            self.dv_dict = dv_dict
            self.view_type = view_type

        def pairs(self):
            return [TupleVariable([k.vt, v]) for k, v in self.dv_dict.items.items()]

        def unpack_var_sequence(self, tx):
            return self.pairs()

        def has_unpack_var_sequence(self, tx):
            return True

        def python_type(self):
            return self.view_type

        def as_python_constant(self):
            value = _comparison_constant(self)
            if value is NOT_PURE:
                raise NotImplementedError
            return value

        def is_python_constant(self):
            return _comparison_constant(self) is not NOT_PURE

        def reconstruct(self, codegen):
            if not rebuild_dict_view(codegen, self.dv_dict, "items"):  # a dict made in the frame: rebuilt here
                codegen(self.dv_dict)
                codegen.load_method("items")
                codegen.call_method(0)

        def call_method(self, tx, name, args, kwargs):
            if name == "__len__" and not args and not kwargs:
                return ConstantVariable.create(len(self.dv_dict.items))
            if name == "__contains__" and len(args) == 1 and not kwargs:
                return ConstantVariable.create(_contains(self.dv_dict, args[0]))
            if name in COMPARISONS and len(args) == 1 and not kwargs:
                answer = _compare(self, name, args[0])
                if answer is not None:
                    return ConstantVariable.create(answer)
            graph_break("dict items view method", f"{self.view_type.__name__}.{name}",
                        "tdcompat models a dict's items() view for iteration, len() and `in` only")

        def __repr__(self):
            return f"DictItemsViewVariable({self.view_type.__name__})"

    _VIEW.append(DictItemsViewVariable)
    return DictItemsViewVariable


_COMPARISON_FUNCTIONS = frozenset(COMPARISONS.values())


def _comparison_constant(view):
    """The view as a real ``dict_items`` of an equal copy, only while a comparison builtin (``operator.eq``,
    ``ne``, ``lt``, ...: ``==`` and its kin) asks whether its arguments are constants, and only where every key
    and value is a constant by value; else ``NOT_PURE``. On 2.5-2.6 that is the only path a (view, set) pair
    has: ``BuiltinVariable`` constant-folds a comparison of two constants and refuses the pair otherwise, and
    the fold runs CPython's ``dictview_richcompare`` on the copy (a comparison reads the contents only, never
    identity or liveness). Every other builtin (``is``, ``getattr``, ``type``, ...) still sees a non-constant,
    so nothing else is folded over a copy. Keys and values are guarded as ``view_value`` reads them."""
    if calling_builtin() not in _COMPARISON_FUNCTIONS:
        return NOT_PURE
    return view_value(view)


def _compare(view, name, other):
    """CPython's ``dictview_richcompare(view, other)`` for a set, a frozenset, a keys view or another items view
    whose elements (and the view's keys and values) are all constants by value, computed on equal real copies
    (2.7's ``cmp_eq`` polyfill asks the view's ``__eq__``; 2.5-2.6 have no path to it); None otherwise (then a
    graph break)."""
    right = operand_set(realize(other), ("SetVariable", "FrozensetVariable"),
                        ("DictKeysVariable", "DictKeys", "DictItemsViewVariable"))
    if right is None:
        return None
    left = NOT_PURE if right is NOT_PURE else view_value(view)
    return None if left is NOT_PURE else COMPARISONS[name](left, right)


def _contains(dv_dict, probe) -> bool:
    """CPython's ``dictitems_contains(view, probe)`` where it runs no user code and reads no tensor: not a
    2-tuple, ``False``; a pair ``(key, value)`` with a pure key: absent, ``False``, else the stored value ``==``
    ``value`` for pure values (identity first, as ``PyObject_RichCompareBool``: pure values are equal to
    themselves). Anything else graph-breaks."""
    from torch._dynamo.variables.constant import ConstantVariable
    from torch._dynamo.variables.lists import TupleVariable

    probe = realize(probe)
    if type(probe) is ConstantVariable and type(probe.value) is not tuple and hashes_by_value(probe.value):
        return False  # not a tuple at all (a str, an int, None, ...)
    if type(probe) is TupleVariable and len(probe.items) != 2:
        return False
    if type(probe) is TupleVariable:
        key, value = (realize(item) for item in probe.items)
        if type(key) is ConstantVariable and hashes_by_value(key.value):
            found = next((v for k, v in dv_dict.items.items() if _const_key(k) == (True, key.value)), _ABSENT)
            if found is _ABSENT:
                if any(not _const_key(k)[0] for k in dv_dict.items):
                    _unsure("a key that is not a constant could equal the probe's")
                return False
            found = realize(found)
            if (type(found) is ConstantVariable and type(value) is ConstantVariable
                    and hashes_by_value(found.value) and hashes_by_value(value.value)):
                return bool(found.value == value.value)
    _unsure("the probe or the stored value is not a constant whose == is its value's")


_ABSENT = object()


def _const_key(hashable) -> tuple:
    """``(True, key)`` for a dict tracker's key that is a pure constant, else ``(False, None)``."""
    from torch._dynamo.variables.constant import ConstantVariable

    vt = hashable.vt
    if type(vt) is ConstantVariable and hashes_by_value(vt.value):
        return True, vt.value
    return False, None


def _unsure(why: str) -> NoReturn:
    graph_break("`in` of a dict items view", why, "CPython's answer would run code Dynamo does not trace here")


def _accepted_class(instance):
    """The dict class of an exact ``dict``/``OrderedDict``/``defaultdict`` tracker, else None."""
    from torch._dynamo.variables.dicts import ConstDictVariable, DefaultDictVariable

    cls = getattr(instance, "user_cls", None)
    if type(instance) is ConstDictVariable and cls in (dict, collections.OrderedDict):
        return cls
    if type(instance) is DefaultDictVariable and cls is collections.defaultdict:
        return cls
    return None


def _items(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "items", [], {})``: Dynamo's branch for its guards, then the view."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or bound[1] != "items" or bound[2] or bound[3]:
        return DEFER
    cls = _accepted_class(instance)
    if cls is None:
        return DEFER
    wrapped(*args, **kwargs)  # Dynamo's own guards for items() (key order; 2.7: the keys)
    effects_begin()
    return _view_class()(instance, _VIEW_TYPES[cls])  # as 2.8 builds its DictItemsVariable


def _as_pairs(vt):
    """A view as the tuple of pairs Dynamo 2.5-2.6's consumers take: the items as they are now."""
    from torch._dynamo.variables.lists import TupleVariable

    return TupleVariable(vt.pairs())


def _update(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "update", [view], {...})``: the view's pairs as a tuple."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or bound[1] != "update" or len(bound[2]) != 1 or not _VIEW or type(bound[2][0]) is not _VIEW[0]:
        return DEFER
    return wrapped(bound[0], "update", [_as_pairs(bound[2][0])], bound[3])


@fail_safe(NAME)
def _call_custom_dict(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_custom_dict(tx, user_cls, view)`` (``dict(v)``, ``OrderedDict(v)``; a
    staticmethod): the view's pairs as a tuple."""
    if len(args) != 3 or not _VIEW or type(args[2]) is not _VIEW[0]:
        return DEFER
    return wrapped(args[0], args[1], _as_pairs(args[2]), **kwargs)


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method`` routed here for ``items`` and ``update``."""
    name = args[1] if len(args) > 1 else kwargs.get("name")
    if name == "items":
        return _items(wrapped, instance, args, kwargs)
    return _update(wrapped, instance, args, kwargs)


#: On ``ConstDictVariable.call_method``: only ``items`` and ``update`` reach the handler (the name gate it
#: shares with the other dict-method patches).
_call_method_gate = routed_gate(_call_method, method_name_gate, frozenset({"items", "update"}))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`v = d.items(); del d['a']; list(v)` **still lists `a`**, `type(d.items())` is `tuple`, `return "
         "d.items()` returns a tuple, `d.items()[0]` returns a pair (CPython: `TypeError`)",
         "2.5–2.7",
         "(`<2.8`)"),
    ),
    fixes="d.items() is a tuple snapshot in compiled code: later changes of the dict are not seen, its type is "
    "tuple, it is returned or stored as a tuple, it can be indexed (silently wrong, torch <2.8)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method (the items branch returns a "
    "TupleVariable; pytorch/pytorch#150110); torch/_dynamo/variables/builtin.py: BuiltinVariable.call_custom_dict "
    "(2.5-2.6 take a tuple of pairs, not a view)",
    mirrors="torch 2.8: DictItemsVariable, a DictViewVariable of kind items (pytorch/pytorch#150110)",
    torch="<2.8",
    fixed_upstream="2.8: ConstDictVariable.call_method('items') returns a DictItemsVariable",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_custom_dict", _call_custom_dict,
               params=("tx", "user_cls")),
    ),
    summary="d.items() is a live view of the dict (its own type, rebuilt as d.items()), not a tuple snapshot",
    history=(
        ("2.5-2.7", "`items()` returns a `TupleVariable` of pairs: a snapshot, of type tuple, indexable, returned "
         "and stored as a tuple (silently wrong)"),
        ("2.8+", "`DictItemsVariable` (pytorch/pytorch#150110)"),
    ),
)
