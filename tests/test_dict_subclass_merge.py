"""dict-subclass-merge: a dict subclass merged into a dict or an OrderedDict, compared with eager (every release).

Compiled with ``fullgraph=True`` and compared with eager on two calls with different inputs (the merged
result, its type, the argument after the call). In the patch's range every shape is right or a clean
graph break, or wrong exactly as without it (the paths the patch leaves to Dynamo); without the patch
(reverted in-process) two or three shapes per Dynamo era are silently wrong:
``test_without_the_patch_it_is_wrong`` asserts that it is, and that the patch makes it a graph break.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "dict-subclass-merge"
_RELEASE = parse_torch_version(torch.__version__)
OD = collections.OrderedDict


class Plain(dict):
    pass


class Keys(dict):
    def keys(self):
        return ["a"]


class Iter(dict):
    def __iter__(self):
        return iter(["a"])


class Get(dict):
    def __getitem__(self, key):
        return 42


class IterKeys(dict):
    def keys(self):
        return ["a"]

    def __iter__(self):
        return iter(["a"])


class Items(dict):
    def items(self):
        return [("a", 5)]


class ODKeys(OD):
    def keys(self):
        return ["a"]


class ODPlain(OD):
    pass


def _keys_a():
    return ["a"]


class InstanceKeys(dict):
    """An instance attribute ``keys``: CPython's OrderedDict merge calls it (``getattr(m, "keys")``)."""

    def __init__(self, **items):
        super().__init__(**items)
        self.keys = _keys_a


CLASSES = (InstanceKeys, Plain, Keys, Iter, Get, IterKeys, Items, ODKeys, ODPlain, collections.Counter)


def dict_of(x, m):
    out = dict(m)
    return type(out), list(out.items()), x + len(out)


def splat(x, m):
    out = {"z": 0, **m}
    out["w"] = x
    return list(out.items()), x * len(out)


def dict_update(x, m):
    d = {"z": x}
    d.update(m)
    return list(d.items()), len(d)


def dict_ior(x, m):
    d = {"z": 0}
    d |= m
    return list(d.items()), x + 1


def dict_or(x, m):
    out = {"z": 0} | m
    return type(out), list(out.items()), x - 1


def subclass_or(x, m):
    out = m | {"z": 0}
    return type(out), list(out.items()), x - 1


def counter_update(x, m):
    d = collections.defaultdict(int)
    d.update(m)
    d["c"] += 1
    return sorted(d.items()), x + d["c"]


def defaultdict_of(x, m):
    d = collections.defaultdict(int, m)
    return sorted(d.items()), x + len(d)


def ordered_of(x, m):
    out = OD(m)
    return list(out.items()), x + len(out)


def ordered_update(x, m):
    od = OD(z=0)
    od.update(m)
    od.move_to_end("z")
    return list(od.items()), x + 1


def ordered_ior(x, m):
    od = OD(z=0)
    od |= m
    return list(od.items()), x + 2


def subclass_or_ordered(x, m):
    out = m | OD(z=0)
    return type(out), list(out.items()), x + 3


SHAPES = {f.__name__: f for f in (dict_of, splat, dict_update, dict_ior, dict_or, subclass_or, counter_update,
                                  defaultdict_of, ordered_of, ordered_update, ordered_ior, subclass_or_ordered)}


def _make(cls):
    def make(n):
        return torch.arange(3.0) * n, cls(a=n, n=n + 10)

    return make


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_right_or_a_break(name, cls):
    """Right or a clean graph break; else wrong or crashing exactly as without tdcompat (the paths the
    module docstring leaves to Dynamo: 2.13's ``|`` of an OrderedDict subclass, 2.15's ``dd.update``/``|=``
    and ``items()`` reads; 2.8 and 2.11-2.12 crash on ``d | m``)."""
    assert_right_break_or_native(NAME, SHAPES[name], _make(cls))


def _era() -> str:
    release = _RELEASE.release[:2]
    if release < (2, 7):
        return "baked"
    if release < (2, 10):
        return "iterates"
    return "items" if release < (2, 13) else "keys" if release < (2, 15) else "2.15"


#: Shapes silently wrong without the patch, per way Dynamo reads the subclass (the module docstring).
_WRONG = {
    "baked": (("dict_of", Plain), ("splat", Plain)),  # 2.5-2.6: the first call's values
    "iterates": (("dict_of", Get), ("counter_update", Iter), ("ordered_update", Keys)),  # 2.7-2.9
    "items": (("dict_of", IterKeys), ("dict_of", Items), ("ordered_of", Keys)),  # 2.10-2.12
    "keys": (("splat", Keys), ("dict_update", Get)),  # 2.13-2.14: keys() where CPython reads the storage
    "2.15": (("ordered_of", Keys), ("ordered_update", Get)),  # the storage where OrderedDict calls keys()
}


