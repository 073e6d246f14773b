"""skipped-descriptor-call: a refused call of a method descriptor (torch 2.5-2.6).

``Sub.get(Sub(a=v), "a")`` for a dict subclass made in the frame (the fuzzer's ``SubD`` shape) and other
unbound builtin methods called through a class: compiled with and without ``fullgraph`` and compared with
eager on calls with different inputs. With tdcompat: equal to eager without fullgraph, right or a graph
break with it. Without the patch (reverted in-process) the compile crashes on 2.5-2.6: asserted there.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "skipped-descriptor-call"
TORCH = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = TORCH < (2, 7)


class Sub(dict):
    pass


class Box:
    def __init__(self, n):
        self.n = n


def class_get(x, o):
    return x + 1, Sub.get(Sub(a=o), "a") is o, Sub.get(Sub(b=o.n), "b")


def class_keys(x, o):
    return x * 2, sorted(Sub.keys(Sub(a=o, b=o.n)))


def class_setdefault(x, o):
    d = Sub(a=o.n)
    return x - 1, Sub.setdefault(d, "q", o.n + 1), dict(d)


SHAPES = {f.__name__: f for f in (class_get, class_keys, class_setdefault)}


def _make(n):
    return torch.arange(3.0) * n, Box(n)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fullgraph_right_or_breaks(shape):
    found = eager_vs_compiled(SHAPES[shape], _make, (1, 2))
    assert found is None or isinstance(found, Unsupported), found


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_without_fullgraph(shape):
    fn = SHAPES[shape]
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    for n in (1, 2):
        assert repr(fn(*_make(n))) == repr(compiled(*_make(n)))


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.5-2.6")
def test_without_the_patch_the_compile_crashes():
    """Without fullgraph (with it, ``Sub(a=o)`` itself is a graph break first there)."""
    with without_patch(NAME):
        compiled = torch.compile(class_get, backend="eager")
        with pytest.raises(Exception, match="__module__") as caught:
            compiled(*_make(1))
    assert not isinstance(caught.value, Unsupported), caught.value
