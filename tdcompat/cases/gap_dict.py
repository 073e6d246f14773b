"""Gap 2 (issue 4): ``dict()`` and ``**`` over mappings Dynamo tracks as modules or plain objects.

Every pattern runs over five kinds of mapping:

``hmod``   ``class (nn.Module, MutableMapping)`` with ``__hash__`` defined (tracked as
           ``UnspecializedNNModuleVariable``);
``umod``   the same class without ``__hash__``: unhashable, since ``Mapping`` sets
           ``__hash__ = None``. The harness snapshots every ``nn.Module`` input with
           ``named_parameters()``, which raises for such a module even in eager, so
           these cases hand the module over inside a closure (``_hide``): Dynamo
           still wraps it from a real source (the closure cell), the snapshot does
           not walk it;
``plain``  a plain ``MutableMapping`` that inherits ``keys()/items()/values()``
           (``MutableMappingVariable``);
``iter``   a plain ``MutableMapping`` whose ``__iter__`` is not its keys (it walks a
           batch dimension, as ``TensorDict.__iter__`` does); ``dict()`` and ``**``
           must use ``keys()`` and ``__getitem__``, as CPython does;
``tdp``    ``TensorDictParams`` (needs tensordict); it is a module, and its
           ``__iter__`` walks the batch dimension too.

Patterns: ``dict(x)`` followed by writes to the result (the source must not
change), ``dict(x, key=v)``, ``{**x}``, ``f(**x)``, and the helpers users pair
with them (``keys()``, ``values()``, ``items()``, ``len()``, ``in``); plus a
use of the unhashable module without ``dict()`` (only "unhashable-module"
needed). Four more cases check that an ``items()`` or ``keys()`` that disagree
with iteration are read the way CPython reads them (``keys()`` + ``__getitem__``):
2.10+ ``dict(x)`` reads ``items()``, 2.7-2.12 ``{**x}``/``f(**x)`` iterate.
"""

from __future__ import annotations

import collections
import types
from collections import OrderedDict

import torch
from torch import nn

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, CaseList, Expect
from .mappings import StoreMapping

# -- the mappings -------------------------------------------------------------


class HashableModuleMapping(nn.Module, StoreMapping):
    """A module that is a mapping, with the usual workaround ``__hash__``."""

    def __init__(self, items):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(()))
        self._store = dict(items)

    def __hash__(self):
        return id(self)


class UnhashableModuleMapping(nn.Module, StoreMapping):
    """The same without ``__hash__``: ``hash(m)`` raises, eager ``dict(m)`` works."""

    def __init__(self, items):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(()))
        self._store = dict(items)


class PlainMapping(StoreMapping):
    """Inherits ``keys()``, ``items()``, ``values()`` from ``Mapping``."""

    def __init__(self, items):
        self._store = dict(items)


class BatchIterMapping(StoreMapping):
    """Iteration walks the leading (batch) dimension, like ``TensorDict``;
    ``keys()``/``items()``/``values()`` are the mapping's own."""

    def __init__(self, items):
        self._store = dict(items)

    def __iter__(self):
        first = next(iter(self._store.values()))
        for i in range(first.shape[0]):
            yield {k: v[i] for k, v in self._store.items()}

    def keys(self):
        return self._store.keys()

    def items(self):
        return self._store.items()

    def values(self):
        return self._store.values()


class ItemsDisagreeMapping(StoreMapping):
    """``items()`` yields scaled values; ``dict()`` must not use it (CPython reads
    ``keys()`` and ``__getitem__``)."""

    def __init__(self, items):
        self._store = dict(items)

    def items(self):
        return [(k, v * 10) for k, v in self._store.items()]


class KeysDisagreeMapping(StoreMapping):
    """``keys()`` lists a subset of what ``__iter__`` yields: ``dict()`` reads ``keys()``."""

    def __init__(self, items):
        self._store = dict(items)

    def keys(self):
        return [k for k in self._store if not k.startswith("_")]


def _hide(obj):
    """Hands ``obj`` over through a closure cell: ``snapshot()`` records a
    function by name only, so an unhashable module behind it is not walked with
    ``named_parameters()`` (which raises in eager)."""

    def get():
        return obj

    return get


# -- inputs --------------------------------------------------------------------


def _items():
    return {"a": torch.randn(3), "b": torch.randn(3)}


def _hmod():
    return (HashableModuleMapping(_items()),)


def _umod():
    return (_hide(UnhashableModuleMapping(_items())),)


def _plain():
    return (PlainMapping(_items()),)


def _iter():
    return (BatchIterMapping(_items()),)


def _tdp():
    from tensordict import TensorDict, TensorDictParams

    return (TensorDictParams(TensorDict(_items(), batch_size=[])),)


def _items_disagree():
    return (ItemsDisagreeMapping(_items()),)


def _keys_disagree():
    items = _items()
    items["_private"] = torch.randn(3)
    return (KeysDisagreeMapping(items),)


def _get(x):
    """The mapping itself (unwraps ``_hide``)."""
    return x() if isinstance(x, types.FunctionType) else x


# -- patterns ------------------------------------------------------------------


def dict_then_write(x):
    x = _get(x)
    d = dict(x)
    d["new"] = d["a"] * 2
    d["a"] = d["a"] + 1
    del d["b"]
    return d, x["a"] + 0, len(x)


def dict_with_kwargs(x):
    x = _get(x)
    d = dict(x, extra=torch.ones(3), a=torch.zeros(3))
    return d


def brace_unpack(x):
    x = _get(x)
    d = {"first": torch.ones(1), **x, "last": torch.zeros(1)}
    d["a"] = d["a"] * 3
    return d


def _sum_kwargs(**kwargs):
    out = {k: v * 2 for k, v in kwargs.items()}
    out["count"] = len(kwargs)
    return out


def call_unpack(x):
    x = _get(x)
    return _sum_kwargs(**x)


def views(x):
    x = _get(x)
    keys = list(x.keys())
    looped = [k for k in x.keys()]
    values = [v + 1 for v in x.values()]
    items = tuple(x.items())
    scaled = [(k, v * 2) for k, v in x.items()]
    return keys, looped, values, items, scaled, len(x), "a" in x, "zz" in x


def use_module(x):
    x = _get(x)
    return x["a"] * x.scale + x["b"]


def dict_only(x):
    d = dict(x)
    d["sum"] = d["a"] + d["b"]
    return d


# -- cases ---------------------------------------------------------------------

P = ("module-mapping-dict",)
PU = ("module-mapping-dict", "unhashable-module")

_KINDS = (
    # kind, builder, patches, needs_tensordict
    ("hmod", _hmod, P, False),
    ("umod", _umod, PU, False),
    ("plain", _plain, P, False),
    ("iter", _iter, P, False),
    ("tdp", _tdp, P, True),
)

_PATTERNS = (
    ("dict_then_write", dict_then_write, "d = dict(x); writes to d; the source is unchanged"),
    ("dict_with_kwargs", dict_with_kwargs, "dict(x, extra=..., a=...)"),
    ("brace_unpack", brace_unpack, "{'first': ..., **x, 'last': ...}"),
    ("call_unpack", call_unpack, "f(**x)"),
    ("views", views, "x.keys(), x.values(), x.items(), len(x), k in x"),
)

#: Unpatched outcomes per (kind, pattern), measured (eager and aot_eager alike) on
#: torch 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0, 2.13.0 and 2.15.0
#: (tensordict 0.6.2, 0.7.2, 0.14.3 up to 2.10, 0.15.3 from 2.11). 2.12 has no
#: environment: where a boundary falls between 2.11 and 2.13 it is put at 2.13.
_BEFORE_CONSTRUCT_DICT = (Expect("<2.7", GRAPH_BREAK),)  # 2.5/2.6 call_custom_dict: unimplemented
_VIEWS_NOT_UNPACKABLE = (Expect("<2.9", GRAPH_BREAK),)  # list(KeysView(...)): 2.9 unpacks user iterables
_ITERATES_SRC = (Expect(">=2.7,<2.10", GRAPH_BREAK),)  # construct_dict: `for key in src`
_ALWAYS = (Expect(">=2.5", GRAPH_BREAK),)

UNPATCHED = {
    **{(kind, p): _BEFORE_CONSTRUCT_DICT for kind in ("hmod", "plain")
       for p in ("dict_then_write", "dict_with_kwargs", "brace_unpack", "call_unpack")},
    ("hmod", "views"): _VIEWS_NOT_UNPACKABLE,
    ("plain", "views"): _VIEWS_NOT_UNPACKABLE,
    **{("umod", p): _ALWAYS for p in ("dict_then_write", "dict_with_kwargs", "brace_unpack", "call_unpack", "views")},
    ("umod", "use_module"): _ALWAYS,
    # BatchIterMapping overrides items(), which 2.5/2.6 inline; dict(x, k=v) is unimplemented there
    ("iter", "dict_then_write"): _ITERATES_SRC,
    ("iter", "dict_with_kwargs"): (Expect("<2.10", GRAPH_BREAK),),
    ("iter", "brace_unpack"): _ITERATES_SRC,
    ("iter", "call_unpack"): _ITERATES_SRC,
    **{("tdp", p): (Expect("<2.10", GRAPH_BREAK),)
       for p in ("dict_then_write", "dict_with_kwargs", "brace_unpack", "call_unpack")},
    ("tdp", "views"): _VIEWS_NOT_UNPACKABLE,
    # 2.5/2.6 inline the overriding items(); 2.7-2.9 iterate; 2.10+ read items() again
    ("items_disagree", "dict_only"): (Expect("<2.7", WRONG_RESULT), Expect(">=2.10", WRONG_RESULT)),
    ("keys_disagree", "dict_only"): (Expect("<2.7", GRAPH_BREAK), Expect(">=2.7", WRONG_RESULT)),
    # 2.13 ConstDictVariable.update reads keys() + __getitem__ itself
    ("keys_disagree", "brace_unpack"): (Expect("<2.7", GRAPH_BREAK), Expect(">=2.7,<2.13", WRONG_RESULT)),
    ("keys_disagree", "call_unpack"): (Expect("<2.7", GRAPH_BREAK), Expect(">=2.7,<2.13", WRONG_RESULT)),
}


def _cases():
    out = []
    for kind, inputs, patches, needs_td in _KINDS:
        for pattern, fn, doc in _PATTERNS:
            name = f"gap_dict_{kind}_{pattern}"
            out.append(
                Case(
                    name,
                    patches,
                    fn,
                    inputs,
                    unpatched=UNPATCHED.get((kind, pattern), ()),
                    needs_tensordict=needs_td,
                    doc=f"{kind}: {doc}",
                )
            )
    out.append(
        Case(
            "gap_dict_umod_use_without_dict",
            ("unhashable-module",),
            use_module,
            _umod,
            unpatched=UNPATCHED.get(("umod", "use_module"), ()),
            doc="umod: m['a'] * m.scale + m['b'] (no dict(): the module itself cannot be wrapped)",
        )
    )
    out.append(
        Case(
            "gap_dict_items_disagree",
            P,
            dict_only,
            _items_disagree,
            unpatched=UNPATCHED.get(("items_disagree", "dict_only"), ()),
            doc="dict(x) for a mapping whose items() differ from keys()/__getitem__",
        )
    )
    for pattern, fn in (("dict_only", dict_only), ("brace_unpack", brace_unpack), ("call_unpack", call_unpack)):
        out.append(
            Case(
                "gap_dict_keys_disagree" + ("" if pattern == "dict_only" else f"_{pattern}"),
                P,
                fn,
                _keys_disagree,
                unpatched=UNPATCHED.get(("keys_disagree", pattern), ()),
                doc=f"{pattern} for a mapping whose keys() are a subset of its iteration",
            )
        )
    return tuple(out)