@pytest.mark.parametrize("index", range(3))
def test_without_the_patch_it_is_wrong(index):
    cases = _WRONG[_era()]
    if index >= len(cases):
        pytest.skip("fewer shapes for this release")
    name, cls = cases[index]
    with without_patch(NAME), without_patch("defaultdict-construction"):
        native = eager_vs_compiled(SHAPES[name], _make(cls), (1, 2))
    if name == "counter_update" and is_break(native):
        # defaultdict(int) is a break without defaultdict-construction: the merge is wrong once it compiles
        with without_patch(NAME):
            native = eager_vs_compiled(SHAPES[name], _make(cls), (1, 2))
    assert isinstance(native, str), f"{name}({cls.__name__}) is not wrong without the patch: {native!r}"
    assert is_break(eager_vs_compiled(SHAPES[name], _make(cls), (1, 2)))


@pytest.mark.skipif(_RELEASE.release[:2] < (2, 7), reason="2.5-2.6 fold any dict subclass: every merge breaks")
@pytest.mark.parametrize("name", ("dict_of", "splat", "dict_update", "ordered_of", "ordered_update"))
def test_a_plain_subclass_still_compiles(name):
    """The refusal is narrow: a subclass that overrides nothing merges in the graph."""
    assert eager_vs_compiled(SHAPES[name], _make(Plain), (1, 2)) is None


class ODBuilt(OD):
    """Built in the frame (``or_in_frame``): an OrderedDict subclass that overrides nothing."""


class ODSetItem(OD):
    """Its own ``__setitem__``, which CPython's ``odict_or`` runs for every key: not accepted."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value * 10 if isinstance(value, int) else value)


def or_in_frame(x, n):
    o = ODBuilt(a=n)
    left, right = {"z": 0} | o, o | {"z": 1}
    right["q"] = len(left)
    return type(left), list(left.items()), type(right), list(right.items()), x + n


_SLOTS = _RELEASE.release[:2] >= (2, 13)


@pytest.mark.skipif(not _SLOTS, reason="2.13+: | goes through the number slots (2.5-2.12: the refusals above)")
@pytest.mark.parametrize("name", ("dict_or", "subclass_or", "subclass_or_ordered"))
def test_or_of_a_plain_ordered_dict_subclass_passed_in_is_its_type(name):
    """``{} | o``, ``o | {}``, ``o | od`` of an OrderedDict subclass that overrides nothing are a ``type(o)``
    (CPython's ``odict_or``); without the patch ``o | ...`` is an OrderedDict (2.13-2.14) or a dict (2.15)
    (``{} | o`` of an input is right natively: Dynamo's ``__ror__`` builds ``type(o)``). Dynamo's ``o | d``
    starts from ``o.copy()``, which ``dict-subclass-copy`` also makes a ``type(o)``: both are reverted."""
    assert eager_vs_compiled(SHAPES[name], _make(ODPlain), (1, 2)) is None
    if name != "dict_or":
        with without_patch(NAME), without_patch("dict-subclass-copy"):
            assert isinstance(eager_vs_compiled(SHAPES[name], _make(ODPlain), (1, 2)), str)


@pytest.mark.skipif(not _SLOTS, reason="2.13+: | goes through the number slots (2.5-2.12: the refusals above)")
def test_or_of_a_plain_ordered_dict_subclass_built_in_the_frame_is_its_type():
    def make(n):
        return torch.arange(3.0), n

    assert eager_vs_compiled(or_in_frame, make, (1, 2)) is None
    with without_patch(NAME), without_patch("dict-subclass-copy"):  # o | d starts from o.copy()
        assert isinstance(eager_vs_compiled(or_in_frame, make, (1, 2)), (str, Exception))


@pytest.mark.skipif(not _SLOTS, reason="2.13+: | goes through the number slots (2.5-2.12: the refusals above)")
@pytest.mark.parametrize("name", ("dict_or", "subclass_or"))
def test_or_of_an_ordered_dict_subclass_with_its_own_setitem_is_dynamos(name):
    """Not accepted (CPython runs its ``__setitem__``): what Dynamo does, with or without the patch."""
    found = eager_vs_compiled(SHAPES[name], _make(ODSetItem), (1, 2))
    with without_patch(NAME):
        native = eager_vs_compiled(SHAPES[name], _make(ODSetItem), (1, 2))
    assert type(found) is type(native) and (not isinstance(found, str) or found == native)
