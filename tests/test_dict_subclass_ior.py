"""dict-subclass-ior: ``o |= m`` on a dict or OrderedDict subclass keeps ``o`` the object it was (2.9-2.14).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
and every input after the call. Each shape keeps an alias from before the ``|=``, writes through ``o``
afterwards and reads both back. Without the patch (reverted in-process) the plain shapes are wrong on
2.9-2.14: ``test_without_the_patch_it_is_wrong`` asserts that they are.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, is_break, without_patch

NAME = "dict-subclass-ior"
_RELEASE = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = (2, 9) <= _RELEASE < (2, 15)


class Sub(dict):
    pass


class SubOD(collections.OrderedDict):
    pass


class OwnIor(dict):
    def __ior__(self, other):
        self["own"] = len(other)
        return self


class SetItemOD(collections.OrderedDict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2 if isinstance(value, int) else value)


class DefaultSub(collections.defaultdict):
    pass


def input_ior(x, o):
    """Passed in: the alias and the caller's object see the merge and the write after it."""
    alias = o
    o |= {"z": len(o)}
    o["q"] = 1
    return x + len(o), alias is o, type(o).__name__, list(alias.items())


def built_ior(x, o):
    """Built in the frame from the input, merged, written, returned with its alias."""
    b = type(o)()
    b["a"] = len(o)
    alias = b
    b |= {"z": 3}
    b["w"] = 2
    return x * 2, b, alias is b, type(b).__name__


def ior_pairs(x, o):
    alias = o
    o |= [("p", 1), ("z", 2)]
    return x - 1, alias is o, sorted(alias)


def ior_twice(x, o):
    alias = o
    o |= {"a": 5}
    o |= {"b": 6}
    return x + 1, alias is o, list(o.items())


SHAPES = {f.__name__: f for f in (input_ior, built_ior, ior_pairs, ior_twice)}
CLASSES = (Sub, SubOD, OwnIor, SetItemOD)


def _inputs(cls):
    return lambda n: (torch.arange(3.0) * n, cls({"a": n, "b": 2}))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_right_or_a_break(name, cls):
    found = eager_vs_compiled(SHAPES[name], _inputs(cls), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_defaultdict_subclass_right_or_a_break(name):
    def make(n):
        return torch.arange(3.0) * n, DefaultSub(int, {"a": n, "b": 2})

    found = eager_vs_compiled(SHAPES[name], make, (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.9-2.14")
@pytest.mark.parametrize("cls", (Sub, SubOD), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", ("input_ior", "built_ior", "ior_twice"))
def test_a_plain_subclass_compiles(name, cls):
    assert eager_vs_compiled(SHAPES[name], _inputs(cls), (1, 2)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.9-2.14")
@pytest.mark.parametrize("cls", (Sub, SubOD), ids=lambda c: c.__name__)
def test_without_the_patch_it_is_wrong(cls):
    if cls is SubOD and _RELEASE == (2, 13):
        pytest.skip("2.13 answers an OrderedDict subclass passed in right")
    with without_patch(NAME):
        found = eager_vs_compiled(input_ior, _inputs(cls), (1, 2))
    assert isinstance(found, str), f"right without the patch: {found!r}"