CASES = CaseList(_cases())


def del_missing_in_try(x, d):
    try:
        del d["c"]
        return x + 1, "deleted", list(d)
    except KeyError:  # the exception's args/str are Dynamo's own model (wrong on some releases)
        return x - 1, "KeyError", list(d)


def _dict_without_c():
    return torch.randn(3), {"a": 1, "b": 2}


def _add_c(args):
    """The second call's dict has the key the first call's lacked."""
    args[1]["c"] = 3


CASES.add(
    Case("dict_del_missing_key_in_try", ("dict-delitem-missing",), del_missing_in_try, _dict_without_c,
         vary=_add_c, unpatched=(Expect("<2.13", GRAPH_BREAK, detail="^InternalTorchDynamoError: KeyError"),),
         doc="`try: del d[k] / except KeyError` with k missing on the first call and present on the second"),
)


# -- dict.update() over a mapping by protocol, with no argument, with too many (dict-update-args,
# -- torch <2.13; upstream test_dicts.py test_dict_update_from_mapping_like and its neighbours) ------
class KeysAndItems:
    """``keys()`` and ``__getitem__`` only: CPython's ``dict.update``/``{**m}`` take that as a mapping."""

    def __init__(self, x, n=2):
        self.d = {"a": x, "b": x + 1}
        self.n = n

    def keys(self):
        return [k for k in self.d if k != "skip"]

    def __getitem__(self, key):
        return self.d[key] * self.n


def update_from_mapping_like(x, m):
    d = {"a": x - 1, "z": 0}
    r = d.update(m, z=x)
    made = {"q": 1}
    made.update(KeysAndItems(x * 2))
    return d, r, made, {**m, "c": 3}, list(d)


def _x_only():
    return (torch.randn(3),)


def update_without_argument_or_with_two(x):
    d = {"a": x}
    r = d.update()
    try:
        d.update({"b": 1}, {"c": 2})
        raised = ""
    except TypeError as error:  # its text is Dynamo's own on 2.13-2.14
        raised = type(error).__name__
    return d, r, raised, x + 1


def unpack_mapping_like_in_try(x, m):
    """Dynamo 2.9-2.12's DICT_UPDATE raises an observed TypeError ("not a mapping"): the except runs."""
    try:
        return {"z": 0, **m}, x + 1
    except TypeError:
        return "TypeError", x - 1


CASES.add(
    Case("dict_unpack_mapping_like_in_try", ("dict-update-args",), unpack_mapping_like_in_try,
         lambda: (torch.randn(3), KeysAndItems(torch.randn(3))),
         unpatched=(Expect("<2.9", GRAPH_BREAK), Expect("<2.13", WRONG_RESULT)),
         doc="`try: {**m} / except TypeError` where m has keys() and __getitem__: silently the except on 2.9-2.12"),
    Case("dict_update_mapping_like", ("dict-update-args",), update_from_mapping_like,
         lambda: (torch.randn(3), KeysAndItems(torch.randn(3))),
         unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="d.update(m, z=...) and {**m} where m has keys() and __getitem__ but no Mapping base"),
    Case("dict_update_argument_count", ("dict-update-args",), update_without_argument_or_with_two, _x_only,
         torch=">=2.8", unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="d.update() and `try: d.update(a, b) / except TypeError` (2.5-2.7 cannot raise TypeError in the trace)"),
)


class SubDict(dict):
    """A dict subclass that overrides nothing: ``SubDict.get`` is ``dict.get``."""


def _sub_dict_input():
    return SubDict(a=torch.randn(3), b=torch.randn(3)), torch.randn(3)


def _grow_sub_dict(args):
    """The second call's dict has one more key."""
    args[0]["k"] = torch.ones(3)


def sub_class_methods(d, x):
    """dict methods called through the subclass: ``SubDict.get(d, k)`` is ``dict.get(d, k)``."""
    got = SubDict.get(d, "a") + x
    keys = list(SubDict.keys(d))
    SubDict.__setitem__(d, "c", got)
    popped = SubDict.pop(d, "b")
    SubDict.update(d, {"u": x * 2})
    return got, keys, popped, SubDict.__contains__(d, "b"), len(d), sorted(SubDict.copy(d))


CASES.add(
    Case("dict_subclass_class_methods", ("dict-subclass-class-method",), sub_class_methods, _sub_dict_input,
         vary=_grow_sub_dict, torch=">=2.7",
         unpatched=(Expect("<2.9", GRAPH_BREAK),),
         doc="`SubDict.get(d, k)`, `.keys`, `.pop`, `.update`, `.__setitem__` for a dict subclass that overrides "
             "none of them (2.5-2.6 break on `dict.get(d, k)` too)"),
)


class GrowingDict(dict):
    """A dict subclass that gains its own ``get`` before the second call (the case's ``vary``)."""


def _own_get(self, key, default=None):
    return ("own", key)


def _growing_input():
    if "get" in vars(GrowingDict):
        del GrowingDict.get
    return GrowingDict(a=torch.randn(3)), torch.randn(3)


def _gains_get(args):
    GrowingDict.get = _own_get


def growing_class_get(d, x):
    """``GrowingDict.get(d, k)`` is ``dict.get`` only while no class on the MRO defines ``get``."""
    return GrowingDict.get(d, "a"), x + 1


def sub_method_without_receiver(x):
    """``SubDict.keys()`` with no dict: CPython's descriptor raises TypeError."""
    try:
        SubDict.keys()
    except TypeError:
        return x - 1
    return x + 1


def _x_tensor():
    return (torch.randn(3),)


CASES.add(
    Case("dict_subclass_gains_method_between_calls", ("dict-subclass-class-method",), growing_class_get,
         _growing_input, vary=_gains_get, torch=">=2.7",
         unpatched=(Expect("<2.9", GRAPH_BREAK), Expect(">=2.9", WRONG_RESULT)),
         doc="`GrowingDict.get(d, k)`, then `GrowingDict.get = ...` before the second call: 2.9+ keep calling "
             "dict.get (no guard on the class attribute)"),
    Case("dict_subclass_method_without_receiver", ("dict-subclass-class-method",), sub_method_without_receiver,
         _x_tensor, torch=">=2.7",
         unpatched=(Expect("<2.9", GRAPH_BREAK),
                    Expect("<2.13", GRAPH_BREAK, detail=r"^InternalTorchDynamoError: IndexError"),),
         doc="`try: SubDict.keys() / except TypeError`: a graph break on 2.7-2.8, the compile crashed on 2.9-2.12 "
             "(IndexError out of Dynamo)"),
)


def or_invalid_operand(d, x):
    """``d | 1`` and ``d |= None`` in a try: TypeError, whose text the program keeps."""
    out = []
    for b in (1, "ab", (1, 2)):
        try:
            out.append(d | b)
        except TypeError as error:
            out.append(str(error))
    try:
        d |= None
    except TypeError as error:
        out.append(str(error))
    return out, x + 1


CASES.add(
    Case("dict_or_invalid_operand_in_try", ("dict-or-invalid-operand",), or_invalid_operand,
         lambda: ({"a": torch.randn(3)}, torch.randn(3)), torch=">=2.8",
         unpatched=(Expect("<2.11", GRAPH_BREAK, detail=r"^InternalTorchDynamoError: (TypeError|AttributeError)"),
                    Expect("<2.13", WRONG_RESULT)),
         doc="`try: d | 1 / except TypeError as e: str(e)`: the compile crashed on 2.8-2.10, 2.11-2.12 word the "
             "error \"'dict'and 'int'\""),
)


def refused_argument_counts(d, x):
    """``d.keys(1)``, ``d.get()``, ``d.copy(1)`` in a try: CPython raises TypeError before anything."""
    out = []
    for call in (lambda: d.keys(1), lambda: d.get(), lambda: d.copy(1), lambda: d.get(key="a")):
        try:
            out.append(call())
        except TypeError as error:
            out.append(type(error).__name__)
    return out, x + 1


CASES.add(
    Case("dict_method_refused_argument_count", ("dict-method-arity",), refused_argument_counts,
         lambda: ({"a": torch.randn(3)}, torch.randn(3)), torch=">=2.7",
         unpatched=(Expect("<2.9", GRAPH_BREAK, detail=r"^(AssertionError|InternalTorchDynamoError)"),),
         doc="`try: d.keys(1) / except TypeError`: the compile crashed on 2.7-2.8 (AssertionError, IndexError out "
             "of Dynamo)"),
)


# -- builtin-subclass-truth: the truth of a builtin container subclass ------------------------------


class TruthDict(dict):
    """A dict subclass that adds nothing: CPython's truth is dict's length."""


class TruthList(list):
    """A list subclass that adds nothing."""


class TruthODict(collections.OrderedDict):
    """An OrderedDict subclass that adds nothing."""


class TruthTuple(tuple):
    """A tuple subclass that adds nothing."""


class TruthStr(str):
    """A str subclass that adds nothing."""


def dict_subclass_truth(d, items, x):
    """``if d:``, ``not items``, ``d or default`` on dict/list subclasses passed in (empty on one call), then
    ``d.clear()`` and the test again: each is ``len() != 0`` in CPython."""
    out = x + (1 if d else 0)
    if not items:
        out = out * 2
    chosen = d or {"default": 1}
    n = len(chosen)
    d.clear()
    return out, n, (1 if d else 0)


def _dict_subclass_truth_inputs():
    return TruthDict(), TruthList(), torch.randn(3)


def _dict_subclass_truth_vary(args):
    args[0].update(a=torch.ones(2), b=2)
    args[1].append(1)


class TruthSet(set):
    """A set subclass that adds nothing."""


def container_subclass_truth(box, x):
    """``if d:``, ``not s``, ``o or default``, ``o and value`` on dict/set/OrderedDict subclasses passed in
    (empty on one call): CPython's truth is their length (a deque subclass: 2.12+ break on it natively)."""
    d, s, o = box
    out = x + (1 if d else 0)
    out = out * (2 if not s else 3)
    return out, (o or "no items"), (o and "items")


def _container_truth_inputs():
    return [TruthDict(), TruthSet(), TruthODict()], torch.randn(3)


def _container_truth_vary(args):
    args[0][:] = [TruthDict(a=1), TruthSet({1}), TruthODict(b=2)]


