"""dict-truth-guard: ``not d`` / ``bool(d)`` of a dict passed in guard its keys (torch 2.7+).

Compiled with ``fullgraph=True``, called with an empty, a non-empty and an empty input again, compared with
eager (return value and the dict afterwards). Without the patch (reverted in-process) the second call
reuses the first call's answer on 2.7-2.15 (asserted); 2.5-2.6 are right natively.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import without_patch

NAME = "dict-truth-guard"
TORCH = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = TORCH >= (2, 7)


def not_dict(x, d):
    return x + 1, not d


def bool_dict(x, d):
    return x - 1, bool(d)


def not_keys(x, d):
    return x * 2, not d.keys(), len(d)


def not_after_write(x, d):
    empty = not d
    d["w"] = 1
    return x + 1, empty, not d, sorted(d)


def jumps(x, d):
    out = [1 for _ in range(2) if d]
    count = 0
    while d and count < 2:
        count += 1
    return x + len(out), count, type(d or "empty").__name__, (1 if d else 0)


SHAPES = {f.__name__: f for f in (not_dict, bool_dict, not_keys, not_after_write, jumps)}
KINDS = {"dict": dict, "OrderedDict": collections.OrderedDict,
         "defaultdict": lambda items: collections.defaultdict(int, items)}


def _run(fn, kind):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    expected, got = [], []
    for n in (0, 3, 0):
        items = {} if n == 0 else {"a": n, "b": 2}
        x = torch.arange(3.0) + n
        d = KINDS[kind](items)
        expected.append((repr(fn(x, d)), repr(d)))
        d = KINDS[kind](items)
        try:
            got.append((repr(compiled(x, d)), repr(d)))
        except Unsupported as exc:  # bool(defaultdict) is not traced on 2.5-2.12: a clean break
            return expected, exc
    return expected, got


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_truth_equals_eager(shape, kind):
    expected, got = _run(SHAPES[shape], kind)
    assert got == expected or isinstance(got, Unsupported), got


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.7+")
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("shape", ["not_dict", "bool_dict"])
def test_without_the_patch_it_is_wrong(shape, kind):
    """``not d`` / ``bool(d)``: silently wrong on 2.7-2.15 without the patch."""
    if shape == "bool_dict" and kind == "defaultdict" and TORCH < (2, 13):
        pytest.skip("not this patch's: bool(defaultdict) breaks on 2.5-2.12")
    with without_patch(NAME):
        expected, got = _run(SHAPES[shape], kind)
    assert not isinstance(got, Exception) and got != expected, got


@pytest.mark.skipif(TORCH not in ((2, 13), (2, 14)), reason="2.13-2.14's jumps read the truth unguarded")
@pytest.mark.parametrize("kind", ["OrderedDict", "defaultdict"])
def test_without_the_patch_jumps_are_wrong_on_2_13_2_14(kind):
    if kind == "OrderedDict" and TORCH == (2, 14):
        pytest.skip("2.14 guards an OrderedDict's truth in a jump")
    with without_patch(NAME):
        expected, got = _run(jumps, kind)
    assert not isinstance(got, Exception) and got != expected, got
