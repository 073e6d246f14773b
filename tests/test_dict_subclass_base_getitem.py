"""dict-subclass-base-getitem: ``dict``'s own ``__getitem__`` reached from a subclass's ``__getitem__``
(``super().__getitem__(k)``, ``dict.__getitem__(self, k)``) calls ``__missing__`` for an absent key.

Dict and ``OrderedDict`` subclasses, passed in and (2.7+) built in the frame, whose ``__missing__`` answers or
stores: the absent key caught by the frame and not caught, a present key, the key added between calls (the
guard must recompile), a key written in the frame before the read, a two-level hierarchy where ``super()``
starts below the class that defines ``__missing__``. Left to Dynamo: a ``super()`` that finds another
class's ``__getitem__``, a class without ``__missing__``, a ``__missing__`` in the instance's ``__dict__``.
Compiled with ``fullgraph=True`` and compared with eager (return value and inputs after the call) on calls
with different inputs. Without the patch (reverted in-process) the caught shapes are wrong on 2.7-2.15:
asserted there.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-subclass-base-getitem"
RELEASE = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = RELEASE >= (2, 7)


class SuperAnswers(dict):
    def __missing__(self, key):
        return ("missing", key, len(self))

    def __getitem__(self, key):
        return super().__getitem__(key)


class SuperStores(collections.OrderedDict):
    def __missing__(self, key):
        self[key] = len(self) * 10
        return self[key]

    def __getitem__(self, key):
        return super().__getitem__(key)


class ExplicitAnswers(dict):
    def __missing__(self, key):
        return -len(self)

    def __getitem__(self, key):
        return dict.__getitem__(self, key)


class Middle(dict):
    def __missing__(self, key):
        return "middle-missing"


class Leaf(Middle):
    def __getitem__(self, key):
        return super().__getitem__(key)  # super(Leaf, self): Middle has no __getitem__, dict's is found


class OwnBase(dict):
    def __getitem__(self, key):
        return "own-base"


class SkipsToOwnBase(OwnBase):
    """``super()`` finds ``OwnBase.__getitem__``, not ``dict``'s: left to Dynamo."""

    def __missing__(self, key):
        return "never"

    def __getitem__(self, key):
        return super().__getitem__(key)


class NoMissing(dict):
    def __getitem__(self, key):
        return super().__getitem__(key)


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
    return x + 1, d["w"], d["z"], list(d.keys())


def twice(x, d):
    first = d["q"]
    return x + len(d), first, d["q"], sorted(d.keys())


SHAPES = {f.__name__: f for f in (caught, not_caught, written_then_read, twice)}
CLASSES = {c.__name__: c for c in (SuperAnswers, SuperStores, ExplicitAnswers, Leaf)}
LEFT_TO_DYNAMO = {c.__name__: c for c in (SkipsToOwnBase, NoMissing)}


def _make(cls):
    def make(n):
        d = cls(a=n, b=2)
        if n == 2:
            d["z"] = "present"  # the second call finds the key
        return torch.arange(3.0) * n, d

    return make


@pytest.mark.parametrize("cls", sorted(CLASSES))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_equals_eager(shape, cls):
    found = eager_vs_compiled(SHAPES[shape], _make(CLASSES[cls]), (1, 2, 3))
    if IN_RANGE:
        assert found is None, found
    else:  # 2.5-2.6 run super().__getitem__ on the real dict; dict.__getitem__(self, k), len(d) break
        assert found is None or isinstance(found, Unsupported), found


@pytest.mark.parametrize("cls", sorted(LEFT_TO_DYNAMO))
def test_other_getitem_is_left_to_dynamo(cls):
    """Dynamo's own answer, with or without the patch."""
    found = eager_vs_compiled(caught, _make(LEFT_TO_DYNAMO[cls]), (1, 2))
    with without_patch(NAME):
        native = eager_vs_compiled(caught, _make(LEFT_TO_DYNAMO[cls]), (1, 2))
    assert type(found) is type(native) and str(found)[:300] == str(native)[:300], (found, native)


def test_missing_in_the_instance_dict_is_left_to_dynamo():
    """CPython's ``dict.__getitem__`` looks ``__missing__`` up on the type only; the patch does not answer."""

    def make(n):
        d = SuperAnswers(a=n)
        d.__missing__ = lambda key: "instance"
        return torch.ones(2) * n, d

    found = eager_vs_compiled(caught, make, (1, 2))
    with without_patch(NAME):
        native = eager_vs_compiled(caught, make, (1, 2))
    assert type(found) is type(native), (found, native)


@pytest.mark.skipif(RELEASE < (2, 7), reason="2.5-2.6 cannot build a dict subclass in the frame")
def test_built_in_the_frame():
    def fn(x, n):
        d = SuperStores(a=n)
        e = ExplicitAnswers(b=n)
        try:
            v = e["z"]
        except KeyError:
            v = "KeyError"
        return x + d["q"], v, list(d.items())

    assert eager_vs_compiled(fn, lambda n: (torch.ones(2) * n, n), (1, 2)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.7")
@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_without_the_patch_it_is_wrong(cls):
    with without_patch(NAME):
        found = eager_vs_compiled(caught, _make(CLASSES[cls]), (1, 2))
    assert isinstance(found, str), found