def immutable_subclass_truth(box, x):
    """``if t:``, ``not s``, ``t or default``, ``s and value`` on tuple/str subclasses passed in, empty on one
    call: CPython's truth is their length."""
    t, s = box
    out = x + (1 if t else 0)
    out = out * (2 if not s else 3)
    return out, (t or ("none",)), (s and "text")


def _immutable_truth_inputs():
    return [TruthTuple(), TruthStr("")], torch.randn(3)


def _immutable_truth_vary(args):
    args[0][:] = [TruthTuple((1, 2)), TruthStr("ab")]


CASES.add(
    Case("dict_subclass_truth", ("builtin-subclass-truth",), dict_subclass_truth, _dict_subclass_truth_inputs,
         vary=_dict_subclass_truth_vary, torch=">=2.7",
         unpatched=(Expect("<2.12", WRONG_RESULT),),
         doc="`if d:` on an empty dict (list) subclass passed in, and after `d.clear()` in the frame: true on "
             "2.7-2.11 (2.5-2.6 cannot trace `d.clear()` on a dict subclass)"),
    Case("container_subclass_truth", ("builtin-subclass-truth",), container_subclass_truth,
         _container_truth_inputs, vary=_container_truth_vary,
         unpatched=(Expect("<2.12", WRONG_RESULT),),
         doc="`if d:`, `not s`, `o or x`, `o and x` on empty dict / set / OrderedDict subclasses passed in: "
             "true on 2.5-2.11"),
    Case("immutable_subclass_truth", ("builtin-subclass-truth",), immutable_subclass_truth, _immutable_truth_inputs,
         vary=_immutable_truth_vary,
         unpatched=(Expect("<2.12", WRONG_RESULT),),
         doc="`if t:`, `not s`, `t or x`, `s and x` on an empty tuple / str subclass passed in: true on 2.5-2.11"),
)


# -- defaultdict-construction: a defaultdict built in the frame --------------------------------------


def defaultdict_with_keywords(x, n):
    """``defaultdict(list, a=x, b=n)``: the items CPython's ``dict.__init__`` puts there, then the factory
    for a missing key (a mapping argument too: tests/test_defaultdict_construction.py)."""
    d = collections.defaultdict(list, a=x, b=n)
    d["c"].append(n)
    return d, len(d)


def defaultdict_keywords_read(x, n):
    """``defaultdict(list, a=x, b=n)`` read in the frame (it never leaves it as itself)."""
    d = collections.defaultdict(list, a=x, b=n)
    d["c"].append(n)
    return sorted(d), len(d), x + 1


def defaultdict_without_factory(x, n):
    """``defaultdict()`` and ``defaultdict(None, a=x)``: a missing key raises ``KeyError``."""
    d = collections.defaultdict()
    try:
        d[n] += 1
    except KeyError:
        d[n] = x + 1
    e = collections.defaultdict(None, a=x)
    try:
        e["missing"]
    except KeyError:
        e["k"] = n
    return d, e


def defaultdict_counter(x, keys):
    """The counter idiom, ``defaultdict(int)`` built in the frame: counted, a missing key read, returned; a
    ``defaultdict(float, mapping)`` beside it (tests/test_defaultdict_construction.py has str, bool, pairs)."""
    d = collections.defaultdict(int)
    for k in keys:
        d[k] += 1
    f = collections.defaultdict(float, {"z": 2.5})
    f["a"] += len(keys)
    return d, f, x * d["a"], d["missing"] + f["missing"], len(d)


def _defaultdict_inputs():
    return torch.randn(3), 1


def _defaultdict_vary(args):
    args[0].add_(1)


def _counter_inputs():
    return torch.randn(3), ["a", "b"]


def _counter_vary(args):
    args[0].add_(1)
    args[1].extend(("a", "c"))


CASES.add(
    Case("defaultdict_with_keywords", ("defaultdict-construction",), defaultdict_with_keywords,
         _defaultdict_inputs, vary=_defaultdict_vary, torch=">=2.8",
         unpatched=(Expect("<2.10", WRONG_RESULT),),
         doc="`defaultdict(list, a=x)` built in the frame: the keywords dropped on 2.8-2.9 (2.5-2.7 return any "
             "frame-made defaultdict as a plain dict)"),
    Case("defaultdict_keywords_read", ("defaultdict-construction",), defaultdict_keywords_read,
         _defaultdict_inputs, vary=_defaultdict_vary,
         unpatched=(Expect("<2.10", WRONG_RESULT),),
         doc="`defaultdict(list, a=x)` built and read in the frame: empty on 2.5-2.9 (the keywords dropped)"),
    Case("defaultdict_without_factory", ("defaultdict-construction",), defaultdict_without_factory,
         _defaultdict_inputs, vary=_defaultdict_vary, torch=">=2.8",
         unpatched=(Expect("<2.10", GRAPH_BREAK, detail=r"^InternalTorchDynamoError: IndexError"),),
         doc="`defaultdict()` built in the frame crashes the compile on 2.8-2.9 (IndexError), also without "
             "fullgraph; `defaultdict(None, ...)` is a graph break"),
    # 2.5-2.7 return a frame-made defaultdict as a plain dict without defaultdict-reconstruct: both patches there
    Case("defaultdict_counter", ("defaultdict-construction", "defaultdict-reconstruct"), defaultdict_counter,
         _counter_inputs, vary=_counter_vary,
         unpatched=(Expect("<2.10", GRAPH_BREAK),),
         doc="`defaultdict(int)` / `defaultdict(float, d)` built in the frame (the counter idiom): a graph break "
             "on 2.5-2.9 (Dynamo takes list/tuple/dict/set factories only)"),
)


# -- defaultdict-as-dict: dict() / OrderedDict() of a defaultdict ---------------------------------------


def defaultdict_to_dict(x, d):
    """``dict(d)`` and ``OrderedDict(d)`` of a ``defaultdict`` passed in and of one made in the frame: plain
    copies of the items, written and read back (tests/test_defaultdict_as_dict.py has more shapes)."""
    e = dict(d)
    e["new"] = x.sum()
    m = collections.defaultdict(list)
    m[len(d)].append(1)
    o = collections.OrderedDict(m)
    o["k"] = 2
    return e, list(e), o, x + len(e) + len(o)


def _defaultdict_input():
    d = collections.defaultdict(list)
    d["a"] = 1
    d["b"].append(2)
    return torch.randn(3), d


def _defaultdict_input_vary(args):
    args[0].add_(1)
    args[1]["c"] = 3


CASES.add(
    Case("defaultdict_to_dict", ("defaultdict-as-dict",), defaultdict_to_dict, _defaultdict_input,
         vary=_defaultdict_input_vary,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"^AssertionError"),),
         doc="`dict(d)` / `OrderedDict(d)` of a defaultdict raise `AssertionError` out of torch.compile on "
             "2.5-2.6, also without fullgraph"),
)


# -- set-subclass-replay: a set subclass's items written back after the call ---------------------------


class _ItemSet(set):
    pass


def set_subclass_changes(x, s):
    """``s.add``/``discard``/``update`` on a set subclass passed in, and one made in the frame and returned:
    the items the frame ended with, read back in the frame and present after the call."""
    s.add(len(s) + 10)
    s.discard(1)
    s.update({7})
    t = _ItemSet([len(s), 3])
    t.add(4)
    return x + len(s), sorted(s), t


def _set_subclass_inputs():
    return torch.randn(3), _ItemSet([1, 2])


def _set_subclass_vary(args):
    args[0].add_(1)
    args[1].add(5)


CASES.add(
    Case("set_subclass_changes", ("set-subclass-replay",), set_subclass_changes, _set_subclass_inputs,
         vary=_set_subclass_vary, torch=">=2.9",
         unpatched=(Expect("<2.15", WRONG_RESULT),),
         doc="`s.add(v)` on a set subclass passed in is lost after the call, one made in the frame comes back "
             "empty on 2.9-2.14 (2.5-2.8 break on every set-subclass method)"),
)


# -- set-subclass-inplace: `s &= t` on a set subclass keeps `s` ---------------------------------------------


def set_subclass_inplace(x, s):
    """``k = t; t &= {...}; t |= ...; t -= ...; t ^= ...`` then ``t.add(v)`` on a set subclass made in the frame from
    the input's items: ``t`` stays the object ``k`` names, so the later ``add`` reaches it."""
    t = _ItemSet(s)
    k = t
    t &= {1, 2, 5, 10}
    t |= {len(t) + 20}
    t -= frozenset({2})
    t ^= {4, 9}
    t.add(7)
    return x + len(t), t is k, sorted(k), type(t).__name__


CASES.add(
    Case("set_subclass_inplace", ("set-subclass-inplace",), set_subclass_inplace,
         _set_subclass_inputs, vary=_set_subclass_vary, torch=">=2.9",
         unpatched=(Expect("<2.15", WRONG_RESULT),),
         doc="`k = s; s &= t; s.add(v)` on a set subclass: `s` is then a plain `set`, not `k`, which misses the "
             "later writes (2.9-2.14; 2.5-2.8 break on every set-subclass method)"),
)


# -- dict-copy-source / defaultdict-reconstruct: copies and defaultdicts leaving the frame --------------


def dict_copy_of_input(x, d):
    """``d.copy()`` of a dict passed in, changed, returned; the input changed after the copy."""
    e = d.copy()
    e["z"] = x.sum()
    d["w"] = 2
    return e, list(e), x + len(d)


def _dict_input():
    return torch.randn(3), {"a": 1, "b": 2}


def _dict_input_vary(args):
    args[0].add_(1)
    args[1]["c"] = 3


def defaultdict_returned(x, n):
    """A defaultdict made in the frame and returned: its type and factory (the case's snapshot sees the type)."""
    d = collections.defaultdict(list)
    d["a"].append(n)
    d[n].append(x.sum())
    return d, x + 1


CASES.add(
    Case("dict_copy_of_input", ("dict-copy-source",), dict_copy_of_input, _dict_input, vary=_dict_input_vary,
         unpatched=(Expect("<2.6", WRONG_RESULT),),
         doc="`d.copy()` of a dict passed in is rebuilt as the input on 2.5 (the copy's changes lost)"),
    Case("defaultdict_returned", ("defaultdict-reconstruct",), defaultdict_returned, _defaultdict_inputs,
         vary=_defaultdict_vary, torch="<2.13",
         unpatched=(Expect("<2.8", WRONG_RESULT),),
         doc="a defaultdict made in the frame comes back as a plain dict on 2.5-2.7 (2.13+: a graph break, "
             "Dynamo cannot rebuild it)"),
)


# -- tuple-subclass-no-args: T() of a tuple subclass ---------------------------------------------------


class _Pair(tuple):
    pass


def tuple_subclass_no_args(x, n):
    """``T()`` made in the frame, returned and read: the empty tuple of that type."""
    t = _Pair()
    return x + len(t) + n, t, bool(t)


