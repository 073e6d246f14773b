"""ordered-dict-values-input: an ``OrderedDict``'s values view as a compiled frame's input (every release).

The view passed in and read in the frame (a ``for`` loop, ``list()``, ``sum()``, ``enumerate()``, ``in``, returned,
only its ``len()``), and left on the stack by a graph break before a loop over it (an ``OrderedDict`` subclass
that overrides ``keys``): compiled without ``fullgraph`` and compared with eager (return value and inputs) on
calls with different inputs, and with ``fullgraph`` right or a clean graph break, never a crash. ``len()`` alone
still compiles under ``fullgraph`` (Dynamo's own answer, kept). Without the patch (reverted in-process) the
compile crashes on every release: asserted there.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import InternalTorchDynamoError, Unsupported

from conftest import eager_vs_compiled, without_patch

NAME = "ordered-dict-values-input"


def loop(x, vals):
    for v in vals:
        x = x * v
    return x


def as_list(x, vals):
    return x + 1, list(vals)


def summed(x, vals):
    return x + sum(vals)


def enumerated(x, vals):
    out = []
    for i, v in enumerate(vals):
        out.append(v * i)
    return x - 1, out


def contains(x, vals):
    return x + 2, 3 in vals


def returned(x, vals):
    return x * 2, vals


def only_len(x, vals):
    return x * len(vals)


SHAPES = {f.__name__: f for f in (loop, as_list, summed, enumerated, contains, returned, only_len)}


def _make(n):
    od = collections.OrderedDict(a=n + 1, b=n + 2)
    if n % 2:
        od["c"] = 3
    od.move_to_end("a")
    return torch.arange(3.0) + n, od.values()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_without_fullgraph_equals_eager(shape):
    assert eager_vs_compiled(SHAPES[shape], _make, (1, 2, 3), fullgraph=False) is None


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fullgraph_right_or_breaks(shape):
    found = eager_vs_compiled(SHAPES[shape], _make, (1, 2, 3))
    assert found is None or isinstance(found, Unsupported), found


def test_len_alone_still_compiles():
    """Never worse: no item is read, Dynamo's own length guard answers (fullgraph, three calls)."""
    assert eager_vs_compiled(only_len, _make, (1, 2, 3)) is None


def test_tensor_items_break_cleanly():
    def fn(x, vals):
        for t in vals:
            x = x + t
        return x

    def make(n):
        return torch.zeros(2), collections.OrderedDict(a=torch.ones(2) * n, b=torch.ones(2)).values()

    assert eager_vs_compiled(fn, make, (1, 2), fullgraph=False) is None
    assert isinstance(eager_vs_compiled(fn, make, (1, 2)), Unsupported)


class KeysOverride(collections.OrderedDict):
    """Dynamo 2.5-2.6 graph-break on ``d.values()`` of such a subclass: the view is left on the stack."""

    def keys(self):
        return super().keys()


def resume_after_break(x, d):
    y = x * 0
    for i, v in enumerate(d.values()):
        y = y + (torch.sin(x * v) if i == 0 else torch.cos(x * v))
    d["z"] = len(d)
    return y, list(d.items())


def _make_subclass(n):
    d = KeysOverride()
    d[2], d[3] = 4 + n, 5
    d.move_to_end(2)
    return torch.arange(4.0) * n, d


def test_view_left_on_the_stack_by_a_break_equals_eager():
    assert eager_vs_compiled(resume_after_break, _make_subclass, (1, 2), fullgraph=False) is None


def test_without_the_patch_the_compile_crashes():
    """Every release: the guard on the first item indexes the view (``L['vals'][0]``)."""
    with without_patch(NAME):
        found = eager_vs_compiled(loop, _make, (1,), fullgraph=False)
    assert isinstance(found, InternalTorchDynamoError), found
    assert "not subscriptable" in str(found)
