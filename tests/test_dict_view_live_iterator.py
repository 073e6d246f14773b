"""dict-view-live-iterator: an iterator over a dict's values or items view reads the dict when it advances.

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the values the iterator
yields after the frame writes keys it has not reached yet, and the dict after the call. ``for`` loops, ``iter()``
with ``next()`` and ``list()`` of the rest, ``reversed()`` of a keys, values or items view, a dict passed in and
one made in the frame, an ``OrderedDict`` and a ``defaultdict``. A key added or deleted while iterating: CPython
raises ``RuntimeError``, compiled a clean graph break. Without the patch (reverted in-process) the forward shapes
are wrong on 2.5-2.12 (2.13+ iterate the dict itself) and the ``reversed()`` ones on every release: asserted.
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
FORWARD_WRONG = TORCH < (2, 13)  # 2.13+ iterate the dict itself; reversed() is a snapshot on every release


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


def reversed_values(x, d):
    it = reversed(d.values())
    first = next(it)
    d["a"] = first + 50
    return x + 1, first, list(it)


def reversed_items_loop(x, d):
    out = []
    for k, v in reversed(d.items()):
        out.append((k, v))
        d["a"] = v * 7
    return x + 1, out


def reversed_keys_next(x, d):
    """2.5-2.12 answered ``reversed(view)`` with a tuple: ``next()`` did not advance it."""
    it = reversed(d.keys())
    first = next(it)
    return x + 1, first, list(it)


def reversed_ordered_made_in_frame(x, d):
    od = collections.OrderedDict(d)
    od["z"] = 26
    it = reversed(od.values())
    first = next(it)
    od["b"] = first + 1
    return x + 1, first, list(it), od


VALUES = {f.__name__: f for f in (for_values, next_then_rest, made_in_frame,
                                   ordered_and_default)}
ITEM_SHAPES = {f.__name__: f for f in (for_items, items_next_then_rest)}
REVERSED = {f.__name__: f for f in (reversed_values, reversed_items_loop, reversed_keys_next,
                                     reversed_ordered_made_in_frame)}


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


def key_deleted_reversed(x, d):
    it = reversed(d.items())
    next(it)
    del d["a"]
    return x + 1, list(it)


def _make(n):
    return torch.arange(3.0) * n, {"a": n, "b": 2, "c": 3}


@pytest.mark.parametrize("name", sorted(VALUES) + ["unchanged"])
def test_values_iterator_reads_the_dict(name):
    fn = VALUES.get(name, unchanged)
    assert eager_vs_compiled(fn, _make, (1, 2, 3)) is None


@pytest.mark.parametrize("name", sorted(ITEM_SHAPES))
def test_items_iterator_reads_the_dict(name):
    assert eager_vs_compiled(ITEM_SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.parametrize("name", sorted(REVERSED))
def test_reversed_view_iterator_reads_the_dict(name):
    assert eager_vs_compiled(REVERSED[name], _make, (1, 2, 3)) is None


@pytest.mark.parametrize("fn, message", [(key_added, "changed size during iteration"),
                                         (key_deleted_reversed, "changed size during iteration")])
def test_a_key_added_or_deleted_while_iterating_is_a_graph_break(fn, message):
    with pytest.raises(RuntimeError, match=message):
        fn(*_make(1))
    if fn is key_added and not FORWARD_WRONG:
        return  # 2.13+ raise the RuntimeError in the trace themselves
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    with pytest.raises(torch._dynamo.exc.Unsupported):  # without the patch: the old values, no error
        compiled(*_make(1))


def test_without_the_patch_it_fails():
    # 2.13+ answer reversed(d.keys()) with an iterator (right: keys are read when it is made either way)
    old_only = {**VALUES, **ITEM_SHAPES, "reversed_keys_next": reversed_keys_next}
    shapes = {**REVERSED, **old_only} if FORWARD_WRONG else {k: f for k, f in REVERSED.items() if k not in old_only}
    with without_patch(NAME):
        failing = sorted(name for name, fn in shapes.items() if eager_vs_compiled(fn, _make, (1, 2)) is not None)
    assert failing == sorted(shapes)
