"""Dict and set keys that are equal numbers of different types (dict-key-numeric-eq).

CPython makes ``1``, ``1.0``, ``True`` (and ``1+0j``) one dict/set key: they compare equal
and hash alike. Dynamo 2.5-2.9 calls keys of different types unequal, so a traced dict
grows a key per type and a lookup by an equal number of another type misses. Found by
the differential fuzzer (``len({1.0, 1, 's'})``); measured wrong on 2.5.1-2.9.1.

A ``functools.partial`` hashes and compares by identity; Dynamo 2.5-2.12 compared a partial made
in the frame with a fresh copy of itself (dict-key-partial-identity). Found by the fuzzer's hash
family (``_h in {_h, 1, 's'}`` False).

A frozenset built in the frame came back empty from compiled code on 2.5-2.8 (its
reconstruction called ``frozenset()`` on top of its items; frozenset-reconstruct), and a graph
break after one raised ``TypeError`` (fuzzer's hash and deepcopy families, 2.6.0 and 2.7.1).
"""

from __future__ import annotations

import functools

import torch

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, CaseList, Expect

PATCH = ("dict-key-numeric-eq",)


def _tensor():
    return (torch.randn(3),)


def _int_keyed():
    return {1: torch.randn(3), 2: torch.randn(3)}, torch.randn(3)


def store_equal_numbers(x):
    """Stores under 1, 1.0 and True: one entry, the first key, the last value."""
    d = {1: x, "s": x * 2}
    d[1.0] = x + 1
    d[True] = x * 3
    return len(d), list(d), d[1]


def set_of_equal_numbers(x):
    s = {1, 2}
    s.add(2.0)
    return 1.0 in s, True in s, len(s | {2.0, 3}), sorted(s), x + len(s)


def lookup_input_by_float(d, x):
    """An input dict keyed by ints, read with equal floats and bools."""
    return d[1.0] + d[True] * x, 2.0 in d


def _scale(x, k=1):
    return x * k


def partial_made_in_frame(x):
    """One partial made in the frame is one object, its own set member; two partials made apart
    are two objects (CPython hashes and compares partials by identity)."""
    p = functools.partial(_scale, k=3)
    q = functools.partial(_scale, k=3)
    s = {p, 1, "s"}
    return p in s, q in s, len({p, q, p}), {p: 1, q: 2}[p], p(x)


PARTIAL = ("dict-key-partial-identity",)


class _Holder:
    def __init__(self):
        self.a = 3


def _holder():
    return _Holder(), torch.randn(3)


def frozenset_returned(o, x):
    """A frozenset built in the frame leaves it as a return value (reconstructed after the graph)."""
    fs = frozenset({o.a, 2, "s"})
    return x + len(fs), fs, (fs, 1)


FROZENSET = ("frozenset-reconstruct",)


class _Scaled:
    def __init__(self):
        self.f = 0.75


def _scaled():
    return _Scaled(), torch.randn(3)


def _other_float(args):
    """The second call's float differs: automatic dynamic shapes make it symbolic (2.7-2.9)."""
    args[0].f = 1.25


def float_input_keys(o, x):
    """A float read from an input as a dict key, a set member and a lookup."""
    d = {o.f: x, "s": x * 2}
    s = {o.f, 2.5}
    return d[o.f] + 1, o.f in s, len(s), 0.75 in d, list(d)


DYNAMIC_FLOAT = ("dict-key-dynamic-float",)

CASES = CaseList()
CASES.add(
    Case("dict_store_equal_numbers", PATCH, store_equal_numbers, _tensor,
         unpatched=(Expect("<2.10", WRONG_RESULT),),
         doc="`d[1.0] = ...; d[True] = ...` on a dict keyed by 1: one entry in eager, three traced (2.5-2.9)"),
    Case("set_of_equal_numbers", PATCH, set_of_equal_numbers, _tensor,
         unpatched=(Expect("<2.10", WRONG_RESULT),),
         doc="`1.0 in {1, 2}`, `s.add(2.0)`, `s | {2.0, 3}`: equal numbers of other types are members"),
    Case("dict_input_lookup_by_float", PATCH, lookup_input_by_float, _int_keyed,
         unpatched=(Expect("<2.10", GRAPH_BREAK),),
         doc="`d[1.0]`, `d[True]`, `2.0 in d` on an input dict keyed by ints"),
)
CASES.add(
    Case("partial_made_in_frame_identity", PARTIAL, partial_made_in_frame, _tensor,
         unpatched=(Expect("<2.10", GRAPH_BREAK, detail=r"Observed exception"), Expect("<2.13", WRONG_RESULT)),
         doc="`p in {p}`, `len({p, q})`, `{p: 1, q: 2}[p]` for partials made in the frame: identity, as in CPython"),
)
CASES.add(
    Case("frozenset_made_in_frame_returned", FROZENSET, frozenset_returned, _holder,
         unpatched=(Expect("<2.9", WRONG_RESULT),),
         doc="`return frozenset({o.a, 2, 's'})`: empty after the graph on 2.5-2.8 (the rebuilt frozenset() is "
             "called with no argument on top of its items)"),
    Case("dict_key_float_input_dynamic", DYNAMIC_FLOAT, float_input_keys, _scaled, vary=_other_float,
         unpatched=(Expect(">=2.7,<2.10", GRAPH_BREAK,
                           detail=r"^InternalTorchDynamoError: AsPythonConstantNotImplementedError"),),
         doc="`{o.f: x}`, `o.f in {o.f, 2.5}` with a float input that changes between calls: the second "
             "compile crashed on 2.7-2.9 (a lazy float key realized as a symbolic number)"),
)
