"""set-view-operator: a set or frozenset with a dict view under ``|``, ``&``, ``-``, ``^`` and in place, against
eager (torch >=2.9,<2.13).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
and every input after the call. Without the patch (reverted in-process) the shapes fail on the releases of
its range: ``test_without_the_patch_it_fails`` asserts that they do.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "set-view-operator"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = parse_torch_version(torch.__version__).base_version in SpecifierSet(">=2.9,<2.13")


def ior_keys_rebinds(x, d):
    """``s |= d.keys()``: a new set; the name that held the old one keeps it."""
    s = {"a", "b"}
    kept = s
    s |= d.keys()
    return x + len(s), sorted(s), sorted(kept), s is kept


def inplace_ops_under_try(x, d):
    """``&=``, ``-=``, ``^=`` with a keys view, where code expects a ``TypeError`` of a non-set operand."""
    out = []
    for op in ("&", "-", "^"):
        s = {"a", "b", "c"}
        kept = s
        try:
            if op == "&":
                s &= d.keys()
            elif op == "-":
                s -= d.keys()
            else:
                s ^= d.keys()
        except TypeError:
            out.append("TypeError")
        out.append((sorted(s), sorted(kept), s is kept))
    return x * 2, out


def frozenset_with_view_is_a_set(x, d):
    """``fs | d.keys()`` and ``fs -= d.items()``: a ``set`` (the view's reflected operator), not a frozenset."""
    fs = frozenset({("a", 1), ("q", 1)})
    u = frozenset({"a", "q"}) | d.keys()
    fs -= d.items()
    return x + 1, type(u).__name__, sorted(u), type(fs).__name__, sorted(fs)


def items_view_pairs(x, d):
    """``s & d.items()`` / ``s ^= d.items()`` with constant values: the pairs as CPython compares them, a new set."""
    s = {("a", 1), ("b", 1), ("c", 2)}
    kept = s
    s ^= d.items()
    return x + 2, sorted(kept & d.items()), sorted(s), sorted(kept), s is kept


def equal_pair_keeps_cpythons_copy(x, d):
    """``{1, 2} & {1.0: 0}.keys()`` is ``{1.0}``: which copy of an equal pair survives is CPython's (by the
    operands' sizes). Native on 2.13+ too (either copy): in range only."""
    e = {1.0: 0, len(d): 1}
    s = {1, 2} & e.keys()
    t = {1.0, 2} & {1: 0, 7: 2, len(d) + 7: 3}.keys()
    return x - 1, [(type(v).__name__, v) for v in sorted(s)], [(type(v).__name__, v) for v in sorted(t)]


SHAPES = {f.__name__: f for f in (ior_keys_rebinds, inplace_ops_under_try, frozenset_with_view_is_a_set,
                                  items_view_pairs)}
IN_RANGE_SHAPES = {f.__name__: f for f in (equal_pair_keeps_cpythons_copy,)}


def _make(n):
    """Other keys on each call (the values stay: an int that changes would become a symbolic one, which the
    patch leaves to Dynamo)."""
    return torch.arange(3.0) * n, {"a": 1, "b": 2, f"k{n}": 3, **({"c": 2} if n % 2 else {})}


#: 2.5-2.8 graph-break on a set with a dict view (``isub``/``ixor``: "Failed to trace builtin operator"), with
#: and without tdcompat: not this gap.
COMPILES = parse_torch_version(torch.__version__).base_version in SpecifierSet(">=2.9")


@pytest.mark.skipif(not COMPILES, reason="2.5-2.8 graph-break on a set with a dict view (not this gap)")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.9,<2.13; 2.13+ keep either copy")
@pytest.mark.parametrize("name", sorted(IN_RANGE_SHAPES))
def test_equals_eager_in_range(name):
    assert eager_vs_compiled(IN_RANGE_SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.9,<2.13")
@pytest.mark.parametrize("name", sorted({**SHAPES, **IN_RANGE_SHAPES}))
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled({**SHAPES, **IN_RANGE_SHAPES}[name], _make, (1, 2))
    assert found is not None, "without the patch this shape differs from eager (or breaks) on 2.9-2.12"


def tensor_values_in_place(x, d):
    """``s |= e.items()`` where a value is a tensor: not computable by value, so never the in-place update 2.12
    runs (nor 2.9-2.11's TypeError under ``try``)."""
    e = {"a": x, "b": 1}
    s = {"a", ("b", 1)}
    kept = s
    try:
        s |= e.items()
    except TypeError:
        return x - 1, "TypeError"
    return x + 1, len(s), len(kept), s is kept


@pytest.mark.skipif(not COMPILES, reason="2.5-2.8 graph-break on a set with a dict view (not this gap)")
def test_tensor_elements_break_or_match():
    """A graph break (an exception here) or eager's result, never a difference."""
    found = eager_vs_compiled(tensor_values_in_place, _make, (1, 2))
    assert found is None or isinstance(found, Exception), found
