"""iterator-consumption: an iterator that a consumer ran to its end stays exhausted; ``if it:`` is true (torch <2.13).

Iterators over a list, a tuple, a range, a dict and its views, consumed by every builtin that runs an iterator
to its end, by ``zip``/``map`` (stepped), by ``x in it`` (to the match) and tested for truth, then read again in
the same frame (``list(it)``, ``next(it, default)``). Compiled with ``fullgraph=True`` and compared with eager on
calls with different inputs (return value and inputs after each call). Without the patch (reverted in-process)
the shapes are wrong on the releases the docstring of the patch names: asserted there. ``len(it)`` and
``reversed(it)`` (CPython: ``TypeError``) must be right or a clean graph break.
"""

from __future__ import annotations

import collections
import itertools

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "iterator-consumption"
RELEASE = parse_torch_version(torch.__version__).release[:2]

SOURCES = {
    "list": lambda n: [1, 2, n, 4],
    "tuple": lambda n: (1, 2, n, 4),
    "range": lambda n: range(1, n + 2),
    "dict": lambda n: {1: 1, "b": 2, n: 3, "d": 4},
    "values": lambda n: {"a": 1, "b": 2, "c": n, "d": 4}.values(),
    "items": lambda n: {"a": 1, "b": 2, "c": n, "d": 4}.items(),
}


def _extend(it):
    out = [0]
    out.extend(it)
    return out


def _star_call(it):
    return (lambda *a: a)(*it)


#: Consumers that run the iterator to its end in CPython.
WHOLE = {
    "list": list,
    "tuple": tuple,
    "set": lambda it: sorted(set(it), key=repr),
    "frozenset": lambda it: len(frozenset(it)),
    "star": lambda it: [*it],
    "star_call": _star_call,
    "fromkeys": lambda it: list(dict.fromkeys(it)),
    "extend": _extend,
    "enumerate": lambda it: list(enumerate(it)),
    "filter": lambda it: list(filter(lambda v: v != 2, it)),
    "map": lambda it: list(map(lambda v: (v,), it)),
    "deque": lambda it: list(collections.deque(it)),
    "chain": lambda it: list(itertools.chain(it)),
    "comprehension": lambda it: [v for v in it],
}


def _make(n):
    return torch.arange(3.0) * n, n


def _whole(source, consume):
    def fn(x, n):
        it = iter(SOURCES[source](n))
        first = next(it)
        a = consume(it)
        b = consume(it)
        return x + 1, first, a, b, list(it)
    fn.__name__ = f"{source}_{consume.__name__}"
    return fn


@pytest.mark.parametrize("consumer", sorted(WHOLE))
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_consumed_whole(source, consumer):
    """Right, or a clean graph break where this Dynamo cannot trace the consumer at all (2.5: ``filter`` of a
    lambda, ``sorted`` of a set of tuples)."""
    found = eager_vs_compiled(_whole(source, WHOLE[consumer]), _make, (3, 5))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("consumer", ("list", "tuple", "star", "star_call", "extend", "fromkeys", "comprehension"))
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_consumed_whole_compiles(source, consumer):
    assert eager_vs_compiled(_whole(source, WHOLE[consumer]), _make, (3, 5)) is None


def zip_pairs(x, n):
    it = iter([1, 2, n, 4, 5])
    return x + 1, list(zip(it, it)), list(it)


def zip_shorter(x, n):
    it = iter([1, 2, n, 4])
    pairs = list(zip(it, [7]))  # CPython draws a second item from it before it sees [7] end
    return x + n, pairs, list(it)


def zip_stepped(x, n):
    it = iter([1, n, 3])
    z = zip(it, "abc")
    first = next(z)
    return x + 1, first, list(it), list(z)


def map_stepped(x, n):
    it = iter({"a": 1, "b": n, "c": 3}.values())
    m = map(lambda v: v * 2, it)
    first = next(m)
    return x + first, list(it), list(m)


def filter_stepped(x, n):
    it = iter([1, n, 3, 4])
    f = filter(lambda v: v > 1, it)
    first = next(f)
    return x + first, list(it), list(f)


def zip_of_dict_keys(x, n):
    it = iter({"a": 1, "b": n, "c": 3})
    return x + 1, dict(zip(it, it)), list(it)