CASES.add(
    Case("tuple_subclass_no_args", ("tuple-subclass-no-args",), tuple_subclass_no_args, _defaultdict_inputs,
         vary=_defaultdict_vary, torch=">=2.8",
         unpatched=(Expect("<2.14", GRAPH_BREAK, detail=r"^(InternalTorchDynamoError: IndexError|AssertionError)"),),
         doc="`T()` of a tuple subclass crashes the compile on 2.8-2.13 (IndexError, then AssertionError), also "
             "without fullgraph (2.5-2.7: a graph break, with and without tdcompat)"),
)


def dict_ior_input(x, d):
    """``d |= other`` on a dict passed in, an alias made before: the caller's dict and the alias see ``c``."""
    alias = d
    d |= {"c": x * 2}
    return x + 1, sorted(alias), len(d)


def _ior_inputs():
    return torch.randn(3), {"a": 1, "b": torch.ones(2)}


def _ior_vary(args):
    args[0].add_(1)
    args[1]["b"] = torch.zeros(2)


def set_ior_input(x, s):
    """``s |= other`` on a set passed in, an alias made before: the caller's set and the alias see the items."""
    alias = s
    s |= {"c", len(alias)}
    s |= frozenset({"f"})
    return x + 1, len(alias), "c" in alias, "f" in s


def _set_ior_inputs():
    return torch.randn(3), {"a", "b"}


def _set_ior_vary(args):
    args[0].add_(1)
    args[1].add("v")


def defaultdict_or_input(x, dd):
    """``dd | d`` and ``d | dd`` for a defaultdict passed in: defaultdicts with ``dd``'s factory, the left
    operand's keys first."""
    left = dd | {"c": x}
    right = {"c": x, "a": 0} | dd
    left["m"].append(1)  # the factory at work
    return x + 1, left, right


def _dd_or_inputs():
    return torch.randn(3), collections.defaultdict(list, {"a": 1, "b": [2]})


def _dd_or_vary(args):
    args[0].add_(1)
    args[1]["b"] = [3]


CASES.add(
    Case("dict_ior_input", ("dict-ior-in-place",), dict_ior_input, _ior_inputs, vary=_ior_vary,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"builtin: ior"),
                    Expect(">=2.7,<2.8", GRAPH_BREAK, detail=r"Failed to trace builtin operator"),
                    Expect(">=2.8,<2.9", WRONG_RESULT)),
         doc="`d |= other` on a dict passed in builds a new dict on 2.8: the caller's dict and an alias miss "
             "the keys (2.5-2.7: a graph break)"),
    Case("set_ior_input", ("dict-ior-in-place",), set_ior_input, _set_ior_inputs, vary=_set_ior_vary,
         unpatched=(Expect("<2.9", WRONG_RESULT),),
         doc="`s |= other` on a set passed in builds a new set on 2.5-2.8: the caller's set and an alias miss "
             "the items"),
    Case("defaultdict_or_input", ("defaultdict-or",), defaultdict_or_input, _dd_or_inputs, vary=_dd_or_vary,
         torch="<2.13",
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"builtin: or_"),
                    Expect(">=2.7,<2.8", GRAPH_BREAK, detail=r"Failed to trace builtin operator"),
                    Expect(">=2.8,<2.9", WRONG_RESULT), Expect(">=2.9,<2.11", GRAPH_BREAK, detail=r"^AssertionError")),
         doc="`dd | d` / `d | dd` for a defaultdict passed in: `d | dd` a plain dict on 2.8, `dd | d` crashes on "
             "2.9-2.10 (AssertionError, also without fullgraph); 2.5-2.7: a graph break; 2.13+ cannot "
             "return a defaultdict made from an input's (with and without tdcompat)"),
)


# -- dict-ior-in-place: `d |= pairs`, `d.__ior__(b)`; dict-update-args: `d.update(k=v)` ---------------------


def dict_ior_pairs_input(x, d):
    """``d |= <pairs>`` on a dict passed in (a list of pairs, a tuple of ``[key, value]`` lists, a dict's items):
    each pair stored in order, the caller's dict and an alias updated, an existing key kept in place."""
    alias = d
    d |= [("c", x * 2), ("a", 0)]
    d |= (["z", x.sum()], ["c", x + 3])
    d |= {"q": 1, "a": 5}.items()
    return x + 1, list(alias), alias["c"], len(d)


def dict_ior_constant_pairs(x, d):
    """``d |= [pairs]`` of constants on a dict passed in: 2.5-2.7 fold ``operator.ior`` over the constants, so
    the frame's name holds the right dict but the caller's dict and the alias do not."""
    alias = d
    d |= [("k", 1), ("n", d["n"] + 1)]
    alias["w"] = 0  # one dict under both names
    return x + 1, sorted(d), sorted(alias)


def _ior_constant_inputs():
    return torch.randn(3), {"n": 3}


def _ior_constant_vary(args):
    args[0].add_(1)
    args[1]["n"] = 7


def dict_ior_iterator_input(x, d):
    """``d |= <generator>`` (a generator function and a generator expression, each reading ``d`` as it grows):
    stored pair by pair, the next item drawn after the store of the one before (``len(d)`` grows), the
    generators left exhausted."""
    def grow():
        for key in ("p", "r"):
            yield key, len(d) + x
    d |= grow()
    pairs = ((k, x * len(d)) for k in ("s", "a"))
    d.__ior__(pairs)
    return x + 1, list(d), d["r"], d["s"], list(pairs)


def dict_dunder_ior(x, d):
    """``d.__ior__(b)`` spelled out, for a dict passed in (a dict, then a dict's items) and a set made in the
    frame: ``d`` itself, updated (a store through the result is seen through ``d``; not ``is``, which 2.5-2.6
    fold over copies of constant dicts)."""
    same = d.__ior__({"c": x * 2})
    same["w"] = 1  # d itself: seen through d
    again = d.__ior__({"m": x.sum(), "a": 0}.items())
    again["v"] = 2
    s = {"u"}
    s_same = s.__ior__({"v", len(d)})
    s_same.add("t")
    return x + 1, list(d), list(same), sorted(map(str, s))


def dict_update_keywords(x, d):
    """``d.update(k=v, ...)`` with keywords alone, on a dict passed in and one made in the frame: stored in the
    call's order, ``None``."""
    made = {"a": 1}
    result = made.update(b=x * 2, a=x)
    d.update(z=made["b"], a=0)
    return x + 1, result, list(made), list(d), d["z"]


CASES.add(
    Case("dict_ior_pairs_input", ("dict-ior-in-place",), dict_ior_pairs_input, _ior_inputs, vary=_ior_vary,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"builtin: ior"),
                    Expect(">=2.7,<2.8", GRAPH_BREAK, detail=r"Failed to trace builtin operator"),
                    Expect(">=2.8,<2.9", GRAPH_BREAK, detail=r"InternalTorchDynamoError")),
         doc="`d |= [(k, v), ...]` / `d |= other.items()` on a dict passed in: a graph break on 2.5-2.7, an "
             "internal error on 2.8 (`unsupported operand type(s) for |`)"),
    Case("dict_ior_constant_pairs", ("dict-ior-in-place",), dict_ior_constant_pairs, _ior_constant_inputs,
         vary=_ior_constant_vary,
         unpatched=(Expect("<2.8", WRONG_RESULT), Expect(">=2.8,<2.9", GRAPH_BREAK,
                                                         detail=r"InternalTorchDynamoError")),
         doc="`d |= [pairs]` of constants: the caller's dict is not updated on 2.5-2.7 (the operator folded "
             "over copies); an internal error on 2.8"),
    Case("dict_ior_iterator_input", ("dict-ior-in-place", "dict-update-lazy-pairs"), dict_ior_iterator_input,
         _ior_inputs, vary=_ior_vary, torch=">=2.7",
         unpatched=(Expect(">=2.7,<2.8", GRAPH_BREAK, detail=r"Failed to trace builtin operator"),
                    Expect(">=2.8,<2.9", GRAPH_BREAK, detail=r"InternalTorchDynamoError"),
                    Expect(">=2.9", WRONG_RESULT)),
         doc="`d |= generator`: a graph break on 2.7, an internal error on 2.8, and from 2.9 the "
             "generator drained before the first store (it reads `len(d)` unchanged) (2.5-2.6 cannot trace the "
             "generator, with and without tdcompat)"),
    Case("dict_dunder_ior", ("dict-ior-in-place",), dict_dunder_ior, _ior_inputs, vary=_ior_vary,
         unpatched=(Expect("<2.9", GRAPH_BREAK, detail=r"__ior__|Unsupported method call"),),
         doc="`d.__ior__(b)` / `s.__ior__(t)` spelled out: a graph break on 2.5-2.8"),
    Case("dict_update_keywords", ("dict-update-args",), dict_update_keywords, _ior_inputs, vary=_ior_vary,
         unpatched=(Expect("<2.6", GRAPH_BREAK, detail=r"update \[\]"),),
         doc="`d.update(k=v)` with keywords alone: a graph break on 2.5"),
)


# -- dict-or: `a | b` of two dicts (PEP 584) ------------------------------------------------------------


def dict_or(x, d):
    """``d | other`` and ``other | d`` of plain dicts (an input and dicts made in the frame): new dicts, the
    left operand's keys first, the right one's values win; the result written and read back; the input
    unchanged."""
    merged = d | {"b": x * 2, "c": 3}
    merged["z"] = x.sum()
    back = {"first": 0, "c": x} | merged
    return x + 1, merged, list(back), back["c"], d


def _dict_or_inputs():
    return torch.randn(3), {"a": 1, "b": torch.ones(3)}


def _dict_or_vary(args):
    args[0].add_(1)
    args[1]["b"] = torch.zeros(3)


CASES.add(
    Case("dict_or", ("dict-or",), dict_or, _dict_or_inputs, vary=_dict_or_vary,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"builtin: or_"),
                    Expect(">=2.7,<2.8", GRAPH_BREAK, detail=r"Failed to trace builtin operator")),
         doc="`a | b` of two dicts is unsupported on 2.5-2.7 (a graph break; 2.8 traces it)"),
)


def dict_or_ordered(x, od):
    """``od | {...}`` and ``{...} | od`` with an ``OrderedDict`` passed in: ``OrderedDict``s (its ``__or__`` and
    ``__ror__``), the left operand's keys first; the result written and read back; the input unchanged."""
    right = od | {"b": x * 2, "c": 3}
    left = {"c": x, "a": 0} | od
    left["c"] = left["a"] + right["c"]
    return x + 1, right, left, type(right).__name__, type(left).__name__, od


def _dict_or_ordered_inputs():
    return torch.randn(3), collections.OrderedDict(a=1, b=torch.ones(3))


def _dict_or_ordered_vary(args):
    args[0].add_(1)
    args[1]["b"] = torch.zeros(3)


def dict_or_ordered_constants(x, cfg):
    """``{...} | OrderedDict(...)`` of constants made in the frame: an ``OrderedDict`` (2.5-2.7 fold the
    operator over the constants into a plain ``dict``)."""
    merged = {"q": cfg["n"], "r": 4} | collections.OrderedDict(p=1, q=2)
    return x + 1, merged, type(merged).__name__, list(merged)


