"""dict-subclass-copy: ``o.copy()`` of a dict, OrderedDict or defaultdict subclass, compared with eager (2.5-2.15).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs (the copy's type and
items, written and read back in the frame, and the original after the call). With the patch every shape is
right or a clean graph break; a plain ``OrderedDict`` subclass compiles and equals eager on 2.7+. Without the
patch (reverted in-process) the copy of an ``OrderedDict`` subclass is silently a plain ``OrderedDict``/``dict``
on 2.7-2.15: ``test_without_the_patch_it_is_wrong`` asserts that it is.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, is_break, without_patch

NAME = "dict-subclass-copy"
_RELEASE = parse_torch_version(torch.__version__).release[:2]
OD = collections.OrderedDict


class Plain(OD):
    pass


class Tagged(OD):
    """A plain subclass with a class attribute (not one ``odict_copy`` runs)."""

    tag = "t"


class Init(OD):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.made = True


class SetItem(OD):
    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2 if isinstance(value, int) else value)


class GetItem(OD):
    def __getitem__(self, key):
        return 7


class Meta(type):
    pass


class WithMeta(OD, metaclass=Meta):
    pass


class DictPlain(dict):
    pass


class DictKeys(dict):
    def keys(self):
        return ["a"]


class DefaultPlain(collections.defaultdict):
    pass


class OwnCopy(OD):
    def copy(self):
        return OD(self, own=1)


def _fill(cls, n):
    o = cls(int) if issubclass(cls, collections.defaultdict) else cls()
    o["a"] = n
    o["b"] = n + 1
    return o


def copy_input(x, o):
    """Passed in: the copy written and read back, the original written after the copy."""
    c = o.copy()
    c["z"] = len(o)
    o["w"] = 5
    return x + len(c), type(c).__name__, list(c.items()), "w" in c


def copy_returned(x, o):
    """The copy of an input returned from the frame (Dynamo reconstructs it)."""
    return x + 1, o.copy()


def copy_moved(x, o):
    """The copy keeps the order the frame gave the original (``move_to_end`` first)."""
    o.move_to_end("a")
    c = o.copy()
    return x - 1, type(c).__name__, list(c)


def copy_of_copy(x, o):
    c = o.copy().copy()
    c["q"] = 1
    return x * 2, type(c).__name__, list(c.items())


def _built(cls):
    def copy_built(x, n):
        """Built in the frame, copied, both written after."""
        o = _fill(cls, n)
        c = o.copy()
        c["z"] = 3
        o["y"] = 4
        return x + n, type(c).__name__, list(c.items()), list(o.items())

    return copy_built


def _built_returned(cls):
    def copy_built_returned(x, n):
        """Built in the frame, copied, the copy written and returned itself (Dynamo writes it back)."""
        o = _fill(cls, n)
        c = o.copy()
        c["z"] = n
        return x + n, c, o

    return copy_built_returned


INPUT_SHAPES = {f.__name__: f for f in (copy_input, copy_returned, copy_moved, copy_of_copy)}
CLASSES = (Plain, Tagged, Init, SetItem, GetItem, WithMeta, DictPlain, DictKeys, DefaultPlain, OwnCopy)


def _inputs(cls):
    return lambda n: (torch.arange(3.0) * n, _fill(cls, n))


def _applicable(name, cls) -> bool:
    return name != "copy_moved" or issubclass(cls, OD)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(INPUT_SHAPES))
def test_input_right_or_a_break(name, cls):
    if not _applicable(name, cls):
        pytest.skip("move_to_end is OrderedDict's")
    found = eager_vs_compiled(INPUT_SHAPES[name], _inputs(cls), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_built_in_the_frame_right_or_a_break(cls):
    found = eager_vs_compiled(_built(cls), lambda n: (torch.arange(3.0) * n, n), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_built_in_the_frame_and_returned_right_or_a_break(cls):
    found = eager_vs_compiled(_built_returned(cls), lambda n: (torch.arange(3.0) * n, n), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("cls", (Plain, Tagged), ids=lambda c: c.__name__)
def test_a_plain_ordered_dict_subclass_built_and_returned_compiles(cls):
    assert eager_vs_compiled(_built_returned(cls), lambda n: (torch.arange(3.0) * n, n), (1, 2)) is None


@pytest.mark.skipif(not (2, 9) <= _RELEASE < (2, 12), reason="2.9-2.11 write the copy back as a dict")
def test_without_the_patch_a_copy_built_in_the_frame_comes_back_a_dict():
    with without_patch(NAME):
        found = eager_vs_compiled(_built_returned(Plain), lambda n: (torch.arange(3.0) * n, n), (1, 2))
    assert isinstance(found, str), f"right without the patch: {found!r}"


@pytest.mark.skipif(_RELEASE < (2, 7), reason="2.5-2.6: an OrderedDict subclass passed in breaks on copy natively")
@pytest.mark.parametrize("cls", (Plain, Tagged), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(INPUT_SHAPES))
def test_a_plain_ordered_dict_subclass_compiles(name, cls):
    assert eager_vs_compiled(INPUT_SHAPES[name], _inputs(cls), (1, 2)) is None


@pytest.mark.parametrize("cls", (Plain, DictPlain), ids=lambda c: c.__name__)
def test_a_plain_subclass_built_in_the_frame_compiles(cls):
    if cls is DictPlain and _RELEASE < (2, 7):
        pytest.skip("2.5-2.6: a dict subclass built in the frame breaks natively")
    assert eager_vs_compiled(_built(cls), lambda n: (torch.arange(3.0) * n, n), (1, 2)) is None


@pytest.mark.skipif(_RELEASE < (2, 7), reason="2.5-2.6: an OrderedDict subclass passed in breaks on copy natively")
@pytest.mark.parametrize("name", sorted(INPUT_SHAPES))
def test_without_the_patch_it_is_wrong(name):
    with without_patch(NAME):
        found = eager_vs_compiled(INPUT_SHAPES[name], _inputs(Plain), (1, 2))
    assert isinstance(found, str), f"the copy of an OrderedDict subclass is right without the patch: {found!r}"


def test_without_the_patch_a_setitem_subclass_built_in_the_frame_is_wrong():
    """Every release: Dynamo's copy skips the class's own ``__setitem__`` (the patch: a graph break)."""
    with without_patch(NAME):
        found = eager_vs_compiled(_built(SetItem), lambda n: (torch.arange(3.0) * n, n), (1, 2))
    assert isinstance(found, str), f"right without the patch: {found!r}"
    assert is_break(eager_vs_compiled(_built(SetItem), lambda n: (torch.arange(3.0) * n, n), (1, 2)))
