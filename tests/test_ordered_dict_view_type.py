"""ordered-dict-view-type: the type of an ``OrderedDict``'s keys/values/items view, against eager (every release).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value and
every input after the call. Without the patch (reverted in-process) ``type(od.keys())`` is ``dict_keys`` on every
release: ``test_without_the_patch_it_fails`` asserts it. Operations on the views must not change with the type
(``test_view_operations_unchanged``: right, or what Dynamo gives without the patch).
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, without_patch

NAME = "ordered-dict-view-type"
RELEASE = parse_torch_version(torch.__version__).base_version
ODICT_KEYS = type(collections.OrderedDict().keys())


class MyOD(collections.OrderedDict):
    """A subclass: its views are ``odict_*`` too."""


class MyDict(dict):
    """A dict subclass: its views are plain ``dict_*``."""


def input_views(x, od):
    """Views of an ``OrderedDict`` passed in: names, ``isinstance`` with the odict and the plain view types."""
    k, v = od.keys(), od.values()
    return (x + len(od), type(k).__name__, type(v).__name__, isinstance(k, ODICT_KEYS),
            isinstance(k, type({}.keys())), type(k) is ODICT_KEYS)


def frame_views(x, od):
    """Views of an ``OrderedDict`` made in the frame."""
    e = collections.OrderedDict(od)
    return x * 2, type(e.keys()).__name__, type(e.values()).__name__, list(e)


def subclass_views(x, od):
    """Views of an ``OrderedDict`` subclass passed in and made in the frame (some releases model the latter as
    an object over a plain dict tracker, whose views cannot tell: left to Dynamo)."""
    m = MyOD(a=1)
    return x + 3, type(MyOD(od).keys()).__name__, type(m.values()).__name__


def items_view_type(x, od):
    """The items view (2.8+ Dynamo's tracker; 2.5-2.7 dict-items-view's, right already)."""
    return x + 1, type(od.items()).__name__, isinstance(od.items(), type(collections.OrderedDict().items()))


def plain_views_stay_plain(x, od):
    """A dict's, a ``defaultdict``'s and a dict subclass's views stay ``dict_*`` (deferred to Dynamo)."""
    d = dict(od)
    dd = collections.defaultdict(int, od)
    s = MyDict(od)
    return x - 1, type(d.keys()).__name__, type(dd.values()).__name__, type(s.keys()).__name__


SHAPES = {f.__name__: f for f in (input_views, frame_views, items_view_type)}
#: Where each shape is wrong without the patch.
FAILS_WITHOUT = {"input_views": ">=2.5", "frame_views": ">=2.5", "items_view_type": ">=2.8"}


def _make(n):
    return torch.arange(3.0) * n, collections.OrderedDict([("a", 1), (f"k{n}", 2)])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2)) is None


@pytest.mark.parametrize("name", sorted(FAILS_WITHOUT))
def test_without_the_patch_it_fails(name):
    if RELEASE not in SpecifierSet(FAILS_WITHOUT[name]):
        pytest.skip(f"{name} is right without the patch on {RELEASE}")
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert found is not None, "without the patch the view's type differs from eager"


def view_operations(x, od):
    """What code does with an odict view after asking its type: set operators, comparisons, ``reversed``,
    ``in``, ``len``, iteration."""
    k = od.keys()
    return (x + len(k), sorted(k & {"a", "z"}), sorted(k | {"z"}), k == {"a", "k1"}, list(reversed(k)),
            "a" in k, list(od.values()), [p for p in od.items()])


def view_operations_items(x, od):
    """The items view's set operators and comparisons (2.8+)."""
    i = od.items()
    return x + 1, sorted(i & {("a", 1)}), i == {("a", 1), ("k1", 2)}, list(reversed(list(i)))


@pytest.mark.parametrize("fn", [view_operations, view_operations_items, plain_views_stay_plain, subclass_views],
                         ids=lambda f: f.__name__)
def test_view_operations_unchanged(fn):
    """Never worse: the view operations (and the views it leaves to Dynamo) compile right or break as without
    the patch."""
    assert_right_break_or_native(NAME, fn, _make, (1, 2))