def _dict_or_ordered_constants_inputs():
    return torch.randn(3), {"n": 3}


def _dict_or_ordered_constants_vary(args):
    args[0].add_(1)
    args[1]["n"] = 7


CASES.add(
    Case("dict_or_ordered", ("dict-or",), dict_or_ordered, _dict_or_ordered_inputs, vary=_dict_or_ordered_vary,
         torch="<2.13",
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"builtin: or_"),
                    Expect(">=2.7,<2.8", GRAPH_BREAK, detail=r"Failed to trace builtin operator"),
                    Expect(">=2.8,<2.9", WRONG_RESULT)),
         doc="`d | od` with an `OrderedDict` passed in: a plain `dict` on 2.8 (a graph break on 2.5-2.7); 2.13+ "
             "cannot return an `OrderedDict` made from an input's (with and without tdcompat)"),
    Case("dict_or_ordered_constants", ("dict-or",), dict_or_ordered_constants, _dict_or_ordered_constants_inputs,
         vary=_dict_or_ordered_constants_vary, torch="<2.14",
         unpatched=(Expect("<2.9", WRONG_RESULT),),
         doc="`{...} | OrderedDict(...)` of constants is a plain `dict` on 2.5-2.8 (2.14+ do not trace "
             "`OrderedDict(p=1)`, with and without tdcompat)"),
)


# -- frozenset-inplace-op: `fs |= b` on a frozenset -------------------------------------------------------


def frozenset_inplace_op(x, s):
    """``fs |= b``, ``&=``, ``^=``, ``-=`` on a frozenset: the binary operator, a new frozenset each time (the
    one held under another name unchanged)."""
    fs = frozenset(s)
    kept = fs
    fs |= {"z", len(s)}
    fs -= {"a"}
    fs ^= frozenset({"q", "z"})
    fs &= s | {"q", len(s)}
    return x + 1, sorted(map(str, fs)), sorted(kept), type(fs).__name__


def _frozenset_inplace_op_inputs():
    return torch.randn(3), {"a", "b"}


def _frozenset_inplace_op_vary(args):
    args[0].add_(1)
    args[1].add("v")


CASES.add(
    Case("frozenset_inplace_op", ("frozenset-inplace-op",), frozenset_inplace_op, _frozenset_inplace_op_inputs,
         vary=_frozenset_inplace_op_vary, torch=">=2.9",
         unpatched=(Expect(">=2.9,<2.13", GRAPH_BREAK, detail=r"Illegal call_method update on a frozenset"),),
         doc="`fs |= b` (`&=`, `^=`, `-=`) on a frozenset crashes the compile on 2.9-2.12 (also without "
             "fullgraph); 2.5-2.8 build a `set` instead, with and without tdcompat (native)"),
)


# -- dict-update-lazy-pairs: a generator read while it fills a dict ---------------------------------------


def dict_update_lazy_pairs(x, d):
    """``d.update(gen)`` / ``od.update(map(...), q=...)`` where the generator reads the dict it fills: each
    pair is stored before the next is drawn, so ``len(d)`` grows under the generator; the keywords last."""
    d.update((k, len(d) + x) for k in ("p", "r"))
    od = collections.OrderedDict(a=x)
    od.update(map(lambda k: (k, len(od)), ("s", "t")), q=len(od))
    return x + 1, list(d), d["r"], list(od.items())


CASES.add(
    Case("dict_update_lazy_pairs", ("dict-update-lazy-pairs",), dict_update_lazy_pairs, _ior_inputs, vary=_ior_vary,
         torch=">=2.7",
         unpatched=(Expect(">=2.7", WRONG_RESULT),),
         doc="`d.update(gen)` where the generator reads `d`: every pair stored only after the generator is drained "
             "(2.7-2.15; 2.5-2.6 cannot trace the generator, with and without tdcompat)"),
)



# -- defaultdict-factory-read: `d.default_factory` compared with `is` ------------------------------------------


def defaultdict_factory_read(x, d):
    """``d.default_factory is list`` for a defaultdict passed in and one made in the frame, written into the
    input and read back; the factory called through the missing key."""
    made = collections.defaultdict(list)
    made["k"].append(len(d))
    d["seen"] = (d.default_factory is list, made.default_factory is list, made.default_factory is not dict)
    return x + 1, d["seen"], made["k"]


def _defaultdict_factory_read_inputs():
    return torch.randn(3), collections.defaultdict(list, a=1)


def _defaultdict_factory_read_vary(args):
    args[0].add_(1)
    args[1]["b"] = 2


CASES.add(
    Case("defaultdict_factory_read", ("defaultdict-factory-read",), defaultdict_factory_read,
         _defaultdict_factory_read_inputs, vary=_defaultdict_factory_read_vary,
         unpatched=(Expect("<2.11", WRONG_RESULT),),
         doc="`d.default_factory is list` is False for a defaultdict made in the frame (2.5-2.10) or passed in "
             "(2.7-2.10): Dynamo reads the factory as an opaque attribute"),
)


# -- ordered-dict-class-method: OrderedDict.<method>(od, ...) through the class --------------------------------


def ordered_dict_class_method(x, od):
    """``OrderedDict.update/setdefault/__ior__/pop(od, ...)`` on an OrderedDict passed in, read back."""
    OrderedDict.update(od, {"z": x.sum()})
    v = OrderedDict.setdefault(od, "n", 5)
    r = OrderedDict.__ior__(od, {"q": 3})
    p = OrderedDict.pop(od, "a")
    return x * v + p, list(r), list(od)


def ordered_dict_class_method_ior(x, od):
    """``OrderedDict.__ior__(od, b)`` is ``od`` itself (``odict_inplace_or``)."""
    r = OrderedDict.__ior__(od, {"q": 3})
    e = od
    return x + 1, r is od, e is od, list(od)


def ordered_dict_class_method_plain(x, d):
    """``OrderedDict.update(d, ...)`` of a plain dict: CPython raises TypeError (the descriptor does not apply)."""
    try:
        OrderedDict.update(d, b=2)
    except TypeError:
        d["caught"] = 1
    return x + 1, sorted(d)


def _ordered_dict_inputs():
    return torch.randn(3), OrderedDict(a=1.5, b=torch.ones(3))


def _plain_dict_inputs():
    return torch.randn(3), {"a": 1.5, "c": torch.ones(3)}


def _mapping_vary(args):
    args[0].add_(1)
    args[1]["v"] = 2


CASES.add(
    Case("ordered_dict_class_method", ("ordered-dict-class-method",), ordered_dict_class_method,
         _ordered_dict_inputs, vary=_mapping_vary,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"^InternalTorchDynamoError: AttributeError"),
                    Expect("<2.9", GRAPH_BREAK)),
         doc="`OrderedDict.update(od, b)` / `setdefault` / `__ior__` / `pop` through the class: a crash (2.5-2.6), "
             "a graph break (2.7-2.8)"),
    # 2.5-2.6 also need container-alias-identity (the patch `needs` it there) for `r is od`
    Case("ordered_dict_class_method_ior", ("ordered-dict-class-method", "container-alias-identity"),
         ordered_dict_class_method_ior, _ordered_dict_inputs, vary=_mapping_vary,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"^InternalTorchDynamoError: AttributeError"),
                    Expect("<2.9", GRAPH_BREAK), Expect("==2.13.*", WRONG_RESULT)),
         doc="`OrderedDict.__ior__(od, b) is od`: a crash (2.5-2.6), a graph break (2.7-2.8), False (2.13: a copy)"),
    Case("ordered_dict_class_method_plain", ("ordered-dict-class-method",), ordered_dict_class_method_plain,
         _plain_dict_inputs, vary=_mapping_vary, torch=">=2.9",
         unpatched=(Expect("<2.13", WRONG_RESULT),),
         doc="`OrderedDict.update(d, ...)` of a plain dict updates it where CPython raises TypeError (2.9-2.12)"),
)


# -- container-alias-identity: `e = d; e is d` for a dict or set --------------------------------------------------


def container_alias_identity(x, d):
    """``e is d`` for an alias of a dict passed in and of a set made in the frame, after a write."""
    e = d
    s = {1, len(d)}
    t = s
    e["k"] = 1
    return x + 1, e is d, t is s, d is not e, sorted(d)


def _constant_dict_inputs():
    return torch.randn(3), {"a": 1, "b": "s"}


CASES.add(
    Case("container_alias_identity", ("container-alias-identity",), container_alias_identity,
         _constant_dict_inputs, vary=_mapping_vary,
         unpatched=(Expect("<2.7", WRONG_RESULT),),
         doc="`e = d; e is d` is False for a dict or set of constants (2.5-2.6: `is` folded over copies)"),
)


# -- set-view-operator: a set and a dict view under | & - ^ -----------------------------------------------


def set_view_operator(x, d):
    """``s |= d.keys()`` rebinds ``s`` to a new set (CPython runs the view's reflected operator: ``set.__ior__``
    takes only sets), the name that held the old one keeps it; ``fs - d.keys()`` and ``s & d.items()`` are
    ``set``s; under ``try``, as code that expects the ``TypeError`` of a non-set operand writes it."""
    s = {"a", "b"}
    kept = s
    try:
        s |= d.keys()
    except TypeError:
        return x - 1, "TypeError", sorted(kept)
    fs = frozenset({"a", "q"}) - d.keys()
    pairs = {("a", 1), ("b", 2)} & d.items()
    return x + len(s), sorted(s), sorted(kept), type(fs).__name__, sorted(fs), sorted(pairs), s is kept


def _set_view_operator_inputs():
    return torch.randn(3), {"a": 1, "k": 2}


def _set_view_operator_vary(args):
    args[0].add_(1)
    args[1]["q"] = 3


CASES.add(
    Case("set_view_operator", ("set-view-operator",), set_view_operator, _set_view_operator_inputs,
         vary=_set_view_operator_vary, torch=">=2.9",
         unpatched=(Expect(">=2.9,<2.13", WRONG_RESULT),),
         doc="`s |= d.keys()` (a set and a dict view): a `TypeError` in the trace on 2.9-2.11 (taken by "
             "`except TypeError`), the set updated in place and `fs - d.keys()` a frozenset on 2.12"),
)


def set_view_operand(x, d):
    """``s | d.items()`` and ``e | d.keys()`` (a plain dict on the left: ``dict.__or__`` gives NotImplemented and
    the view's reflected ``|`` builds ``set(e)`` updated with the view), under ``try`` as code that expects the
    ``TypeError`` of a non-set operand writes it; ``s |= d.items()`` rebinds ``s``."""
    s = {("a", 1), "z"}
    kept = s
    e = {"a": x, "q": 2}
    try:
        u = s | d.items()
        v = e | d.keys()
    except TypeError:
        return x - 1, "TypeError", sorted(map(repr, kept))
    s |= d.items()
    return x + len(u), sorted(map(repr, u)), sorted(v), sorted(map(repr, s)), sorted(map(repr, kept)), s is kept


