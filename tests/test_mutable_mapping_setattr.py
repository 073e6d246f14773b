"""Attribute writes on MutableMapping objects under torch.compile (patch "mutable-mapping-setattr").

The first three tests are written the way they would be in pytorch's
test/dynamo (eager vs compiled on equal inputs, CompileCounter, fullgraph=True)
and pass unpatched on torch >= 2.9. Here they run in the patched process.
The last one is the tensordict symptom on 2.6 (default fullgraph=False).
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping

import pytest
import torch
import torch._dynamo
import torch._dynamo.testing


class Bag(MutableMapping):
    def __init__(self, **items):
        self._data = dict(items)
        self.scale = 2.0

    def __getitem__(self, key):
        return self._data[key]

    def __setitem__(self, key, value):
        self._data[key] = value

    def __delitem__(self, key):
        del self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


class Holder:
    def __init__(self, inner):
        self.inner = inner


def _state(obj):
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in vars(obj).items() if k != "_data"}


def _assert_same_state(a, b):
    sa, sb = _state(a), _state(b)
    assert sa.keys() == sb.keys()
    for key in sa:
        if isinstance(sa[key], torch.Tensor):
            torch.testing.assert_close(sa[key], sb[key], msg=f"attribute {key!r}")
        else:
            assert sa[key] == sb[key], f"attribute {key!r}: {sa[key]!r} != {sb[key]!r}"


def _compile(fn):
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    return torch.compile(fn, backend=counter, fullgraph=True), counter


def test_mutable_mapping_setattr_delattr_replayed():
    def fn(bag, x):
        bag.scale = 3.0  # existing attribute
        bag.extra = "added"  # new attribute
        del bag.gone  # deletion
        bag.cache = x * bag["w"] + 1  # tensor produced in the graph
        return x.sin()

    x = torch.randn(3)
    ref = Bag(w=torch.randn(3))
    ref.gone = 1
    res = copy.deepcopy(ref)
    expected = fn(ref, x)
    opt_fn, counter = _compile(fn)
    actual = opt_fn(res, x)
    torch.testing.assert_close(actual, expected)
    _assert_same_state(res, ref)
    assert not hasattr(res, "gone")
    assert counter.frame_count == 1


def test_mutable_mapping_setattr_read_back_nested_and_aliased():
    def fn(holder, alias, x):
        holder.inner.scale = holder.inner.scale + 1.5
        holder.inner.cache = x.cos()
        # read back in the same frame, through the same path and through an alias
        return holder.inner.cache * holder.inner.scale + alias.scale

    x = torch.randn(3)
    bag = Bag(w=torch.randn(3))
    ref = Holder(bag)
    res = copy.deepcopy(ref)
    expected = fn(ref, ref.inner, x)
    opt_fn, counter = _compile(fn)
    actual = opt_fn(res, res.inner, x)
    torch.testing.assert_close(actual, expected)
    _assert_same_state(res.inner, ref.inner)
    assert counter.frame_count == 1


def test_mutable_mapping_created_in_graph_escapes_with_attributes():
    def fn(x):
        fresh = Bag(w=x * 2)
        fresh.scale = 4.0
        fresh.tag = "fresh"
        return fresh

    x = torch.randn(3)
    expected = fn(x)
    opt_fn, counter = _compile(fn)
    actual = opt_fn(x)
    assert type(actual) is Bag
    _assert_same_state(actual, expected)
    torch.testing.assert_close(actual["w"], expected["w"])
    assert counter.frame_count == 1


def test_tensordict_built_from_tensordictparams_default_compile():
    """torch 2.6-2.8: AttributeError '_tensordict' without tdcompat (eager works).

    Unpatched, the caller frame falls back on ``dict(td)`` of a TensorDictParams
    (the "module-mapping-dict" gap); Dynamo then compiles ``TensorDict.__init__``
    as its own frame, with ``self`` an input mapping, and drops every
    ``self._x = ...`` it traced. Either patch alone makes this pass: with
    "module-mapping-dict" the TensorDict is built inside the caller's graph;
    with "mutable-mapping-setattr" the ``__init__`` frame's writes are replayed.
    """
    tensordict = pytest.importorskip("tensordict")

    def fn(td, x):
        return tensordict.TensorDict(**td)["w"] * x

    td = tensordict.TensorDictParams(tensordict.TensorDict(w=torch.randn(3)))
    x = torch.randn(3)
    expected = fn(td, x)
    torch._dynamo.reset()
    try:
        actual = torch.compile(fn, backend="eager")(td, x)
    except Exception as exc:
        if "dict()" in str(exc) and "TensorDictParams" in str(exc):
            pytest.skip(f"dict(TensorDictParams) still fails under compile: {exc}")
        raise
    torch.testing.assert_close(actual, expected)
