"""defaultdict-factory-read: ``d.default_factory`` read, compared and called, compared with eager (torch <2.11).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs (the factory itself
changes between calls for the inputs: the guard on ``d.default_factory`` must recompile): the return value
and every input after the call. Without the patch (reverted in-process) ``is`` is silently wrong on 2.5-2.10
(an input's factory: 2.7-2.10) and ``==``/``callable``/a call graph-break: ``test_without_the_patch_it_fails``
asserts that.
"""

from __future__ import annotations

import collections
import functools

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "defaultdict-factory-read"
VERSION = parse_torch_version(torch.__version__).base_version
IN_RANGE = VERSION in SpecifierSet("<2.11")
#: Where each shape is silently wrong without the patch (elsewhere in the range: a graph break). Measured:
#: 2.5-2.7 fold ``is`` right for an input's factory, not for one made in the frame.
WRONG_WITHOUT = {"factory_is": SpecifierSet(">=2.7,<2.11"), "factory_of_made": SpecifierSet("<2.11")}


def zeros():
    return 0


_FACTORIES = (list, int, zeros, None, collections.OrderedDict)


def _make(n):
    """An input defaultdict whose factory changes with ``n`` (builtins, a function, None, a class)."""
    d = collections.defaultdict(_FACTORIES[n % len(_FACTORIES)], a=n)
    return d, torch.arange(3.0) * n


def factory_is(d, x):
    """``is`` / ``is not`` against builtins, None and a global function, written back into the dict."""
    f = d.default_factory
    d["is_list"] = f is list
    d["not_int"] = d.default_factory is not int
    d["is_none"] = f is None
    d["is_zeros"] = getattr(d, "default_factory") is zeros  # noqa: B009 - the getattr() path
    return x + len(d), d["is_list"], d["is_none"]


def factory_eq_callable(d, x):
    """``==`` and ``callable`` on the factory."""
    f = d.default_factory
    return x * 2, f == list, f != int, callable(f), f is d.default_factory  # noqa: E721 - == on purpose


def factory_called(d, x):
    """The factory called by hand and by a missing key, read back in the frame."""
    if d.default_factory is None:
        return x - 1, dict(d)
    made = d.default_factory()
    d["k"] = made
    d["m"]  # the missing key fills itself with the factory's value
    return x + 1, made, dict(d), "m" in d


def factory_of_made(d, x):
    """defaultdicts made in the frame (the keyword shape: defaultdict-construction builds it on 2.5-2.9): their
    factories compared with the builtin, written into the input."""
    a = collections.defaultdict(list, p=len(d))
    b = collections.defaultdict(list)
    d["made"] = (a.default_factory is list, b.default_factory is list, b.default_factory is dict)
    return x + 1, d["made"]


def factory_of_copy(d, x):
    """A copy of the input keeps its factory: ``is`` between the two reads."""
    c = d.copy()
    c["n"] = 1
    return c.default_factory is d.default_factory, c.default_factory is not None, x + len(c)


SHAPES = {f.__name__: f for f in (factory_is, factory_eq_callable, factory_called, factory_of_made, factory_of_copy)}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (0, 1, 2, 3, 4, 5)) is None


def test_a_store_of_the_factory_is_not_read_stale():
    """``d.default_factory = f`` cannot be traced (the tracker takes no attribute store): a graph break,
    never a read of the old factory afterwards."""
    def store_then_read(d, x):
        d.default_factory = int
        return d.default_factory is int, x + 1

    found = eager_vs_compiled(store_then_read, _make, (0, 1))
    assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found


def test_a_partial_factory_defers():
    """A ``functools.partial`` factory: Dynamo folds ``p is p`` to False for a partial once the frame has a
    graph (2.5-2.6), so the patch leaves its read to Dynamo (a graph break), never that wrong answer."""
    def same(d, x):
        f = d.default_factory
        return x * 2, f is d.default_factory

    found = eager_vs_compiled(same, lambda n: (collections.defaultdict(functools.partial(list), a=n),
                                               torch.ones(2) * n), (0, 1))
    assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found


def test_a_subclass_defers():
    """A defaultdict subclass may define its own ``default_factory``: Dynamo's own answer, untouched."""
    class Sub(collections.defaultdict):
        pass

    def read(d, x):
        return d.default_factory is list, x + 1

    found = eager_vs_compiled(read, lambda n: (Sub(list, a=n), torch.ones(2) * n), (0, 1))
    assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.11")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (0, 1, 2, 3, 4, 5))
    assert found is not None, "the shape must fail without the patch"
    if VERSION in WRONG_WITHOUT.get(name, SpecifierSet("<0")):
        assert not isinstance(found, Exception), f"silently wrong without the patch, got {found!r}"