CASES.add(
    Case("set_view_operand", ("set-view-operator",), set_view_operand, _set_view_operator_inputs,
         vary=_set_view_operator_vary, torch=">=2.8",
         unpatched=(Expect(">=2.8,<2.9", GRAPH_BREAK, detail=r"^InternalTorchDynamoError: TypeError"),
                    Expect(">=2.9,<2.13", WRONG_RESULT)),
         doc="`s | d.items()` / `e | d.keys()` (a set or a dict on the left of a dict view): the compile crashes "
             "on 2.8 (`unsupported operand type(s) for |: 'dict' and 'dict_items'`), a `TypeError` in the trace "
             "on 2.9-2.12 (taken by `except TypeError`)"),
)


# -- set-inplace-operator: s -= t on a set passed in, fs |= t on a frozenset -----------------------------------


def set_inplace_operator(x, s):
    """``s -= t``, ``s ^= t``, ``s &= t`` on a set passed in update it: the caller sees it, and so does another
    name for it read back in the frame."""
    kept = s
    s -= {"a"}
    s ^= {"q", "b"}
    s &= {"b", "c", "q", len(s)}
    return x + len(s), sorted(kept), s is kept


def _set_inplace_operator_inputs():
    return torch.randn(3), {"a", "b", "c"}


def _set_inplace_operator_vary(args):
    args[0].add_(1)
    args[1].add("q")


CASES.add(
    Case("set_inplace_operator", ("set-inplace-operator",), set_inplace_operator, _set_inplace_operator_inputs,
         vary=_set_inplace_operator_vary,
         unpatched=(Expect("<2.9", WRONG_RESULT),),
         doc="`s -= t` / `s ^= t` / `s &= t` on a set passed in leave the caller's set unchanged (2.5-2.8; the "
             "frozenset forms: tests/test_set_inplace_operator.py)"),
)


# -- dict-truth-guard: not d / bool(d) of a dict passed in ---------------------------------------------------


def dict_truth(x, d):
    """``not d`` and ``bool(d)`` of a dict passed in, empty on the first call and filled on the second."""
    return x + 1, not d, bool(d)


def _dict_truth_inputs():
    return torch.randn(3), {}


def _dict_truth_vary(args):
    args[0].add_(1)
    args[1]["k"] = 1


CASES.add(
    Case("dict_truth", ("dict-truth-guard",), dict_truth, _dict_truth_inputs, vary=_dict_truth_vary,
         unpatched=(Expect(">=2.7", WRONG_RESULT),),
         doc="`not d` / `bool(d)` of a dict passed in keep the first call's answer (only the dict's type is "
             "guarded; 2.7-2.15)"),
)


# -- dict-subclass-merge: o | d of an OrderedDict subclass (2.13+: | through the number slots) -----------------


class _PlainOrdered(collections.OrderedDict):
    """An OrderedDict subclass that overrides nothing (what CPython's ``odict_or`` builds ``type(o)`` of)."""


def dict_ordered_subclass_or(x, o):
    """``o | d`` of an OrderedDict subclass passed in: a ``type(o)``, as CPython builds."""
    right = o | {"z": 1}
    right["w"] = len(o)
    return x + len(right), type(right).__name__, list(right.items())


def dict_ordered_subclass_ror(x, o):
    """``d | o`` of an OrderedDict subclass passed in, returned: a ``type(o)`` (its ``__ror__`` runs first)."""
    left = {"y": 0} | o
    return x - len(left), left


def _dict_ordered_subclass_or_inputs():
    return torch.randn(3), _PlainOrdered(a=1)


def _dict_ordered_subclass_or_vary(args):
    args[0].add_(1)
    args[1]["b"] = 2


CASES.add(
    Case("dict_ordered_subclass_or", ("dict-subclass-merge",), dict_ordered_subclass_or,
         _dict_ordered_subclass_or_inputs, vary=_dict_ordered_subclass_or_vary, torch=">=2.13",
         unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`o | d` of an OrderedDict subclass passed in is a plain OrderedDict (2.13-2.14) or dict (2.15); "
             "CPython's OrderedDict.__or__ builds `type(o)`"),
    Case("dict_ordered_subclass_ror", ("dict-subclass-merge",), dict_ordered_subclass_ror,
         _dict_ordered_subclass_or_inputs, vary=_dict_ordered_subclass_or_vary, torch=">=2.13",
         unpatched=(Expect(">=2.13", GRAPH_BREAK),),
         doc="`d | o` of an OrderedDict subclass passed in, returned: Dynamo builds `type(o)` from a class it "
             "cannot reconstruct (2.13: Reconstruction failure; 2.14-2.15: Unsupported function call)"),
)


# -- dict-view-reflected-or: s | view with the view on the right (2.13+) -----------------------------------


def dict_view_reflected_or(x, d):
    """``s | d.keys()``: CPython keeps the set's elements (``1``, ``2.0``) where the view holds equal ones of
    other types (``1.0``, ``2``)."""
    s = {1, 2.0, "a"}
    r = s | d.keys()
    r.add("w")
    return x + len(r), sorted((type(e).__name__, repr(e)) for e in r)


def _dict_view_reflected_or_inputs():
    return torch.randn(3), {1.0: 0, 2: 1}


CASES.add(
    Case("dict_view_reflected_or", ("dict-view-reflected-or",), dict_view_reflected_or,
         _dict_view_reflected_or_inputs, vary=_dict_input_vary, torch=">=2.13",
         unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`s | d.keys()` keeps the view's elements where CPython keeps the set's equal ones (`1` / `1.0`) "
             "(2.13-2.15; 2.9-2.12: set-view-operator)"),
)


# -- dict-subclass-copy: o.copy() of an OrderedDict subclass is a type(o) ----------------------------------


def dict_subclass_copy(x, o):
    """``o.copy()`` of an OrderedDict subclass passed in: a ``type(o)`` with the same items (``odict_copy``)."""
    c = o.copy()
    c["z"] = len(o)
    return x + len(c), type(c).__name__, list(c.items())


CASES.add(
    Case("dict_subclass_copy", ("dict-subclass-copy",), dict_subclass_copy,
         _dict_ordered_subclass_or_inputs, vary=_dict_ordered_subclass_or_vary, torch=">=2.7",
         unpatched=(Expect(">=2.7", WRONG_RESULT),),
         doc="`o.copy()` of an OrderedDict subclass passed in is a plain OrderedDict (2.7-2.14) or dict (2.15); "
             "CPython's OrderedDict.copy builds `type(o)` (2.5-2.6: a graph break)"),
)


# -- ordered-dict-reorder-replay: od.move_to_end(k) on an OrderedDict passed in --------------------------


def ordered_dict_reorder_replay(x, od):
    """``od.move_to_end(k)`` on an OrderedDict passed in: the caller's dict is reordered (read after the call)."""
    od.move_to_end("a")
    return x + len(od), list(od)


def _ordered_dict_reorder_replay_inputs():
    return torch.randn(3), collections.OrderedDict(a=1, b=2, c=3)


def _ordered_dict_reorder_replay_vary(args):
    args[0].add_(1)
    args[1]["d"] = 4
    args[1].move_to_end("b", last=False)


CASES.add(
    Case("ordered_dict_reorder_replay", ("ordered-dict-reorder-replay",), ordered_dict_reorder_replay,
         _ordered_dict_reorder_replay_inputs, vary=_ordered_dict_reorder_replay_vary, torch=">=2.7",
         unpatched=(Expect(">=2.7", WRONG_RESULT),),
         doc="`od.move_to_end(k)` on an OrderedDict passed in: the caller's dict keeps its old order after the "
             "call (2.7-2.15; 2.5-2.6: a graph break)"),
)


class _OwnSetItemOD(OrderedDict):
    """Its own ``__setitem__`` doubles ints: 2.15 writes it back with ``OrderedDict``'s own methods, past it."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2 if type(value) is int else value)


def _ordered_dict_subclass_reorder_replay_inputs():
    return torch.randn(3), _OwnSetItemOD(a=1, b=2, c=3)


def ordered_dict_subclass_reorder_replay(x, od):
    """``od.move_to_end(k)`` (both ends) on an OrderedDict subclass with its own ``__setitem__`` passed in."""
    od.move_to_end("a")
    od.move_to_end("c", last=False)
    return x + len(od), list(od)


CASES.add(
    Case("ordered_dict_subclass_reorder_replay", ("ordered-dict-reorder-replay",),
         ordered_dict_subclass_reorder_replay, _ordered_dict_subclass_reorder_replay_inputs,
         vary=_ordered_dict_reorder_replay_vary, torch=">=2.15",
         unpatched=(Expect(">=2.15", WRONG_RESULT),),
         doc="`od.move_to_end(k)` on an OrderedDict subclass with its own `__setitem__` passed in: the caller's "
             "object keeps its old order after the call (2.15; 2.7-2.14 right natively)"),
)


# -- dict-subclass-fromkeys: Sub.fromkeys(keys, v) is a Sub ---------------------------------------------


class _FromKeysDict(dict):
    """A dict subclass that adds nothing: ``fromkeys`` builds one (``_PyDict_FromKeys`` calls ``cls()``)."""


def dict_subclass_fromkeys(x, d):
    """``Sub.fromkeys(keys, v)`` of a dict subclass, keys passed in: a ``Sub``, then changed and read back."""
    r = _FromKeysDict.fromkeys(d, len(d))
    r["z"] = 0
    return x + len(r), type(r).__name__, list(r.items())


def _dict_subclass_fromkeys_inputs():
    return torch.randn(3), {"a": 1, "b": 2}


CASES.add(
    Case("dict_subclass_fromkeys", ("dict-subclass-fromkeys",), dict_subclass_fromkeys,
         _dict_subclass_fromkeys_inputs, vary=_dict_input_vary, torch=">=2.7",
         unpatched=(Expect(">=2.7,<2.13", GRAPH_BREAK), Expect(">=2.13", WRONG_RESULT)),
         doc="`Sub.fromkeys(keys, v)` of a dict subclass graph-breaks (2.7-2.12: the classmethod is a skipped "
             "builtin) or is a plain dict (2.13-2.15); 2.5-2.6: a break (no dict subclass built in the frame)"),
)


# -- ordered-dict-move-to-end: od.move_to_end(k, last) with last given ------------------------------------


def ordered_dict_move_to_end(x, od):
    """``o.move_to_end(k, last)`` with ``last`` given (``False`` by keyword, a falsy ``[]`` positionally) on a copy
    made in the frame (the input's own replay is ``ordered-dict-reorder-replay``'s)."""
    o = OrderedDict(od)
    o.move_to_end("b", last=False)
    o.move_to_end("c", [])
    return x + len(o), list(o)


CASES.add(
    Case("ordered_dict_move_to_end", ("ordered-dict-move-to-end",), ordered_dict_move_to_end,
         _ordered_dict_reorder_replay_inputs, vary=_ordered_dict_reorder_replay_vary, torch=">=2.7,<2.10",
         unpatched=(Expect(">=2.7,<2.9", GRAPH_BREAK, detail="^AssertionError: "),
                    Expect(">=2.9,<2.10", WRONG_RESULT)),
         doc="`od.move_to_end(k, last=False)` crashes the compile (2.7-2.8: an assert); `od.move_to_end(k, [])` "
             "moves the key to the end (2.9: only a ConstantVariable is read)"),
)


class _MoveKey:
    """A key Dynamo tracks as an object, not a constant."""


_MOVE_KEY = _MoveKey()


def ordered_dict_move_to_end_object_key(x, od):
    """``o.move_to_end(key, False)`` with a key that is an object (2.13+ read a positional ``last`` only for a
    constant key)."""
    o = OrderedDict(od)
    o[_MOVE_KEY] = len(od)
    o.move_to_end(_MOVE_KEY, False)
    return x + len(o), [k if isinstance(k, str) else type(k).__name__ for k in o]


CASES.add(
    Case("ordered_dict_move_to_end_object_key", ("ordered-dict-move-to-end",), ordered_dict_move_to_end_object_key,
         _ordered_dict_reorder_replay_inputs, vary=_ordered_dict_reorder_replay_vary, torch=">=2.13",
         unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`od.move_to_end(obj, False)` with an object key moves it to the end (2.13-2.15: a positional `last` "
             "is read only for a constant key)"),
)


# -- set-dict-operand-guard: a set built from a dict input's keys --------------------------------------------


def set_dict_operand_guard(x, d):
    """``set(d)``, ``frozenset(d)``, ``{*d}`` and ``t.update(d)`` of a dict passed in, whose keys differ on the
    next call: the sets hold that call's keys."""
    s = set(d)
    t = {"z"}
    t.update(d)
    return x + len(s), sorted(s), sorted(frozenset(d)), sorted({*d}), sorted(t)


