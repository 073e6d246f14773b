"""defaultdict-construction: ``collections.defaultdict(...)`` built in the frame (torch 2.8-2.9).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
(the defaultdict itself included: its type, items, order and factory) and the inputs after the call.
Without the patch (reverted in-process) the keyword shape is wrong and the no-argument shape crashes on
2.8-2.9.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, without_patch

NAME = "defaultdict-construction"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = (2, 8) <= TORCH < (2, 10)
#: The patch's range (``<2.10``): there the shapes below must come out right, so the tests go red when the
#: patch is off (TDCOMPAT_DISABLE) rather than skipping.
IN_RANGE = TORCH < (2, 10)
#: 2.5-2.7 return a defaultdict made in the frame as a plain dict (natively): without defaultdict-reconstruct
#: (which gives them DefaultDictVariable.reconstruct) the patch builds only the keyword shape there, whose
#: native result is already wrong (empty); with it, every shape (decided when the test runs: a patch may be off).


def _keywords_only():
    return TORCH < (2, 8) and not applied("defaultdict-reconstruct")


def _factory():
    return [0]


def no_argument(x, n):
    d = collections.defaultdict()
    try:
        d[n] += 1
    except KeyError:
        d[n] = x + 1
    return d, len(d)


def none_factory(x, n):
    d = collections.defaultdict(None, a=x)
    try:
        d["missing"]
    except KeyError:
        d["k"] = n
    return d, d.get("z", n)


def keywords(x, n):
    d = collections.defaultdict(list, a=x, b=n)
    d["c"].append(n)
    return d


def keywords_read_in_the_frame(x, n):
    d = collections.defaultdict(list, a=x, b=n)
    d["c"].append(n)
    return sorted(d), d["a"] + 1, len(d)


def mapping_and_keywords(x, n):
    d = collections.defaultdict(list, {"a": x, "n": n}, z=0)
    d["new"].append(1)
    return d, list(d)


def pairs(x, n):
    d = collections.defaultdict(list, [("a", n), ("b", n + 1)])
    d["c"].append(2)
    return d, x * d["a"]


def int_factory(x, n):
    d = collections.defaultdict(int, a=n)
    d["c"] += 2
    return d


def counter(x, n):
    """The counter idiom: ``defaultdict(int)``, counted, a missing key read, returned."""
    d = collections.defaultdict(int)
    for k in ("a", "b", "a")[: n + 1]:
        d[k] += 1
    return d, x + d["a"], d["missing"], "missing" in d, len(d)


def constant_factories(x, n):
    """Each builtin type whose ``f()`` Dynamo folds, with a mapping, pairs or keywords, non-empty (a missing
    key of a non-empty defaultdict must still call the factory, not fold ``d[k]`` as a plain dict's)."""
    out = []
    for factory, rest, kw in ((float, ({"z": 2.5},), {}), (str, (), {"s": "t"}), (bool, ([("p", n)],), {}),
                              (int, (), {"k": n})):
        d = collections.defaultdict(factory, *rest, **kw)
        d["a"] += factory(1)
        out.append((d["missing"], sorted(d, key=str), d))
    return out, x * n


def object_factory(x, n):
    d = collections.defaultdict(object, a=n)  # a factory Dynamo does not support: deferred (its graph break)
    return len(d), x + 1


def bytes_factory(x, n):
    d = collections.defaultdict(bytes, a=b"q")  # bytes() is not folded by Dynamo before 2.11: deferred
    d["a"] += b"r"
    return d, x + n


def user_factory(x, n):
    d = collections.defaultdict(_factory, q=n)
    d["r"].append(x)
    return d


def factory_only(x, n):
    d = collections.defaultdict(list)  # Dynamo's own path (right): deferred
    d[n].append(x)
    return d


SHAPES = {f.__name__: f for f in (no_argument, none_factory, keywords, keywords_read_in_the_frame,
                                   mapping_and_keywords, pairs, user_factory, factory_only, int_factory, counter,
                                   constant_factories)}
#: Builtin-type factories (``int``...): a graph break natively on 2.5-2.9 (``is_supported_arg``: list, tuple,
#: dict, set only), built with the patch; on 2.5-2.7 only with defaultdict-reconstruct.
CONSTANT_FACTORY = ("int_factory", "counter", "constant_factories")
#: Deferred to Dynamo: the patch leaves its outcome as it is.
DEFERRED = {"object_factory": object_factory, "bytes_factory": bytes_factory}


def _make(n):
    torch.manual_seed(n)
    return torch.randn(3), n


def _run(fn):
    return eager_vs_compiled(fn, _make, (1, 2))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_equals_eager_or_breaks(shape):
    found = _run(SHAPES[shape])
    if not IN_RANGE:
        assert found is None, found  # 2.10+: Dynamo's own, right
        return
    if not _keywords_only() or shape == "keywords_read_in_the_frame":
        if shape == "mapping_and_keywords" and TORCH < (2, 7) and isinstance(found, Unsupported):
            return  # 2.5-2.6: dict() takes a mapping or keywords, not both: Dynamo's clean break
        assert found is None, found
        return
    if shape in CONSTANT_FACTORY:  # without defaultdict-reconstruct: deferred, Dynamo's own break
        assert isinstance(found, Unsupported), found
        return
    if shape == "no_argument":  # Dynamo's IndexError there: a clean graph break with the patch
        assert isinstance(found, Unsupported) and "IndexError" not in str(found), found
        return
    with without_patch(NAME):
        native = _run(SHAPES[shape])
    if shape in ("keywords", "user_factory") and isinstance(native, str):
        # returned: a plain dict (native), now with its items; natively an empty plain dict: wrong either way
        assert found is None or isinstance(found, str), (native, found)
    else:
        assert found is None or type(found) is type(native), (found, native)  # right, or deferred


@pytest.mark.skipif(not NEEDED, reason="the patch applies on 2.8-2.9")
def test_without_the_patch_keywords_are_dropped_and_no_argument_crashes():
    with without_patch(NAME):
        dropped = _run(keywords)
        crashed = _run(no_argument)
    assert isinstance(dropped, str), dropped
    assert isinstance(crashed, Exception) and "IndexError" in str(crashed), crashed


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.10")
@pytest.mark.parametrize("shape", CONSTANT_FACTORY)
def test_without_the_patch_a_builtin_type_factory_breaks(shape):
    with without_patch(NAME):
        native = _run(SHAPES[shape])
    assert isinstance(native, Unsupported), native


@pytest.mark.parametrize("shape", sorted(DEFERRED))
def test_unsupported_factory_is_dynamos(shape):
    found = _run(DEFERRED[shape])
    with without_patch(NAME):
        native = _run(DEFERRED[shape])
    assert type(found) is type(native), (found, native)


class SubDefault(collections.defaultdict):
    pass


def test_a_subclass_is_dynamos():
    def fn(x, n):
        d = SubDefault(list, a=n)
        return dict(d), x + 1

    found = _run(fn)
    with without_patch(NAME):
        native = _run(fn)
    assert type(found) is type(native), (found, native)
