"""object-str-repr: ``str(obj)`` of an object whose class keeps ``object.__str__`` is its traced repr (torch <2.14).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value and
every input after the call. Shapes: an object passed in whose repr reads an attribute the frame writes, or one it
never reads (the fold reused the first call's string); an object built in the frame from its class; a
dict subclass passed in and written; an ``OrderedDict``/``defaultdict`` built in the frame (2.13: printed
empty); a class with its own ``__str__`` (untouched). Without the patch (reverted in-process) the wrong shapes
fail on the releases of its range: ``test_without_the_patch_it_fails`` asserts that they do.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, is_break, without_patch

NAME = "object-str-repr"
VERSION = parse_torch_version(torch.__version__).base_version
IN_RANGE = VERSION in SpecifierSet("<2.14")


class Point:
    unit = "m"

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Point({self.v}{self.unit})"


class Named:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Named({self.v})"

    def __str__(self):
        return f"named {self.v}"


class Bag(dict):
    pass


def written_then_str(x, p):
    """the repr reads an attribute the frame has just written"""
    p.v = p.v + "!"
    return x + 1, str(p), p.v


def str_of_unread_input(x, p):
    """nothing else reads ``p``: the fold gave the first call's string on every call"""
    return x * 2, str(p)


def built_then_str(x, p):
    """an object built in the frame from a class passed in, written, then printed"""
    q = type(p)(p.v)
    q.v = q.v + "?"
    return x + 1, str(q)


def own_str(x, p):
    """a class with its own ``__str__`` (Dynamo inlines it; untouched)"""
    p.v = p.v + "!"
    return x + 1, str(p)


def dict_subclass_written(x, d):
    """a dict subclass passed in, written, then printed (a C repr: a graph break, never the old items)"""
    d["k"] = "v"
    return x + 1, str(d)


def built_ordered_dicts(x, n):
    """``OrderedDict`` / ``defaultdict`` built in the frame and printed"""
    od = collections.OrderedDict(k=n)
    dd = collections.defaultdict(int, k=n)
    return x + 1, str(od), str(dd)


def _point(n):
    return torch.arange(3.0) * n, Point("abc"[n - 1])


def _named(n):
    return torch.arange(3.0) * n, Named("abc"[n - 1])


def _bag(n):
    return torch.arange(3.0) * n, Bag(a="abc"[n - 1])


def _tag(n):
    return torch.arange(3.0) * n, "abc"[n - 1]


SHAPES = {
    "written_then_str": (written_then_str, _point),
    "str_of_unread_input": (str_of_unread_input, _point),
    "built_then_str": (built_then_str, _point),
    "own_str": (own_str, _named),
}

#: shapes whose repr is C code: equal to eager, or a graph break before 2.13 (never the stale text)
BREAKS_BEFORE_2_13 = {
    "dict_subclass_written": (dict_subclass_written, _bag),
    "built_ordered_dicts": (built_ordered_dicts, _tag),  # 2.5-2.12: str of a dict tracker is refused natively
}

#: (shape, releases where it is wrong without the patch), measured
WRONG_WITHOUT = {
    "written_then_str": "<2.14",
    "str_of_unread_input": "<2.14",
    "dict_subclass_written": "==2.13.*",  # 2.5-2.12: the write itself is refused
    "built_ordered_dicts": "==2.13.*",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    fn, make = SHAPES[name]
    assert eager_vs_compiled(fn, make, (1, 2, 3)) is None


@pytest.mark.parametrize("name", sorted(BREAKS_BEFORE_2_13))
def test_c_repr_is_never_stale(name):
    fn, make = BREAKS_BEFORE_2_13[name]
    found = eager_vs_compiled(fn, make, (1, 2, 3))
    assert found is None or (VERSION in SpecifierSet("<2.13") and is_break(found)), found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.14")
@pytest.mark.parametrize("name", sorted(WRONG_WITHOUT))
def test_without_the_patch_it_fails(name):
    if VERSION not in SpecifierSet(WRONG_WITHOUT[name]):
        pytest.skip(f"{name} is right (or refused) on {VERSION} without the patch")
    fn, make = {**SHAPES, **BREAKS_BEFORE_2_13}[name]
    with without_patch(NAME):
        found = eager_vs_compiled(fn, make, (1, 2))
    assert isinstance(found, str), f"{name}: expected a wrong result without the patch, got {found!r}"


class Swapped:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Swapped({self.v})"


def _other_repr(self):
    return f"other {self.v}"


def _texts_after_repr_swap(built):
    """(compiled, eager) ``str()`` of a ``Swapped`` on a second call after its class got another ``__repr__`` (the
    same ``v`` both times: only a guard on the class's ``__repr__`` can tell the calls apart)."""

    def fn(x, p):
        q = type(p)(p.v + "!") if built else p
        return x + 1, str(q)

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    original = Swapped.__repr__
    x = torch.arange(3.0)
    try:
        compiled(x, Swapped("a"))
        Swapped.__repr__ = _other_repr
        return compiled(x, Swapped("a"))[1], fn(x, Swapped("a"))[1]
    finally:
        Swapped.__repr__ = original


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.14")
@pytest.mark.parametrize("built", [False, True])
def test_a_class_given_another_repr_recompiles(built):
    """the traced repr is guarded (2.13's own generic_repr is not: the handler inlines a Python repr there too)"""
    got, expected = _texts_after_repr_swap(built)
    assert got == expected


@pytest.mark.skipif(IN_RANGE, reason="the patch applies on torch <2.14")
@pytest.mark.parametrize("built", [False, True])
def test_a_replaced_repr_is_stale_natively_from_2_14(built):
    """Open upstream (2.14-2.15, no patch there): ``generic_str`` -> ``generic_repr`` reads the class's
    ``__repr__`` without a guard, so the first call's text comes back. Asserted, so that a fix is noticed."""
    got, expected = _texts_after_repr_swap(built)
    assert got != expected and got.startswith("Swapped("), (got, expected)