CASES.add(
    Case("set_dict_operand_guard", ("set-dict-operand-guard",), set_dict_operand_guard, _set_view_operator_inputs,
         vary=_set_view_operator_vary,
         unpatched=(Expect(">=2.14", WRONG_RESULT),),
         doc="`set(d)`, `frozenset(d)`, `{*d}`, `t.update(d)` of a dict input keep the first call's keys when a "
             "later call's dict has others (2.14-2.15: no keys guard)"),
)


def set_method_dict_constant(x, d):
    """``s.union(d)``, ``s.symmetric_difference(d)`` and ``s.symmetric_difference_update(d)`` with a dict of
    constants passed in, whose keys differ on the next call."""
    s = {"a", "z"}
    s.symmetric_difference_update(d)
    return x + len(s), sorted({"z"}.union(d)), sorted({"a", "z"}.symmetric_difference(d)), sorted(s)


CASES.add(
    Case("set_method_dict_constant", ("set-dict-operand-guard",), set_method_dict_constant,
         _set_view_operator_inputs, vary=_set_view_operator_vary, torch=">=2.8",
         unpatched=(Expect(">=2.9", WRONG_RESULT),),
         doc="`s.union(d)`, `s.symmetric_difference(d)` of a dict input of constants keep the first call's keys "
             "when a later call's dict has others (2.9-2.15: folded over a copy, no keys guard)"),
)


# -- dict-items-view: d.items() is a live view, not a tuple snapshot ------------------------------------------


def dict_items_view(x, d):
    """``d.items()`` read after the dict changed, its type, and returned: a live view of ``d`` (a view of a dict
    made in the frame, returned with it, shows that dict's later items too)."""
    v = d.items()
    del d["a"]
    d["w"] = x * 2
    e = {"p": 1}
    w = e.items()
    e["q"] = 2
    return x + len(v), list(v), type(v).__name__, isinstance(v, tuple), w


CASES.add(
    Case("dict_items_view", ("dict-items-view",), dict_items_view, _set_view_operator_inputs,
         vary=_set_view_operator_vary,
         unpatched=(Expect("<2.8", WRONG_RESULT),),
         doc="`v = d.items(); del d['a']; list(v)` still lists `a`, `type(v)` is `tuple`, a returned view is a "
             "tuple (2.5-2.7: a tuple snapshot of the items)"),
)


# -- object-truth-jump: if d.keys(): on an empty dict -----------------------------------------------------------


def dict_view_truth_jump(x, d):
    """``if d.keys():`` / ``d.values() or ...`` / ``if e.items():`` of a dict passed in that is empty on the
    first call (and not on the second) and of one made in the frame: the branch of the view's truth."""
    e = {}
    r = x + (1 if d.keys() else 0) + (2 if e.items() else 0)
    return r, d.values() or "empty"


def _empty_dict_inputs():
    return torch.randn(3), {}


def _fill_dict(args):
    args[0].add_(1)
    args[1]["q"] = 3


CASES.add(
    Case("dict_view_truth_jump", ("object-truth-jump",), dict_view_truth_jump, _empty_dict_inputs,
         vary=_fill_dict,
         unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`if d.keys():`, `d.values() or x`, `if e.items():` take the true branch for an empty dict "
             "(2.13-2.15: the conditional jump tests the truth tracker, not its value)"),
)


# -- dict-view-reconstruct: a view of a dict passed in, stored while the frame changes the dict ------------------


def dict_view_reconstruct(x, d, o):
    """``o.k = d.keys()`` and ``o.v = d.values()`` stored, then ``d`` gains a key and a value changes: after the
    call the stored views show ``d`` (all of it), not only what the frame changed."""
    o.k = d.keys()
    o.v = d.values()
    d["s"] = 1
    d["a"] = 5
    return x + len(d)


class ViewHolder:
    """An object the case stores views on."""


def _view_store_inputs():
    return torch.randn(3), {"a": 1, "k": 2}, ViewHolder()


CASES.add(
    Case("dict_view_reconstruct", ("dict-view-reconstruct",), dict_view_reconstruct, _view_store_inputs,
         vary=_set_view_operator_vary,
         unpatched=(Expect(">=2.6,<2.13", WRONG_RESULT),),
         doc="`o.k = d.keys()` of a dict passed in that the frame then changes: after the call `o.k` shows only "
             "the changed items (2.6-2.12: rebuilt over Dynamo's temporary dict of the changes)"),
)


# -- dict-view-compare: an items (or keys) view compared with a set ---------------------------------------------


def dict_view_compare(x, d):
    """``d.items() == s`` and ``s != d.items()`` (a set of pairs), ``s == d.keys()``: compared as sets, equal on
    the first call and not after ``d`` gains a key."""
    pairs = {("a", 1), ("k", 2)}
    return x + len(d), d.items() == pairs, pairs != d.items(), {"a", "k"} == d.keys(), d.items() == frozenset(pairs)


CASES.add(
    Case("dict_view_compare", ("dict-view-compare",), dict_view_compare, _set_view_operator_inputs,
         vary=_set_view_operator_vary, torch=">=2.8",
         unpatched=(Expect(">=2.8,<2.12", WRONG_RESULT),),
         doc="`d.items() == {('a', 1), ('k', 2)}` is False for `d = {'a': 1, 'k': 2}` (2.8-2.11: an items view is "
             "never equal to a set), `{'a', 'k'} == d.keys()` False (2.9-2.11)"),
)


# -- ordered-dict-view-type: type(od.keys()) is odict_keys ---------------------------------------------------------


def ordered_dict_view_type(x, od):
    """``type(od.keys())`` and ``type(od.values())`` of an ``OrderedDict`` passed in, by name and by
    ``isinstance`` with the odict view types, as code that dispatches on a view's type reads them."""
    k, v = od.keys(), od.values()
    odict_keys = type(collections.OrderedDict().keys())
    return x + len(od), type(k).__name__, type(v).__name__, isinstance(k, odict_keys)


def _ordered_view_inputs():
    return torch.randn(3), collections.OrderedDict([("a", 1), ("k", 2)])


