"""resume-display-extend: a graph break inside a list or set display with unpacking (torch 2.5).

``[x.sum(), *g(n)]``, ``([*g(n)], 2)``, ``{n + 5, *g(n)}``, ``({*g(n)}, 2)`` where ``g`` graph-breaks, compiled
without ``fullgraph`` and compared with eager (return value) on calls with different inputs; the displays that
2.5 resumes fine (dicts, ``f(**d)``, comprehensions) too. Without the patch (reverted in-process) the list and
set displays crash the resumed frame's compile on 2.5 (``AssertionError``): asserted there.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.dynamo_api import torch_release

from conftest import eager_vs_compiled, without_patch

NAME = "resume-display-extend"


def brk(v):
    torch._dynamo.graph_break()
    return [v, v + 1]


def brkd(v):
    torch._dynamo.graph_break()
    return {"a": v}


def kw(**k):
    return k


def list_tail(x, n):
    out = [x.sum(), *brk(n)]
    out.append(len(out))
    return x + 1, out


def list_in_tuple(x, n):
    out = []
    out.append(([*brk(n)], n))
    return x + 1, out


def set_tail(x, n):
    s = {n + 5, *brk(n)}
    return x + 1, sorted(s)


def set_in_tuple(x, n):
    return x + 1, ({*brk(n)}, 2)


def dict_display(x, n):
    return x + 1, {"b": n, **brkd(n)}, kw(z=1, **brkd(n))


def comprehension(x, n):
    return x + 1, [v * 2 for v in brk(n)]


CRASHED = {f.__name__: f for f in (list_tail, list_in_tuple, set_tail, set_in_tuple)}
SHAPES = {**CRASHED, **{f.__name__: f for f in (dict_display, comprehension)}}


def _make(n):
    return torch.arange(3.0) * n, n + 2


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3), fullgraph=False) is None


@pytest.mark.skipif(torch_release() >= (2, 6), reason="2.6 resumes these displays (is_mutable())")
@pytest.mark.parametrize("name", sorted(CRASHED))
def test_without_the_patch_the_resumed_frame_crashes(name):
    with without_patch(NAME):
        found = eager_vs_compiled(CRASHED[name], _make, (1, 2), fullgraph=False)
    assert isinstance(found, AssertionError), found
