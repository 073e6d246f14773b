"""defaultdict-as-dict: ``dict(dd)`` / ``OrderedDict(dd)`` of a ``collections.defaultdict`` (torch 2.5-2.6).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs (different
factories, keys and values): the return value (type, items, order) and the inputs after the call, the
copy written and read back in the frame. Without the patch (reverted in-process) every shape raises
``AssertionError`` on 2.5-2.6.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "defaultdict-as-dict"
TORCH = parse_torch_version(torch.__version__).release[:2]
#: The patch's range (``<2.7``): decided by the range, not by whether the patch is applied, so the tests go
#: red when it is off (TDCOMPAT_DISABLE).
IN_RANGE = TORCH < (2, 7)


def to_dict(x, d):
    e = dict(d)
    e["new"] = x.sum()
    d["after"] = 1  # the copy is a copy: not in e
    return e, list(e), "after" in e, x + len(e)


def to_ordered_dict(x, d):
    e = collections.OrderedDict(d)
    e["new"] = x.sum()
    del e[next(iter(e))]
    return e, list(e.items()), x * len(d)


def made_in_the_frame(x, d):
    m = collections.defaultdict(list)
    m[len(d)].append(1)
    m["x"].append(2)
    e = dict(m)
    return e, e[len(d)], x - 1


def missing_key_after_the_copy(x, d):
    e = dict(d)
    try:
        e["absent"]
    except KeyError:
        return x + 1, e, d
    return x, e, d


def update_from_the_copy(x, d):
    e = {"z": x}
    e.update(dict(d))
    return e, list(e)


SHAPES = {f.__name__: f for f in (to_dict, to_ordered_dict, made_in_the_frame, missing_key_after_the_copy,
                                   update_from_the_copy)}


def _make(n):
    d = collections.defaultdict(list if n % 2 else None)
    for i in range(n + 1):
        d[f"k{(i * 7 + n) % 5}"] = i * n
    return torch.arange(3.0) * n, d


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_equals_eager(shape):
    assert eager_vs_compiled(SHAPES[shape], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.5-2.6")
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_without_the_patch_dynamo_crashes(shape):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[shape], _make, (1, 2))
    assert isinstance(found, AssertionError), found


class SubDefault(collections.defaultdict):
    pass


def test_a_subclass_is_dynamos():
    def fn(x, d):
        return dict(SubDefault(list, d)), x + 1

    found = eager_vs_compiled(fn, _make, (1, 2))
    with without_patch(NAME):
        native = eager_vs_compiled(fn, _make, (1, 2))
    assert type(found) is type(native), (found, native)
