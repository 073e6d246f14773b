"""dict-view-live-iterator: an iterator over ``d.values()`` (2.9-2.12: ``d.items()``) reads the dict (torch 2.5-2.12).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the values the iterator
yields after the frame writes keys it has not reached yet, and the dict after the call. ``for`` loops, ``iter()``
with ``next()`` and ``list()`` of the rest, a dict passed in and one made
in the frame, an ``OrderedDict`` and a ``defaultdict``; items views on 2.9+ (2.5-2.8 hold ``d.items()`` as a tuple
snapshot). A key added while iterating: CPython raises ``RuntimeError``, compiled a clean graph break (not
compared). Without the patch (reverted in-process) the values shapes are wrong on 2.5-2.12 and the items ones on
2.9-2.12: asserted. 2.13+ are right natively (not this range).
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-view-live-iterator"
TORCH = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = TORCH < (2, 13)
ITEMS = TORCH >= (2, 9)


def for_values(x, d):
    out = []
    for v in d.values():
        out.append(v)
        d["c"] = v * 10
    return x + 1, out


def next_then_rest(x, d):
    it = iter(d.values())
    first = next(it)
    d["b"] = first + 100
    return x + 1, first, list(it)


def made_in_frame(x, d):
    e = dict(d)
    it = iter(e.values())
    e["b"] = -1
    return x + 1, list(it), e


def ordered_and_default(x, d):
    od = collections.OrderedDict(d)
    dd = collections.defaultdict(int, d)
    a, b = iter(od.values()), iter(dd.values())
    od["c"], dd["c"] = 11, 12
    return x + 1, list(a), list(b)


def for_items(x, d):
    out = []
    for k, v in d.items():
        out.append((k, v))
        d["c"] = len(out)
    return x + 1, out


def items_next_then_rest(x, d):
    it = iter(d.items())
    first = next(it)
    d["c"] = -3
    return x + 1, first, list(it)


VALUES = {f.__name__: f for f in (for_values, next_then_rest, made_in_frame,
                                   ordered_and_default)}
ITEM_SHAPES = {f.__name__: f for f in (for_items, items_next_then_rest)}


def unchanged(x, d):
    """No write while iterating, keys views, reading a view after a write: as before."""
    total = 0
    for v in d.values():
        total += v
    keys = [k for k in d.keys()]
    d["b"] = 9
    return x + total, keys, list(d.values())


def key_added(x, d):
    out = []
    for v in d.values():
        out.append(v)
        if len(d) < 5:
            d["new"] = v
    return x + 1, out


def _make(n):
    return torch.arange(3.0) * n, {"a": n, "b": 2, "c": 3}


@pytest.mark.parametrize("name", sorted(VALUES) + ["unchanged"])
def test_values_iterator_reads_the_dict(name):
    fn = VALUES.get(name, unchanged)
    assert eager_vs_compiled(fn, _make, (1, 2, 3)) is None


@pytest.mark.skipif(not ITEMS, reason="2.5-2.8 hold d.items() as a tuple snapshot (not this patch)")
@pytest.mark.parametrize("name", sorted(ITEM_SHAPES))
def test_items_iterator_reads_the_dict(name):
    assert eager_vs_compiled(ITEM_SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.13")
def test_a_key_added_while_iterating_is_a_graph_break():
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        key_added(*_make(1))
    torch._dynamo.reset()
    compiled = torch.compile(key_added, backend="eager", fullgraph=True)
    with pytest.raises(torch._dynamo.exc.Unsupported):  # without the patch: the old values, no error
        compiled(*_make(1))


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.13")
def test_without_the_patch_it_fails():
    shapes = {**VALUES, **(ITEM_SHAPES if ITEMS else {})}
    with without_patch(NAME):
        failing = sorted(name for name, fn in shapes.items() if eager_vs_compiled(fn, _make, (1, 2)) is not None)
    assert failing == sorted(shapes)
