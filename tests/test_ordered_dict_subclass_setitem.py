"""ordered-dict-subclass-setitem: an OrderedDict subclass with its own ``__setitem__`` filled from a mapping,
compared with eager (2.5-2.15).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs (what the subclass
stored, the inputs after the call). With the patch every shape is right or a clean graph break, and the shapes
that never fill from a mapping still compile; without it (reverted in-process) ``S(d)`` stores the items past
``S.__setitem__`` on every release: ``test_without_the_patch_it_is_wrong`` asserts that it does.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "ordered-dict-subclass-setitem"
OD = collections.OrderedDict


class Doubling(OD):
    """Stores ints doubled: CPython's OrderedDict fills through it."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2 if type(value) is int else value)


class DoublingInit(Doubling):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


class Recording(OD):
    """Records every key it is given (a side effect on a module-level list)."""

    seen: list = []

    def __setitem__(self, key, value):
        Recording.seen.append(key)
        super().__setitem__(key, value)


class Plain(OD):
    pass


def built(x, d):
    o = CLS[0](d)
    return x + 1, list(o.items())


def built_kwargs(x, d):
    o = CLS[0](**d)
    return x + 2, list(o.items())


def updated(x, d):
    o = CLS[0]()
    o.update(d)
    o["z"] = len(d)
    return x - 1, list(o.items())


def set_default(x, d):
    o = CLS[0]()
    o.setdefault("q", len(d))
    return x * 2, list(o.items())


def or_assign(x, d):
    o = CLS[0]()
    o |= d
    return x + 3, list(o.items())


def or_left(x, d):
    o = CLS[0]()
    o["k"] = 1
    return x + 4, list((o | d).items())


def or_right(x, d):
    o = CLS[0]()
    o["k"] = 1
    return x + 5, list((d | o).items())


def from_keys(x, d):
    return x - 2, list(CLS[0].fromkeys(d, 3).items())


def stored_one_by_one(x, d):
    """Never fills from a mapping: compiles (the class's __setitem__ is inlined)."""
    o = CLS[0]()
    for k in d:
        o[k] = d[k]
    return x + 6, list(o.items())


def input_updated(x, o):
    o.update(w=int(len(o)))
    return x + 7


CLS = [Doubling]
SHAPES = {f.__name__: f for f in (built, built_kwargs, updated, set_default, or_assign, or_left, or_right,
                                  from_keys, stored_one_by_one)}


def _make(n):
    return torch.arange(3.0) * n, {"a": n, "b": n + 1}


@pytest.fixture
def cls(request):
    CLS[0] = request.param
    Recording.seen.clear()
    yield request.param
    CLS[0] = Doubling


@pytest.mark.parametrize("cls", (Doubling, DoublingInit, Recording, Plain), indirect=True,
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_right_or_a_break(name, cls):
    assert_right_break_or_native(NAME, SHAPES[name], _make, (1, 2))


@pytest.mark.parametrize("cls", (Doubling, DoublingInit), indirect=True, ids=lambda c: c.__name__)
def test_an_input_updated_is_right_or_a_break(cls):
    found = eager_vs_compiled(input_updated, lambda n: (torch.arange(3.0) * n, cls(a=n)), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("cls", (Doubling,), indirect=True, ids=lambda c: c.__name__)
def test_storing_one_by_one_compiles(cls):
    assert eager_vs_compiled(stored_one_by_one, _make, (1, 2)) is None


@pytest.mark.parametrize("cls", (Plain,), indirect=True, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", ("built", "built_kwargs", "updated", "set_default"))
def test_a_plain_subclass_still_compiles(name, cls):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2)) is None


@pytest.mark.parametrize("cls", (Doubling,), indirect=True, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", ("built", "built_kwargs", "updated"))
def test_without_the_patch_it_is_wrong(name, cls):
    """Every release: the items are stored past ``Doubling.__setitem__`` (the patch: a graph break)."""
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert isinstance(found, str), f"right without the patch: {found!r}"
    assert is_break(eager_vs_compiled(SHAPES[name], _make, (1, 2)))


class OwnUpdate(Doubling):
    """Its own ``update`` (as Hugging Face's ``ModelOutput`` forbids one): inlined, not refused."""

    def update(self, *args, **kwargs):
        raise RuntimeError("no update")


def guarded_update(x, o):
    try:
        o.update(a=1)
    except RuntimeError:
        return x + 1, "refused"
    return x, "updated"


def test_a_class_with_its_own_update_is_inlined():
    assert eager_vs_compiled(guarded_update, lambda n: (torch.arange(3.0) * n, OwnUpdate()), (1, 2)) is None


class _Meta(type):
    pass


class MetaDoubling(Doubling, metaclass=_Meta):
    """Another metaclass than ``type``: the class-call gate still sees an ``OrderedDict`` subclass."""


@pytest.mark.parametrize("cls", (MetaDoubling,), indirect=True, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", ("built", "built_kwargs"))
def test_a_class_with_a_metaclass_is_right_or_a_break(name, cls):
    found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert found is None or is_break(found), found
