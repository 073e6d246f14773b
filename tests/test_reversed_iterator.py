"""reversed-iterator: ``reversed()`` of a list, tuple or range is an iterator (torch <2.13).

Dynamo 2.5-2.12 made ``reversed(x)`` a tuple: ``next()`` returned its first item without
consuming it, a second ``list(it)`` repeated every item, a returned iterator came back as a
tuple. Each shape below runs twice with different inputs, compiled (``fullgraph=True``)
against eager: with tdcompat it is right or a graph break, never wrong; the consuming shapes
are asserted wrong without the patch on 2.5-2.12 (reverted in-process).
"""

from __future__ import annotations

import enum
import itertools

import pytest
import torch
import torch._dynamo  # tdcompat applies its patches when Dynamo is imported

from tdcompat.versions import parse_torch_version

from conftest import applied, compiled_outcome, without_patch

NAME = "reversed-iterator"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 15)
TUPLE = TORCH < (2, 13)  # reversed() was a tuple: consumed wrong, returned as a tuple


class Box:
    def __init__(self, n):
        self.n = n
        self.items = [n, n + 1, 2 * n, "s"]


def _inputs(n):
    return torch.full((2,), float(n)), Box(n)


def _state(args):
    return sorted((k, repr(v)) for k, v in vars(args[1]).items())


def _gen(it):
    yield from it


# Shapes Dynamo got wrong before 2.13: the iterator is consumed, or leaves the frame.
def next_twice(x, o):
    it = reversed(o.items)
    return next(it), next(it), x + 1


def next_then_list(x, o):
    it = reversed(o.items)
    first = next(it)
    return first, list(it), list(it), x + 1


def list_twice_tuple(x, o):
    it = reversed(tuple(o.items))
    return list(it), [*it], x * 2


def range_consumed(x, o):
    it = reversed(range(o.n))
    next(it)
    return [v for v in it], sum(it), x + o.n


def iter_of_it(x, o):
    it = reversed(o.items)
    return next(iter(it)), list(it), x - 1


def zip_after_next(x, o):
    it = reversed(o.items)
    next(it)
    return list(zip(it, o.items)), list(it), x + 2


def lazy_after_write(x, o):
    items = list(o.items)
    it = reversed(items)
    items[len(items) - 1] = o.n * 10
    o.items.append(o.n)
    return list(it), x + 3


def returned(x, o):
    it = reversed(o.items)
    next(it)
    return it, x + 1


def stored(x, o):
    o.rev = reversed([o.n, x])
    return x + 1


CONSUMED = [next_twice, next_then_list, list_twice_tuple, range_consumed, iter_of_it, zip_after_next,
            lazy_after_write]
# Shapes that were right before and must stay right (or break, never wrong).
RIGHT_BEFORE = [
    lambda x, o: ([v for v in reversed(o.items)], x + 1),
    lambda x, o: (list(enumerate(reversed(o.items))), x + 1),
    lambda x, o: (list(map(lambda v: v * 2, reversed(o.items))), x + 1),
    lambda x, o: (list(itertools.chain(reversed(o.items), [0])), x + 1),
    lambda x, o: (list(_gen(reversed(o.items))), x + 1),
    lambda x, o: (tuple(reversed([o.n, 1, 5])), x + 1),
    lambda x, o: (dict(zip(reversed(o.items), o.items)), x + 1),
    lambda x, o: ([t + 1 for t in reversed([x, x * 2])], x),
    lambda x, o: (list(reversed({"a": o.n, "b": 2})), x + 1),  # a dict: Dynamo's own
    lambda x, o: (list(reversed("abc")), x + 1),  # a str: Dynamo's own
]


def _outcome(fn, fullgraph=True):
    return compiled_outcome(fn, _inputs, (3, 4), fullgraph, state=_state)


@pytest.mark.parametrize("fn", CONSUMED, ids=[f.__name__ for f in CONSUMED])
def test_consumed_iterator_is_right(fn):
    assert applied(NAME) == NEEDED
    assert _outcome(fn) == "ok"


@pytest.mark.parametrize("fn", [returned, stored], ids=["returned", "stored"])
def test_escaping_iterator_breaks_where_it_was_a_tuple(fn):
    got = _outcome(fn)
    if TUPLE:
        assert got == "Unsupported"  # a rebuilt copy would no longer read the list
    else:  # 2.13+: rebuilt as Dynamo rebuilds its own (a tuple_iterator over what is still to come)
        with without_patch(NAME):
            assert got == _outcome(fn)


@pytest.mark.parametrize("i", range(len(RIGHT_BEFORE)))
def test_shapes_right_before_stay_right(i):
    assert _outcome(RIGHT_BEFORE[i]) == "ok"


def test_graph_break_while_alive_is_right():
    def fn(x, o):
        it = reversed(o.items)
        a = next(it)
        torch._dynamo.graph_break()
        return a, list(it), x + 1

    assert _outcome(fn, fullgraph=False) == "ok"


def type_and_lazy(x, o):
    items = list(o.items)
    it = reversed(items)
    items[0] = o.n * 10
    return type(it).__name__, list(it), x + 1


@pytest.mark.skipif(not TUPLE, reason="2.13+ consume reversed() natively")
@pytest.mark.parametrize("fn", [next_twice, next_then_list, list_twice_tuple, range_consumed, iter_of_it, returned],
                         ids=["next_twice", "next_then_list", "list_twice_tuple", "range_consumed", "iter_of_it",
                              "returned"])
def test_without_the_patch_it_is_wrong(fn):
    with without_patch(NAME):
        got = _outcome(fn)
    assert got == "wrong", got


@pytest.mark.skipif(not NEEDED, reason="2.15 mirrors CPython's builtin_reversed_impl")
def test_type_and_lazy_reads():
    assert _outcome(type_and_lazy) == "ok"
    with without_patch(NAME):
        assert _outcome(type_and_lazy) == "wrong"


class BackwardsMeta(enum.EnumMeta):
    """Iterates backwards; inherits EnumMeta.__reversed__ (which walks the members forwards reversed)."""

    def __iter__(cls):
        return reversed([cls._member_map_[name] for name in cls._member_names_])


class Backwards(enum.Enum, metaclass=BackwardsMeta):
    A = 1
    B = 2
    C = 3


class Forwards(enum.Enum):
    A = 1
    B = 2


def reversed_enum(x, o):
    return [m.name for m in reversed(Backwards)], [m.name for m in reversed(Forwards)], x + o.n


def test_reversed_enum_class_with_its_own_iter():
    """CPython runs ``type(E).__reversed__``; 2.12 reversed what ``__iter__`` yields (silently wrong)."""
    got = _outcome(reversed_enum)
    if TORCH < (2, 13):
        assert got == "Unsupported", got
        if TORCH >= (2, 12):
            with without_patch(NAME):
                assert _outcome(reversed_enum) == "wrong"
    else:
        assert got == "ok", got