def contains_then_rest(x, n):
    it = iter([1, 2, 3, n, 5])
    found = 3 in it
    return x + 1, found, list(it), ("zz" in it), list(it)


def contains_items(x, n):
    it = iter({"a": 1, "b": 2, "c": n}.keys())
    return x + n, ("b" in it), ("a" in it), list(it)


def truth_after_next(x, n):
    it = iter([x, n, 3])
    next(it)
    y = x * 2 if it else x
    return y, list(it)


def truth_exhausted(x, n):
    it = iter([1, n])
    list(it)
    while it:
        return x + 1, list(it)
    return x - 1, list(it)


SHAPES = {f.__name__: f for f in (zip_pairs, zip_shorter, zip_stepped, map_stepped, filter_stepped,
                                  zip_of_dict_keys, contains_then_rest, contains_items, truth_after_next,
                                  truth_exhausted)}
#: Wrong without the patch, by release (measured: the patch's docstring).
WRONG_UNPATCHED = {
    "zip_pairs": (2, 9), "zip_shorter": (2, 9), "zip_stepped": (2, 9), "map_stepped": (2, 13),
    "filter_stepped": (2, 13), "zip_of_dict_keys": (2, 9), "contains_then_rest": (2, 9), "contains_items": (2, 9),
    "truth_after_next": (2, 13), "truth_exhausted": (2, 13),
}
#: truth_after_next is right on 2.5-2.8 without the patch (its unpack does not consume there).
RIGHT_BEFORE = {"truth_after_next": (2, 9)}


#: A clean graph break before these releases: 2.5 filters eagerly, where filter() is called.
BREAKS_BEFORE = {"filter_stepped": (2, 6)}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    found = eager_vs_compiled(SHAPES[name], _make, (3, 5))
    if RELEASE < BREAKS_BEFORE.get(name, (0, 0)):
        assert is_break(found), found
    else:
        assert found is None, found


def _wrong_unpatched(name):
    return RELEASE < WRONG_UNPATCHED[name] and RELEASE >= RIGHT_BEFORE.get(name, (0, 0))


@pytest.mark.parametrize("name", sorted(n for n in SHAPES if _wrong_unpatched(n)))
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (3, 5))
    assert found is not None and not is_break(found), found


@pytest.mark.skipif(RELEASE >= (2, 9), reason="unpacking consumes natively from 2.9")
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_list_twice_fails_without_the_patch(source):
    with without_patch(NAME):
        found = eager_vs_compiled(_whole(source, WHOLE["list"]), _make, (3, 5))
    assert found is not None and not is_break(found), found


def len_of_iterator(x, n):
    it = iter([x, n, 3])
    try:
        k = len(it)
    except TypeError:
        k = -1
    return x + k, list(it)


def reversed_iterator(x, n):
    it = iter([1, n, 3])
    next(it)
    try:
        r = list(reversed(it))
    except TypeError:
        r = None
    return x + 1, r, list(it)


def contains_tensor(x, n):
    it = iter([x, x + 1, x + 2])
    return x + 1, (x in it), len(list(it))


@pytest.mark.parametrize("fn", (len_of_iterator, reversed_iterator, contains_tensor), ids=lambda f: f.__name__)
def test_right_or_a_break(fn):
    assert_right_break_or_native(NAME, fn, _make, (3, 5))


def test_constant_iterator_truth_is_dynamo_s():
    """A fresh iterator over constants is a Python constant to Dynamo: its truth never reaches the handler."""
    def fn(x, n):
        it = iter([1, 2, 3])
        return (x + 1 if it else x), list(it)

    assert eager_vs_compiled(fn, _make, (3, 5)) is None


def test_truth_survives_a_foreign_wrapper(monkeypatch):
    """``if it:`` is told by the first frame of torch's own code above the handler: a profiler or another library
    wrapping Dynamo's method in between must not turn the truth test into a consumption."""
    from torch._dynamo.variables.lists import ListIteratorVariable

    installed = ListIteratorVariable.unpack_var_sequence

    def foreign(self, tx):
        return installed(self, tx)

    monkeypatch.setattr(ListIteratorVariable, "unpack_var_sequence", foreign)
    for name in ("truth_after_next", "truth_exhausted"):
        assert eager_vs_compiled(SHAPES[name], _make, (3, 5)) is None, name
