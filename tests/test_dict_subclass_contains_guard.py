"""dict-subclass-contains-guard: ``k in d`` of a dict subclass passed in is guarded on ``k``'s presence (2.5-2.6).

Dict and ``OrderedDict`` subclasses passed in, empty on one call and holding the key on the next (and back),
with ``in`` and ``not in`` in a branch and in the result, a key that stays, and an object whose ``__contains__``
is its own (left to Dynamo). Compiled with ``fullgraph=True`` and compared with eager (return value and inputs
after the call) on calls with different inputs. Without the patch (reverted in-process) the shapes are wrong on
2.5-2.6: asserted there.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-subclass-contains-guard"
RELEASE = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = RELEASE < (2, 7)


class Sub(dict):
    pass


class ODSub(collections.OrderedDict):
    pass


class OwnContains(dict):
    def __contains__(self, key):
        return key == "c" or dict.__contains__(self, key)


def branch(x, d):
    if "c" in d:
        x = x * 3
    return x + 1


def negated(x, d):
    return x + (1 if "c" not in d else 2), "a" not in d


def both(x, d):
    return x + 1, "c" in d, "a" in d, "zz" in d


SHAPES = {f.__name__: f for f in (branch, negated, both)}
CLASSES = {"Sub": Sub, "ODSub": ODSub}


def _alternating(cls):
    def make(n):
        d = cls(a=n, c=2) if n % 2 else cls()
        return torch.arange(3.0) * n, d

    return make


@pytest.mark.parametrize("cls", sorted(CLASSES))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_equals_eager(shape, cls):
    assert eager_vs_compiled(SHAPES[shape], _alternating(CLASSES[cls]), (2, 1, 2, 3)) is None


def test_own_contains_is_left_to_dynamo():
    found = eager_vs_compiled(both, _alternating(OwnContains), (2, 1))
    with without_patch(NAME):
        native = eager_vs_compiled(both, _alternating(OwnContains), (2, 1))
    assert type(found) is type(native) and str(found)[:200] == str(native)[:200], (found, native)


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.5-2.6")
@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_without_the_patch_it_is_wrong(cls):
    with without_patch(NAME):
        found = eager_vs_compiled(branch, _alternating(CLASSES[cls]), (2, 1))
    assert isinstance(found, str), found
