"""symbool-sym-float: a tensor times a symbolic bool traces (torch <2.10).

``x * (o.a == 3)`` with ``o.a`` made dynamic by a second call raised ``TorchRuntimeError``
(``float()`` of a ``SymBool``) on 2.5-2.9, with ``fullgraph`` True and False. Each test calls three
times with different ints (the second call makes the int dynamic) and compares with eager; without
the patch (reverted in-process) the shape is asserted to raise on 2.5-2.9.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # tdcompat applies its patches when Dynamo is imported

from tdcompat.versions import parse_torch_version

from conftest import applied, compiled_outcome, without_patch

NAME = "symbool-sym-float"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 10)


class Box:
    def __init__(self, n):
        self.a = n


def _outcome(fn, fullgraph):
    """Three calls with different ints: the second makes ``o.a`` dynamic."""
    return compiled_outcome(fn, lambda n: (torch.full((2,), float(n)), Box(n)), (3, 4, 5), fullgraph)


def mul_by_comparison(x, o):
    return x * (o.a == 4), x * (o.a != o.a + 1)


def add_comparison(x, o):
    return x + (o.a < 4), (o.a >= 4) * x


def bool_scaled_tensor(x, o):
    flag = o.a > 3
    return x * flag + 1, flag, flag * x.sum()


SHAPES = [mul_by_comparison, add_comparison, bool_scaled_tensor]


@pytest.mark.parametrize("fullgraph", [True, False])
@pytest.mark.parametrize("fn", SHAPES, ids=[f.__name__ for f in SHAPES])
def test_tensor_with_symbolic_bool(fn, fullgraph):
    assert applied(NAME) == NEEDED
    assert _outcome(fn, fullgraph) == "ok"


@pytest.mark.skipif(not NEEDED, reason="2.10+ cast SymBool natively (pytorch/pytorch#165264)")
@pytest.mark.parametrize("fn", SHAPES, ids=[f.__name__ for f in SHAPES])
def test_without_the_patch_it_raises(fn):
    with without_patch(NAME):
        assert _outcome(fn, True) == "TorchRuntimeError"


def test_symbool_is_left_as_it_was_when_reverted():
    had = "__sym_float__" in vars(torch.SymBool)
    if NEEDED:
        with without_patch(NAME):
            assert "__sym_float__" not in vars(torch.SymBool)
    assert ("__sym_float__" in vars(torch.SymBool)) == had
