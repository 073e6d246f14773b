"""dict-key-dynamic-float: a float input as a dict key or set member, once it turns dynamic (torch 2.7-2.9).

Each program is compiled with ``fullgraph=True`` and called three times with a different float
each time (automatic dynamic shapes make the float symbolic from the second call on), and
compared with eager: the return value and the inputs after the call. Without the patch
(reverted in-process) the same programs are asserted to crash on 2.7-2.9, where the patch applies.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, without_patch

NAME = "dict-key-dynamic-float"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = (2, 7) <= TORCH < (2, 10)
FLOATS = (0.75, 1.25, 2.0)


class Box:
    def __init__(self, f):
        self.f = f
        self.items = [f, 3.5]
        self.d = {1: "one", 2.0: "two"}


class Real(float):
    """A float subclass: not the exact type the patch accepts."""


def literal_key(o, x):
    d = {o.f: x, "s": x * 2}
    return d[o.f] + 1, len(d), list(d)


def set_member(o, x):
    s = {o.f, 2.0, "s"}
    s.add(1.25)
    return o.f in s, 0.75 in s, len(s), x + 1


def lookups(o, x):
    d = {0.75: x, 2.0: x * 2}
    return d.get(o.f, "missing"), o.f in d, d.pop(o.f, None), len(d), x + 1


def store_and_read(o, x):
    d = {}
    d[o.f] = x
    d[o.f] = d[o.f] + 1
    return d, o.f in o.d, o.d.get(o.f)


def fromkeys_and_frozenset(o, x):
    fs = frozenset([o.f, 1])
    return sorted(dict.fromkeys([o.f, 2.0, o.f])), o.f in fs, len(fs), x + 1


def tuple_key(o, x):
    d = {(1, o.f): x}
    return d[(1, o.f)] + 1, (1, 0.75) in d


def list_item_key(o, x):
    d = {o.items[0]: x}
    return d[o.items[0]] + 1, o.items[1] in d


def argument_key(f, x):
    """The float is a frame argument, not an attribute."""
    d = {f: x, 1.25: x * 2}
    return d[f], len(d)


def subclass_key(o, x):
    """A float subclass value: deferred (Dynamo's own behaviour)."""
    d = {o.f: x}
    return len(d), x + 1


def _box(f):
    return Box(f), torch.full((2,), f)


def _argument(f):
    return f, torch.full((2,), f)


def _subclass(f):
    return Box(Real(f)), torch.full((2,), f)


PROGRAMS = [
    (literal_key, _box),
    (set_member, _box),
    (lookups, _box),
    (store_and_read, _box),
    (fromkeys_and_frozenset, _box),
    (tuple_key, _box),
    (list_item_key, _box),
    (argument_key, _argument),
]


def _run(fn, make, floats=FLOATS):
    """None when compiled equals eager on every call, else the difference (str) or the exception."""
    failure = eager_vs_compiled(fn, make, floats)
    if failure is None or isinstance(failure, str):
        return failure
    return f"{type(failure).__name__}: {failure}"


@pytest.mark.parametrize("fn,make", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_float_input_keys_equal_eager(fn, make):
    assert applied(NAME) == NEEDED
    assert _run(fn, make) is None


#: Where 2.7-2.9 crash without the patch: the first use of the float is as a key (a lookup, a
#: tuple element realizes it before it meets ``_HashableTracker``).
CRASHING = {literal_key, set_member, fromkeys_and_frozenset, list_item_key, argument_key}


@pytest.mark.skipif(not NEEDED, reason="measured right unpatched on 2.5-2.6 and 2.10+")
@pytest.mark.parametrize("fn,make", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_without_the_patch(fn, make):
    """The programs that crash 2.7-2.9 unpatched do, the others are right there too (so the list stays true)."""
    with without_patch(NAME):
        failure = _run(fn, make)
    if fn in CRASHING:
        assert failure is not None and "is not a constant" in failure
    else:
        assert failure is None


def test_nan_input_key_is_never_wrong():
    """A NaN never equals its guard: every call recompiles, never reuses a wrong answer. (2.10+ refuse
    ``d[o.f]`` for a NaN key natively: an observed KeyError, a graph break, not a value.)"""
    failure = _run(literal_key, _box, floats=(0.75, math.nan, math.nan, 2.0))
    assert failure is None or (TORCH >= (2, 10) and failure.startswith("Unsupported: Observed exception"))


@pytest.mark.skipif(not NEEDED, reason="the patch is not applied here")
def test_float_subclass_is_deferred():
    """Where the patch defers, compiled with tdcompat is right or fails as without it."""
    failure = _run(subclass_key, _subclass)
    if failure is None:
        return
    with without_patch(NAME):
        assert _run(subclass_key, _subclass) is not None
