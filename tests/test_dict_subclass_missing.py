"""dict-subclass-missing: ``__missing__`` is called by ``d[k]`` and never by ``d.get(k)`` (torch 2.6-2.8).

Dict and ``OrderedDict`` subclasses with a ``__missing__`` that answers or stores, passed in (2.7-2.8 also built
in the frame): ``get`` with and without a default, ``d[k]`` of an absent key caught by the frame and not caught,
of a present key, the key added between calls (the presence guard must recompile), a key written in the frame
before the read; a subclass whose ``__getitem__`` or ``get`` is its own is left to Dynamo. Compiled with
``fullgraph=True`` and compared with eager (return value and inputs after the call) on calls with different
inputs. Without the patch (reverted in-process) the shapes are wrong on 2.6 (``get``) and 2.7-2.8 (``d[k]``
caught): asserted there.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-subclass-missing"
RELEASE = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = (2, 6) <= RELEASE < (2, 9)


class Answers(dict):
    def __missing__(self, key):
        return ("missing", key, len(self))


class Stores(collections.OrderedDict):
    def __missing__(self, key):
        self[key] = len(self) * 10
        return self[key]


class OwnGetitem(dict):
    def __missing__(self, key):
        return "own-missing"

    def __getitem__(self, key):
        return super().__getitem__(key)


def get_absent(x, d):
    return x + 1, d.get("z"), d.get("z", 7), d.get("a"), d.get("a", 0)


def caught(x, d):
    try:
        v = d["z"]
    except KeyError:
        v = "KeyError"
    return x + 1, v, d["a"]


def not_caught(x, d):
    return x + 1, d["z"], d["a"]


def written_then_read(x, d):
    d["w"] = 4
    return x + 1, d["w"], d.get("w"), d["z"], list(d.keys())


def get_then_getitem(x, d):
    a = d.get("q", "default")
    b = d["q"]
    return x + 1, a, b, d.get("q", "default"), len(list(d.items()))


SHAPES = {f.__name__: f for f in (get_absent, caught, not_caught, written_then_read, get_then_getitem)}
CLASSES = {"Answers": Answers, "Stores": Stores}
# 2.6 takes only `get` of a subclass (its `d[k]` and other methods: Dynamo's own answers or breaks)
GET_SHAPES = ("get_absent",)


def _make(cls):
    def make(n):
        d = cls(a=n, b=2)
        if n == 2:
            d["z"] = "present"  # the second call finds the key
        return torch.arange(3.0) * n, d

    return make


@pytest.mark.parametrize("cls", sorted(CLASSES))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_equals_eager_or_breaks(shape, cls):
    found = eager_vs_compiled(SHAPES[shape], _make(CLASSES[cls]), (1, 2, 3))
    if IN_RANGE and (RELEASE >= (2, 7) or shape in GET_SHAPES):
        assert found is None, found
    else:
        assert found is None or isinstance(found, Unsupported), found


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_own_getitem_is_left_to_dynamo(shape):
    """A class with its own ``__getitem__`` (``super().__getitem__``): not this patch's, with or without it.
    (Natively wrong for an absent key on 2.7-2.15, ``super().__getitem__`` does not reach ``__missing__``:
    dict-subclass-base-getitem's; 2.6's ``get`` calls it.)"""
    found = eager_vs_compiled(SHAPES[shape], _make(OwnGetitem), (1, 2))
    with without_patch(NAME):
        native = eager_vs_compiled(SHAPES[shape], _make(OwnGetitem), (1, 2))
    assert type(found) is type(native) and str(found)[:300] == str(native)[:300], (found, native)


@pytest.mark.skipif(RELEASE < (2, 7), reason="2.5-2.6 cannot build a dict subclass in the frame")
def test_built_in_the_frame():
    def fn(x, n):
        d = Stores(a=n)
        e = Answers(b=n)
        try:
            v = e["z"]
        except KeyError:
            v = "KeyError"
        return x + d["q"], v, list(d.items()), e.get("z", 0)

    found = eager_vs_compiled(fn, lambda n: (torch.ones(2) * n, n), (1, 2))
    assert found is None or (not IN_RANGE and isinstance(found, Unsupported)), found


@pytest.mark.skipif(not IN_RANGE, reason="outside 2.6-2.8 Dynamo's own get answers it: natively None on "
                    "2.5-2.14 for a plain dict (2.8-2.14 for a subclass), CPython's TypeError (not this patch's)")
def test_get_with_a_keyword_default_is_not_answered():
    """CPython: ``dict.get`` takes no keyword arguments (TypeError). Compiled: the same error or a graph break,
    never the default."""

    def fn(x, d):
        return x + 1, d.get("z", default=3)

    x, d = _make(Answers)(1)
    with pytest.raises(TypeError):
        fn(x, d)
    torch._dynamo.reset()
    with pytest.raises((TypeError, Unsupported)):
        torch.compile(fn, backend="eager", fullgraph=True)(x, d)


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.6-2.8")
def test_without_the_patch_it_is_wrong():
    shape = "get_absent" if RELEASE == (2, 6) else "caught"
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[shape], _make(Answers), (1, 2))
    assert isinstance(found, str), found
