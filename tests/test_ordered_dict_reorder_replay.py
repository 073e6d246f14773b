"""ordered-dict-reorder-replay: ``od.move_to_end(k)`` on an OrderedDict passed in, compared with eager (2.7-2.15).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value and
the dict after the call (its items in order). Without the patch (reverted in-process) the caller's dict keeps
its old order after the call: ``test_without_the_patch_it_is_wrong`` asserts that it does.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "ordered-dict-reorder-replay"
_RELEASE = parse_torch_version(torch.__version__).release[:2]
OD = collections.OrderedDict


class Plain(OD):
    pass


class OwnSetItem(OD):
    """Up to 2.14 replayed as ``update``, which would run its own ``__setitem__`` (the patch leaves it to Dynamo);
    2.15 writes it back with ``OrderedDict``'s own methods. It doubles ``int`` values, so a replay through it
    shows."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2 if isinstance(value, int) else value)


class OwnUpdate(OD):
    """Its own ``update`` and ``clear`` count their calls: a replay through them shows in the counters."""

    calls = ()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        type(self).calls += ("update",)

    def clear(self):
        super().clear()
        type(self).calls += ("clear",)


class Key:
    """A key Dynamo does not hold as a constant (compared by identity)."""

    def __init__(self, n):
        self.n = n


def to_end(x, od):
    od.move_to_end("a")
    return x + 1, list(od)


def to_front(x, od):
    od.move_to_end("c", last=False)
    return x - 1


def through_the_class(x, od):
    OD.move_to_end(od, "b")
    return x * 2


def moved_and_written(x, od):
    od.move_to_end("a")
    od["b"] = od["b"] + 10
    od["z"] = 0
    return x + len(od)


def moved_back(x, od):
    """Moved and moved back: the order is as it was (the replay need not clear)."""
    od.move_to_end("a")
    od.move_to_end("a", last=False)
    return x + 2, list(od)


def popped_first(x, od):
    od.popitem(last=False)
    od["a"] = 9
    return x + 3


def nested(x, holder):
    """An OrderedDict reached from an input (attribute source)."""
    holder["od"].move_to_end("a")
    return x + 1


SHAPES = {f.__name__: f for f in (to_end, to_front, through_the_class, moved_and_written, moved_back, popped_first)}
CLASSES = (OD, Plain, OwnSetItem, OwnUpdate)


def _make(cls):
    def make(n):
        od = cls(a=1, b=2, c=3)
        if n % 2:
            od["d"] = n
            od.move_to_end("b", last=False)
        return torch.arange(3.0) * n, od

    return make


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_right_or_a_break(name, cls):
    """2.7-2.8: popitem(last=False) graph-breaks (move_to_end(k, last=False) crashed natively:
    ordered-dict-move-to-end); 2.15: a subclass with its own
    ``__setitem__``, which the patch leaves to Dynamo (its replay runs that ``__setitem__``): as without it."""
    assert_right_break_or_native(NAME, SHAPES[name], _make(cls), (1, 2, 3))


@pytest.mark.skipif(_RELEASE < (2, 9), reason="2.5-2.6: move_to_end graph-breaks; 2.7-2.8: popitem(last=False)")
@pytest.mark.parametrize("cls", (OD, Plain), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_compiles(name, cls):
    assert eager_vs_compiled(SHAPES[name], _make(cls), (1, 2, 3)) is None


def test_nested_right_or_a_break():
    found = eager_vs_compiled(nested, lambda n: (torch.arange(3.0) * n, {"od": OD(a=n, b=2, c=3)}), (1, 2))
    assert found is None or is_break(found), found


def test_non_constant_keys_right_or_a_break():
    keys = [Key(i) for i in range(3)]

    def move(x, od):
        od.move_to_end(keys[0])
        return x + 1

    found = eager_vs_compiled(move, lambda n: (torch.arange(3.0) * n, OD((k, n) for k in keys)), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.skipif(_RELEASE < (2, 15), reason="2.9-2.14 replay a subclass passed in right natively")
@pytest.mark.parametrize("cls", (OwnSetItem, OwnUpdate), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_own_methods_compile_on_2_15(name, cls):
    """2.15: a subclass with its own ``__setitem__``/``update``/``clear`` is written back past them (checked by
    the class's call counter and the doubled values), so the patch sets the full replay for it too."""
    cls.calls = ()
    assert eager_vs_compiled(SHAPES[name], _make(cls), (1, 2, 3)) is None
    assert cls.calls == (), cls.calls  # eager runs none of them in these shapes, and neither does the replay


@pytest.mark.skipif(_RELEASE < (2, 15), reason="2.9-2.14 replay a subclass passed in right natively")
@pytest.mark.parametrize("cls", (OwnSetItem, OwnUpdate), ids=lambda c: c.__name__)
def test_own_methods_without_the_patch_are_wrong_on_2_15(cls):
    with without_patch(NAME):
        found = eager_vs_compiled(to_end, _make(cls), (1, 2))
    assert isinstance(found, str), f"the caller's {cls.__name__} is reordered without the patch: {found!r}"


@pytest.mark.skipif(_RELEASE < (2, 7), reason="2.5-2.6: move_to_end graph-breaks natively")
def test_without_the_patch_it_is_wrong():
    with without_patch(NAME):
        found = eager_vs_compiled(to_end, _make(OD), (1, 2))
    assert isinstance(found, str), f"the caller's OrderedDict is reordered without the patch: {found!r}"
    assert eager_vs_compiled(to_end, _make(OD), (1, 2)) is None