CASES.add(
    Case("ordered_dict_view_type", ("ordered-dict-view-type",), ordered_dict_view_type, _ordered_view_inputs,
         vary=_set_view_operator_vary,
         unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`type(od.keys())` of an `OrderedDict` is `dict_keys`, not `odict_keys` (every release: the view "
             "trackers report the plain dict's view types)"),
)


# -- dict-subclass-ior: o |= m on a dict subclass keeps o the same object ----------------------------------


class _IorDict(dict):
    """A dict subclass that overrides nothing."""


def dict_subclass_ior(x, o):
    """``o |= m`` on a dict subclass passed in, an alias made before, a write through ``o`` after."""
    alias = o
    o |= {"z": len(o)}
    o["q"] = x.shape[0]
    return x + len(alias), alias is o, type(o).__name__, list(alias.items())


def _dict_subclass_ior_inputs():
    return torch.randn(3), _IorDict(a=1)


def _dict_subclass_ior_vary(args):
    args[0].add_(1)
    args[1]["b"] = 2


CASES.add(
    Case("dict_subclass_ior", ("dict-subclass-ior",), dict_subclass_ior, _dict_subclass_ior_inputs,
         vary=_dict_subclass_ior_vary, torch=">=2.9",
         unpatched=(Expect(">=2.9,<2.15", WRONG_RESULT),),
         doc="`o |= m` on a dict subclass: `o` is then another object, so an alias and the caller's object "
             "miss later writes through `o` (2.9-2.14; 2.5-2.8: a graph break)"),
)


# -- set-dunder-view-operand: a set's reflected operator dunder called with a dict view --


def set_dunder_view_operand(x, d):
    """``s.__rand__(d.keys())``, ``fs.__rsub__(d.items())`` called explicitly, as code that falls back by hand
    writes them: CPython's set dunders take only sets (``NotImplemented``), so the fallback runs."""
    s = {"a", ("b", 2)}
    r = s.__rand__(d.keys())
    fell_back = r is NotImplemented
    if fell_back:
        r = d.keys() & s
    fs = frozenset({("a", 1), "q"})
    t = fs.__rsub__(d.items())
    return x + len(r), fell_back, sorted(map(repr, r)), t is NotImplemented, sorted(map(repr, s))


CASES.add(
    Case("set_dunder_view_operand", ("set-dunder-view-operand",), set_dunder_view_operand,
         _set_view_operator_inputs, vary=_set_view_operator_vary, torch=">=2.12",
         unpatched=(Expect(">=2.12,<2.14", WRONG_RESULT),),
         doc="`s.__rand__(d.keys())` (an explicit reflected set dunder with a dict view): the operation computed "
             "where CPython returns `NotImplemented` (2.12-2.13; 2.13 also the forward and in-place dunders)"),
)


# -- dict-view-live-iterator: an iterator over d.values() reads the dict when it advances --


def dict_view_live_iterator(x, d):
    """A ``for`` loop over ``d.values()`` that writes a later key, and ``iter()`` / ``next()`` / ``list()`` of the
    rest after a write: CPython's iterator reads each entry when it reaches it."""
    seen = []
    for v in d.values():
        seen.append(v)
        d["c"] = v * 10
    it = iter(d.values())
    first = next(it)
    d["b"] = first + 100
    return x + len(seen), seen, first, list(it), dict(d)


def _dict_view_live_iterator_inputs():
    return torch.randn(3), {"a": 1, "b": 2, "c": 3}


def _dict_view_live_iterator_vary(args):
    args[0].add_(1)
    args[1]["a"] = 5


CASES.add(
    Case("dict_view_live_iterator", ("dict-view-live-iterator",), dict_view_live_iterator,
         _dict_view_live_iterator_inputs, vary=_dict_view_live_iterator_vary,
         unpatched=(Expect("<2.13", WRONG_RESULT),),
         doc="`for v in d.values(): d['c'] = ...` / `next(it)` after a write: the values of when the iterator "
             "was made, not the dict's (2.5-2.12)"),
)


def dict_view_reversed_live(x, d):
    """``reversed()`` of a values and an items view, advanced across writes: CPython's reverse dict iterator
    reads each entry when it reaches it."""
    it = reversed(d.values())
    first = next(it)
    d["a"] = first * 10
    rest = list(it)
    seen = []
    for k, v in reversed(d.items()):
        seen.append((k, v))
        d["a"] = v + 1
    return x + first, rest, seen, dict(d)


CASES.add(
    Case("dict_view_reversed_live", ("dict-view-live-iterator",), dict_view_reversed_live,
         _dict_view_live_iterator_inputs, vary=_dict_view_live_iterator_vary,
         unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`it = reversed(d.values()); next(it); d['a'] = ...; list(it)`: the values of when the iterator was "
             "made, not the dict's (every release; 2.5-2.12 `reversed(view)` is a tuple)"),
)


# -- dict-subclass-missing: __missing__ is called by d[k] and never by d.get(k) --
class MissingDict(dict):
    """A dict subclass whose absent keys answer from ``__missing__`` (no write)."""

    def __missing__(self, key):
        return ("missing", key, len(self))


class MissingOD(OrderedDict):
    """An ``OrderedDict`` subclass whose ``__missing__`` stores the key, as ``defaultdict`` does."""

    def __missing__(self, key):
        self[key] = len(self) * 10
        return self[key]


def dict_subclass_missing_get(x, d, od):
    """``get`` of an absent key: the default, never ``__missing__`` (2.6: ``__missing__``'s value)."""
    return x + 1, d.get("z"), d.get("z", 7), d.get("a"), od.get("q"), od.get("q", -1), od.get("a")


def dict_subclass_missing_getitem(x, d, od):
    """``d[k]`` of an absent key: ``__missing__`` (2.7-2.8: the ``except KeyError`` branch)."""
    try:
        v = d["z"]
    except KeyError:
        v = "KeyError"
    try:
        w = od["q"]
    except KeyError:
        w = "KeyError"
    return x + d["a"], v, w, od["a"], list(od.items())


def _dict_subclass_missing_inputs():
    return torch.randn(3), MissingDict(a=1, b=2), MissingOD(a=1)


def _dict_subclass_missing_vary(args):
    args[0].add_(1)
    args[1]["a"] = 5
    args[1]["z"] = "present"  # the second call finds the key: the presence guard must recompile
    args[2]["p"] = 3


CASES.add(
    Case("dict_subclass_missing_get", ("dict-subclass-missing",), dict_subclass_missing_get,
         _dict_subclass_missing_inputs, vary=_dict_subclass_missing_vary, torch=">=2.6",
         unpatched=(Expect("==2.6.*", WRONG_RESULT),),
         doc="`d.get('z')` of a dict subclass with `__missing__`, passed in: the default, not `__missing__`'s "
             "value (2.6; 2.5: `get` of a dict subclass is a graph break with and without tdcompat)"),
    Case("dict_subclass_missing_getitem", ("dict-subclass-missing",), dict_subclass_missing_getitem,
         _dict_subclass_missing_inputs, vary=_dict_subclass_missing_vary,
         unpatched=(Expect(">=2.7,<2.9", WRONG_RESULT),),
         doc="`try: d['z'] except KeyError` of a dict subclass with `__missing__`, passed in: `__missing__`'s "
             "value, not the `except` branch (2.7-2.8)"),
)


# -- dict-subclass-base-getitem: dict's own __getitem__ reached from a subclass's __getitem__ --


class SuperMissingDict(dict):
    """A dict subclass whose ``__getitem__`` is ``super()``'s, with a ``__missing__`` that answers."""

    def __missing__(self, key):
        return ("missing", key, len(self))

    def __getitem__(self, key):
        return super().__getitem__(key)


class BaseMissingOD(OrderedDict):
    """An ``OrderedDict`` subclass that calls ``dict.__getitem__`` by name, with a ``__missing__`` that stores."""

    def __missing__(self, key):
        self[key] = len(self) * 10
        return self[key]

    def __getitem__(self, key):
        return dict.__getitem__(self, key)


def _dict_subclass_base_getitem_inputs():
    return torch.randn(3), SuperMissingDict(a=1, b=2), BaseMissingOD(a=1)


CASES.add(
    # the same frame as dict_subclass_missing_getitem; the classes reach dict.__getitem__ by name
    Case("dict_subclass_base_getitem", ("dict-subclass-base-getitem",), dict_subclass_missing_getitem,
         _dict_subclass_base_getitem_inputs, vary=_dict_subclass_missing_vary, torch=">=2.7",
         unpatched=(Expect(">=2.7", WRONG_RESULT),),
         doc="`try: d['z'] except KeyError` where the dict subclass's `__getitem__` calls `super().__getitem__` "
             "or `dict.__getitem__` and it has `__missing__`: `__missing__`'s value, not the `except` branch "
             "(2.5-2.6: `dict.__getitem__(self, k)` is a graph break with and without tdcompat)"),
)


# -- dict-method-keywords: get/pop/setdefault called with keywords --


def ordered_dict_keyword_methods(x, od):
    """An ``OrderedDict``'s own ``pop``/``setdefault`` take ``key``/``default`` by keyword, each call caught as
    users would (2.5-2.9: the compile crashes; 2.10-2.15: ``default=`` dropped, ``key=`` refused)."""
    out = []
    for call in (lambda: od.setdefault("q", default=len(od) * 10), lambda: od.setdefault(key="q"),
                 lambda: od.pop("z", default=-1), lambda: od.pop(key="a")):
        try:
            out.append(call())
        except (TypeError, KeyError) as error:
            out.append(type(error).__name__)
    return x + len(od), out, list(od.items())


def _ordered_dict_keyword_inputs():
    return torch.randn(3), OrderedDict(a=1, b=2)


def _ordered_dict_keyword_vary(args):
    args[0].neg_()
    args[1]["z"] = "present"  # the second call pops it: the presence guard must recompile
    args[1]["a"] = 5
    args[1]["c"] = 3


def dict_keyword_methods_refused(x, d):
    """``dict.get``/``pop``/``setdefault`` take no keyword arguments: CPython's ``TypeError``, caught (2.7-2.14:
    ``get`` answers ``None``/the value, ``pop`` pops)."""
    out = []
    for call in (lambda: d.get("z", default=3), lambda: d.get("a", default=3), lambda: d.pop("a", default=3),
                 lambda: d.setdefault("q", default=3), lambda: d.get(key="a")):
        try:
            out.append(call())
        except TypeError as error:
            out.append(type(error).__name__)
    return x + len(d), out, sorted(d)


CASES.add(
    Case("dict_method_keywords", ("dict-method-keywords",), ordered_dict_keyword_methods,
         _ordered_dict_keyword_inputs, vary=_ordered_dict_keyword_vary,
         unpatched=(Expect("<2.10", GRAPH_BREAK, detail=r"^AssertionError"), Expect(">=2.10", WRONG_RESULT)),
         doc="`od.pop('z', default=-1)`, `od.pop(key='a')`, `od.setdefault('q', default=v)` of an `OrderedDict` "
             "(CPython binds the keywords): `default=` dropped, `key=` refused (2.5-2.9: the compile crashes)"),
    Case("dict_method_keywords_refused", ("dict-method-keywords",), dict_keyword_methods_refused,
         lambda: (torch.randn(3), {"a": 1, "b": 2}), vary=_ordered_dict_keyword_vary, torch=">=2.7",
         unpatched=(Expect("<2.10", GRAPH_BREAK, detail=r"^AssertionError"), Expect("<2.15", WRONG_RESULT)),
         doc="`try: d.get('z', default=3) except TypeError` of a dict: CPython's `TypeError`, not `None` "
             "(2.7-2.9: the compile crashes; 2.5-2.6: a graph break with tdcompat, which cannot raise it there)"),
)


# -- dict-subclass-contains-guard: `k in d` of a dict subclass passed in empty --


class PlainSubDict(dict):
    """A dict subclass that adds nothing."""


class PlainSubOD(OrderedDict):
    """An ``OrderedDict`` subclass that adds nothing."""


def dict_subclass_contains_guard(x, d, od):
    """``k in d`` / ``k not in od`` of dict subclasses passed in empty, then holding ``k`` (2.5-2.6: the first
    answer again)."""
    return x + (1 if "c" in d else 2), "c" not in od, "a" in d


def _dict_subclass_contains_vary(args):
    args[0].add_(1)
    args[1]["c"] = 1  # the second call finds the keys: the presence guard must recompile
    args[2]["c"] = 2


CASES.add(
    Case("dict_subclass_contains_guard", ("dict-subclass-contains-guard",), dict_subclass_contains_guard,
         lambda: (torch.randn(3), PlainSubDict(), PlainSubOD()), vary=_dict_subclass_contains_vary,
         unpatched=(Expect("<2.7", WRONG_RESULT),),
         doc="`'c' in d` of a dict subclass passed in empty, then holding `'c'`: the new answer (2.5-2.6: "
             "the first one again, unguarded)"),
)


# -- dict-constant-type: an OrderedDict / defaultdict folded as a plain dict --


def dict_constant_type(x, od, dd):
    """``repr``/``str`` of an ``OrderedDict`` and a ``defaultdict`` passed in, and ``==`` of two ``OrderedDict``s
    with the same items in another order (the second built in the frame): CPython's answers."""
    swapped = OrderedDict(reversed(list(od.items())))
    return x + 1, repr(od), str(od), f"{dd!r}", od == swapped, [od] != [swapped], od == dict(swapped)


def _dict_constant_type_vary(args):
    args[0].add_(1)
    args[1]["c"] = 3  # a new key: recompiled (the dict's keys are guarded), answered again
    args[2]["b"] = 2


CASES.add(
    Case("dict_constant_type", ("dict-constant-type",), dict_constant_type,
         lambda: (torch.randn(3), OrderedDict(a=1, b=2), collections.defaultdict(int, a=1)),
         vary=_dict_constant_type_vary,
         unpatched=(Expect("<2.13", WRONG_RESULT),),
         doc="`repr(od)`/`str(od)` of an `OrderedDict`, `f'{dd!r}'` of a `defaultdict`, `od == swapped` of two "
             "`OrderedDict`s in another order: CPython's answers (a plain dict's repr before 2.13, `==` "
             "order-blind on 2.5-2.8)"),
)
