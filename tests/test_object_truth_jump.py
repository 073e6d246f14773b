"""object-truth-jump: a conditional jump on a dict view or a ``mappingproxy`` takes the branch of its truth
(torch >=2.13).

Each shape compiled with ``fullgraph=True`` and compared with eager on calls whose dict is empty on odd calls
and not on even ones (and the other way round): the return value and the inputs after the call. Without the
patch (reverted in-process) every shape takes the true branch for an empty view on 2.13-2.15:
``test_without_the_patch_it_fails`` asserts that it does.
"""

from __future__ import annotations

import collections
import types

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "object-truth-jump"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = parse_torch_version(torch.__version__).base_version in SpecifierSet(">=2.13")


class Holder:
    """An object whose instance dict is empty on odd calls."""


def if_keys(x, d, o):
    return x + (1 if d.keys() else 0)


def if_values(x, d, o):
    return x + (1 if d.values() else 0)


def if_items(x, d, o):
    return x + (1 if d.items() else 0)


def if_not_keys(x, d, o):
    if not d.keys():
        return x - 1
    return x + 1


def and_or(x, d, o):
    """``view and a or b``: the jumps that keep the value on the stack (``JUMP_IF_*_OR_POP`` on 3.11)."""
    return x + ((d.keys() and 2) or 3), (d.values() or "empty")


def while_view(x, d, o):
    n = 0
    while d.keys():
        d.popitem()
        n += 1
    return x + n, d


def made_in_frame(x, d, o):
    e = dict(d)
    r = 1 if e.items() else 0
    e["z"] = 1
    return x + r, 1 if e.items() else 0


def ordered_and_default(x, d, o):
    od = collections.OrderedDict(d)
    dd = collections.defaultdict(int, d)
    return x + (1 if od.keys() else 0) + (2 if dd.values() else 0)


def instance_dict_view(x, d, o):
    return x + (1 if o.__dict__.keys() else 0) + (2 if vars(o).items() else 0)


def mapping_proxy(x, d, o):
    return x + (1 if types.MappingProxyType(d) else 0)


def assert_on_view(x, d, o):
    """An ``assert`` (Dynamo's assert rewrite): left to Dynamo, right or a graph break."""
    if d:
        assert d.keys(), "non-empty"
    return x + 1


SHAPES = {f.__name__: f for f in (if_keys, if_values, if_items, if_not_keys, and_or, while_view, made_in_frame,
                                  ordered_and_default, instance_dict_view, mapping_proxy)}


def make(n):
    """Empty on odd calls, ``{"a": 1, "b": 2}`` on even ones; the object's instance dict the same."""
    d = {} if n % 2 else {"a": 1, "b": 2}
    o = Holder()
    o.__dict__.update(d)
    return torch.arange(3.0) * n, d, o


@pytest.mark.parametrize("calls", [(1, 2, 3), (2, 1, 4)], ids=["empty-first", "full-first"])
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name, calls):
    if IN_RANGE:
        assert eager_vs_compiled(SHAPES[name], make, calls) is None
    else:
        assert_right_break_or_native(NAME, SHAPES[name], make, calls)


def test_an_assert_is_right_or_a_break():
    found = eager_vs_compiled(assert_on_view, make, (2, 1, 4))
    assert found is None or is_break(found), found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.13")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], make, (1, 2, 3))
    assert found is not None, "without the patch an empty view takes the true branch"
    if name != "while_view":  # there the loop body's d.popitem() raises on the empty dict: an error, not a value
        assert not is_break(found), found
