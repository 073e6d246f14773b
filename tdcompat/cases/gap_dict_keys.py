"""Dict and set keys that are equal numbers of different types (dict-key-numeric-eq).

CPython makes ``1``, ``1.0``, ``True`` (and ``1+0j``) one dict/set key: they compare equal
and hash alike. Dynamo 2.5-2.9 calls keys of different types unequal, so a traced dict
grows a key per type and a lookup by an equal number of another type misses. Found by
the differential fuzzer (``len({1.0, 1, 's'})``); measured wrong on 2.5.1-2.9.1.
"""

from __future__ import annotations

import torch

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, Expect

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


CASES = (
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
