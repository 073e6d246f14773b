"""dict-key-numeric-eq: equal numbers of different types are one dict/set key (torch <2.10).

Each test compiles with ``fullgraph=True``, calls twice with different inputs and compares
with eager; without the patch (reverted in-process) the same shape is asserted to be wrong
or a graph break on 2.5-2.9, where the patch applies.
"""

from __future__ import annotations

import enum

import pytest
import torch
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, same, without_patch

NAME = "dict-key-numeric-eq"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 10)


def _check(fn, make):
    """Compiled == eager (return value and inputs after the call) for two different inputs;
    returns False on the first difference or graph break instead of raising."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    for seed in (0, 1):
        eager_args, compiled_args = make(seed), make(seed)
        expected = fn(*eager_args)
        try:
            got = compiled(*compiled_args)
        except Unsupported:
            return False
        if not (same(expected, got) and same(list(eager_args), list(compiled_args))):
            return False
    return True


def _tensor(seed):
    return (torch.full((2,), float(seed + 1)),)


def _int_keyed(seed):
    return {1: torch.full((2,), float(seed)), 2: torch.ones(2)}, torch.full((2,), 3.0 + seed)


def store_then_overwrite(x):
    d = {1: x, "s": x * 2}
    d[1.0] = x + 1
    d[True] = x * 3
    d[1 + 0j] = d[1] - 1
    return len(d), list(d), d[1], d


def literal_with_equal_keys(x):
    d = {1: x, 1.0: x + 1, True: x + 2, "k": x}  # noqa: F601 - equal keys of different types are the point
    return list(d.items()), len({1.0, 1, "s", True})  # noqa: B033 - so are equal items


def set_members(x):
    s = {1, 2}
    s.add(2.0)
    s.discard(True)
    return 1.0 in s, True in s, sorted(s), len(s | {2.0, 3}), x + len(s)


def input_lookup(d, x):
    d[2.0] = d[1.0] * x
    return d[True] + x, 2.0 in d, list(d)


def tuple_keys(x):
    d = {(1, "a"): x}
    d[(1.0, "a")] = x * 2
    return len(d), d[(True, "a")], (1.0, "a") in d


def nan_member(x):
    """The same NaN object is found by identity (CPython's lookup), a fresh NaN is not."""
    nan = float("nan")
    s = {nan, 1, "s"}
    d = {nan: x}
    return nan in s, float("nan") in s, len(s), d[nan] + 1, nan in d


def pop_and_get(x):
    d = {0: x, 1: x * 2}
    v = d.pop(0.0)
    return v, d.get(1.0, None), d.get(False, "missing"), d.setdefault(True, x), len(d)


CASES = [
    (store_then_overwrite, _tensor),
    (literal_with_equal_keys, _tensor),
    (set_members, _tensor),
    (input_lookup, _int_keyed),
    (tuple_keys, _tensor),
    (nan_member, _tensor),
    (pop_and_get, _tensor),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_equal_numbers_are_one_key(fn, make):
    assert applied(NAME) == NEEDED
    assert _check(fn, make)


@pytest.mark.skipif(not NEEDED, reason="2.10+ compares keys by value natively (pytorch/pytorch#169204)")
@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_without_the_patch_it_is_wrong_or_a_break(fn, make):
    with without_patch(NAME):
        assert not _check(fn, make)


class Small(enum.IntEnum):
    ONE = 1


class Num(int):
    pass


def subclass_keys(x):
    """An IntEnum member and an int subclass equal to a key: the patch defers (exact types only)."""
    d = {1: x}
    return Small.ONE in d, Num(1) in d, x + 1


def nan_keys(x):
    nan = float("nan")
    d = {nan: x}
    return nan in d, float("nan") in d, len({nan, nan, 1.0, 1})  # noqa: B033 - equal items are the point


@pytest.mark.skipif(not NEEDED, reason="the patch is not applied on 2.10+")
@pytest.mark.parametrize("fn", [subclass_keys, nan_keys])
def test_deferred_shapes_are_never_worse(fn):
    """Where the patch defers, compiled with tdcompat is right or the same as without it."""
    def outcome():
        torch._dynamo.reset()
        try:
            return "ok", torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(2))
        except Unsupported:
            return "break", None

    expected = fn(torch.ones(2))
    kind, got = outcome()
    if kind == "ok" and same(expected, got):
        return
    with without_patch(NAME):
        assert outcome()[0] == kind  # not right with the patch: exactly as without it
