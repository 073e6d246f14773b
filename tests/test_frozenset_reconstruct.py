"""frozenset-reconstruct: a frozenset built in the frame survives its reconstruction (torch <2.9).

Returned from a ``fullgraph=True`` frame it came back empty; held across a graph break
(``fullgraph=False``) the code after the graph raised ``TypeError``. Each test calls twice with
different inputs and compares with eager; without the patch (reverted in-process) the shape is
asserted to fail on 2.5-2.8.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch._dynamo  # tdcompat applies its patches when Dynamo is imported

from tdcompat.versions import parse_torch_version

from conftest import applied, compiled_outcome, without_patch

NAME = "frozenset-reconstruct"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 9)


class Box:
    def __init__(self, n):
        self.a = n


def _outcome(fn, fullgraph):
    return compiled_outcome(fn, lambda n: (torch.full((2,), float(n)), Box(n)), (3, 4), fullgraph)


def returned(x, o):
    fs = frozenset({o.a, 2, "s"})
    return x + len(fs), fs, (fs, 1), o.a in fs


def nested_returned(x, o):
    return x * 2, (1, frozenset({o.a, -0.0})), [frozenset({"k", o.a})]


def deepcopy_after(x, o):
    fs = frozenset({1, 2, o.a})
    c = copy.deepcopy(fs)  # a graph break on 2.5-2.11
    return x + 1, c == fs, sorted(c)


def break_between(x, o):
    fs = frozenset({o.a, -0.0, "s"})
    t = (1, fs)
    torch._dynamo.graph_break()
    return x + len(fs), fs, t


SHAPES = [(returned, True), (nested_returned, True), (deepcopy_after, False), (break_between, False)]


@pytest.mark.parametrize("fn,fullgraph", SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_frozenset_made_in_frame(fn, fullgraph):
    assert applied(NAME) == NEEDED
    assert _outcome(fn, fullgraph) == "ok"


@pytest.mark.skipif(not NEEDED, reason="2.9+ rebuild these frozensets natively")
@pytest.mark.parametrize("fn,fullgraph", SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_without_the_patch_it_fails(fn, fullgraph):
    with without_patch(NAME):
        got = _outcome(fn, fullgraph)
    assert got == ("wrong" if fullgraph else "TypeError"), got
