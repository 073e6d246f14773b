"""dict-nan-key-input: a dict with a float NaN key passed to a compiled frame (torch <2.15).

The dict passed in and read (its items in a loop, ``len``, its values summed, keys then items by key, a write), as
an ``OrderedDict`` and a ``defaultdict``, with a tuple key holding the NaN, held by an attribute, and an object's
``__dict__`` holding a NaN key: compiled without ``fullgraph`` and compared with eager (return value and inputs)
on calls with different inputs, and with ``fullgraph`` right or a clean graph break, never a crash. A dict whose
other keys are not literals, and a dict without NaN keys, still compile under ``fullgraph`` (Dynamo's own
answer). Without the patch (reverted in-process) the compile crashes on the releases of the range: asserted
there.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet
from torch._dynamo.exc import InternalTorchDynamoError, Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-nan-key-input"
IN_RANGE = parse_torch_version(torch.__version__).base_version in SpecifierSet("<2.15")
NAN = float("nan")


class Holder:
    pass


def items(x, d):
    s = x
    for _k, v in d.items():
        s = s + v
    return s


def length(x, d):
    return x * len(d)


def values(x, d):
    return x + sum(d.values())


def by_key(x, d):
    s = x
    for k in list(d.keys()):
        s = s + d[k]
    return s


def only_other_key(x, d):
    """compiles without the patch on 2.7-2.14: a graph break with it (never worse: never a wrong value)"""
    return x + d["a"]


def only_keys(x, d):
    """compiles without the patch: a graph break with it"""
    keys = list(d.keys())
    return x * len(keys), keys[1]


def written(x, d):
    d["z"] = len(d)
    return x + d["a"], list(d.values())


def attribute(x, o):
    s = x
    for v in o.d.values():
        s = s + v
    return s


def instance_dict(x, o):
    return x + len(vars(o)), [v for v in vars(o).values() if isinstance(v, int)]


def _plain(n, key=NAN, kind=dict):
    d = kind()
    d[key] = n
    d["a"] = 2
    if n % 2:
        d["b"] = 3
    return torch.arange(3.0) * n, d


def _holder(n):
    x, d = _plain(n)
    o = Holder()
    o.d = d
    return x, o


def _instance(n):
    o = Holder()
    o.__dict__[NAN] = n
    o.a = 2
    return torch.arange(3.0) * n, o


SHAPES = {
    "items": (items, _plain),
    "length": (length, _plain),
    "values": (values, _plain),
    "by_key": (by_key, _plain),
    "written": (written, _plain),
    "only_other_key": (only_other_key, _plain),
    "only_keys": (only_keys, _plain),
    "ordered_dict": (items, lambda n: _plain(n, kind=collections.OrderedDict)),
    "defaultdict": (items, lambda n: _plain(n, kind=lambda: collections.defaultdict(int))),
    "tuple_key": (items, lambda n: _plain(n, key=(NAN, 1))),
    "attribute": (attribute, _holder),
    "instance_dict": (instance_dict, _instance),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_without_fullgraph_equals_eager(shape):
    fn, make = SHAPES[shape]
    assert eager_vs_compiled(fn, make, (1, 2, 3), fullgraph=False) is None


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fullgraph_right_or_breaks(shape):
    fn, make = SHAPES[shape]
    found = eager_vs_compiled(fn, make, (1, 2, 3))
    assert found is None or isinstance(found, Unsupported), found


class Key:
    pass


KEY = Key()


def _with_object_key(n):
    x, d = _plain(n)
    d[KEY] = 4
    return x, d


@pytest.mark.parametrize("make", [_with_object_key, lambda n: _plain(n, key=1.5)], ids=["object_key", "float_key"])
def test_other_dicts_are_left_to_dynamo(make):
    """Never worse: a NaN among keys Dynamo indexes by position (a key that is no literal: 2.6+ compile it), and
    a dict of other float keys, give what they give without the patch (fullgraph: the same outcome)."""
    found = eager_vs_compiled(items, make, (1, 2, 3))
    with without_patch(NAME):
        native = eager_vs_compiled(items, make, (1, 2, 3))
    assert type(found) is type(native), (found, native)


def test_a_dict_of_other_float_keys_compiles():
    assert eager_vs_compiled(items, lambda n: _plain(n, key=1.5), (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.15")
def test_without_the_patch_the_compile_crashes():
    """2.5-2.14: the guard of an item is named ``L['d'][nan]``."""
    with without_patch(NAME):
        found = eager_vs_compiled(items, _plain, (1,), fullgraph=False)
    assert isinstance(found, InternalTorchDynamoError), found
    assert "nan" in str(found)
