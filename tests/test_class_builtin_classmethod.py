"""class-builtin-classmethod: a builtin classmethod read from a class (torch 2.5-2.11).

``type(d).fromkeys(d, v)`` of a dict subclass (the fuzzer's shape), ``Sub.fromkeys``, ``d.fromkeys``, an
``OrderedDict`` subclass, ``MyInt.from_bytes``, ``C.__init_subclass__``, the method only read, its name,
two reads compared: compiled without ``fullgraph`` and compared with eager (return value and inputs) on
calls with different inputs, and with ``fullgraph`` right or a clean graph break, never a crash. The class
attribute replaced and deleted between calls: still eager's answer. Without the patch (reverted
in-process) the compile crashes on 2.5-2.11: asserted there.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "class-builtin-classmethod"
IN_RANGE = parse_torch_version(torch.__version__).release[:2] < (2, 12)


class Sub(dict):
    pass


class SubOD(collections.OrderedDict):
    pass


class MyInt(int):
    pass


class Plain:
    pass


def type_fromkeys(x, d):
    y = x + 2
    r = type(d).fromkeys(d, len(d))
    r["c"] = 2
    return y, type(r).__name__, list(r.items()), r["c"]


def class_fromkeys(x, d):
    y = x * 2
    r = Sub.fromkeys(d)
    return y, type(r).__name__, list(r)


def instance_fromkeys(x, d):
    y = x - 1
    return y, sorted(d.fromkeys(d, 0).items())


def ordered_subclass_fromkeys(x, d):
    o = SubOD(d)
    r = type(o).fromkeys(reversed(list(d)), 1)
    return x + 1, type(r).__name__, list(r.items())


def int_from_bytes(x, d):
    r = MyInt.from_bytes(bytes([len(d), 2]), "big")
    return x + r, r, type(r).__name__


def only_read(x, d):
    m = type(d).fromkeys
    return x + 1, callable(m), type(m).__name__


def read_name(x, d):
    return x + len(d), type(d).fromkeys.__name__, Plain.__init_subclass__.__name__


def one_read_twice(x, d):
    m = type(d).fromkeys
    return x + 1, m is m, m == m


def two_reads(x, d):
    """CPython: not the same object, equal. Natively 2.12-2.15 answer ``is`` True, 2.13-2.15 ``==`` False."""
    return x + 1, type(d).fromkeys is type(d).fromkeys, type(d).fromkeys == type(d).fromkeys


SHAPES = {f.__name__: f for f in (type_fromkeys, class_fromkeys, instance_fromkeys, ordered_subclass_fromkeys,
                                  int_from_bytes, only_read, read_name, one_read_twice)}
if IN_RANGE:  # the newer releases' own answers are wrong here (docstring): not this patch's range
    SHAPES["two_reads"] = two_reads


def _make(n):
    return torch.arange(3.0) * n, Sub({f"k{i}": i for i in range(n + 1)})


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_without_fullgraph_equals_eager(shape):
    assert eager_vs_compiled(SHAPES[shape], _make, (1, 2), fullgraph=False) is None


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fullgraph_right_or_breaks(shape):
    found = eager_vs_compiled(SHAPES[shape], _make, (1, 2))
    assert found is None or isinstance(found, Unsupported), found


@pytest.mark.skipif(not IN_RANGE, reason="2.14 crashes natively here (AttributeError: '<lambda>'): not this range")
@pytest.mark.parametrize("fullgraph", (False, True))
def test_class_attribute_replaced_between_calls(fullgraph):
    """The guards on the read (type, ``__self__``, ``__name__``) see a classmethod of the user's own."""

    class Own(dict):
        pass

    def fn(x, d):
        m = type(d).fromkeys
        return x + 1, type(m).__name__, callable(m)

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
    for step in range(3):
        if step == 1:
            Own.fromkeys = classmethod(lambda cls, it, v=None: ("own", v))
        if step == 2:
            del Own.fromkeys
        x, d = torch.ones(2) * step, Own(a=step)
        try:
            got = compiled(x, d)
        except Unsupported:
            assert fullgraph
            continue
        assert repr(got) == repr(fn(x, d)), step


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.5-2.11")
def test_without_the_patch_the_compile_crashes():
    """Without fullgraph: the identity guard on a method every read makes anew fails at once (``int.from_bytes``
    through a subclass: a dict subclass's ``fromkeys`` is read by dict-subclass-fromkeys from 2.7)."""
    with without_patch(NAME):
        torch._dynamo.reset()
        compiled = torch.compile(int_from_bytes, backend="eager")
        with pytest.raises(AssertionError, match="from_bytes"):
            compiled(*_make(1))
