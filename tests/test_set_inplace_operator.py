"""set-inplace-operator: ``s -= t`` / ``&=`` / ``^=`` on a set and the in-place operators on a frozenset, against eager
(torch <2.9).

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

NAME = "set-inplace-operator"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = parse_torch_version(torch.__version__).base_version in SpecifierSet("<2.9")


def input_set_updated(x, s):
    """``s -= t``, ``s ^= t``, ``s &= t`` on a set passed in: the caller's set and an alias see it."""
    kept = s
    s -= {"a"}
    s ^= {"q", "b"}
    s &= {"b", "c", "q", "k2"}
    return x + len(s), sorted(kept), s is kept


def made_in_frame_alias(x, s):
    """A set made in the frame, updated through one name and read through another in the same frame."""
    t = {v for v in s}
    t |= {"z"}
    alias = t
    t -= {"a", "z"}
    t ^= {"n"}
    return x * 2, sorted(alias), len(alias), t is alias


def self_operand(x, s):
    """``t &= t`` keeps ``t``; ``t -= t`` and ``t ^= t`` clear it (CPython's ``so == other`` branches)."""
    t, u, w = {v for v in s}, {v for v in s}, {v for v in s}
    t &= t
    u -= u
    w ^= w
    return x + 1, sorted(t), sorted(u), sorted(w)


def tensors_by_identity(x, s):
    """Sets of tensors: membership is identity, the set updated in place."""
    a, b, c = x + 1, x * 2, x - 1
    t = {a, b}
    kept = t
    t ^= {b, c}
    t -= {c}
    return len(kept), a in kept, b in kept, c in kept, t is kept


def equal_pair_copies(x, s):
    """``{1, 2} &= {1.0}`` keeps ``1.0`` (the smaller operand's copy), ``{1.0, 2, 3} &= {1, 5}`` keeps ``1``;
    ``{2.0} ^= {True, 2}`` is ``{True}``: ``^=`` adds the right operand's copies (one item each: no order)."""
    t = {1, 2}
    t &= {1.0}
    u = {1.0, 2, 3}
    u &= {1, 5}
    w = {2.0}
    w ^= {True, 2}
    return x + len(s), [(type(v).__name__, v) for v in t], [(type(v).__name__, v) for v in u], [
        (type(v).__name__, v) for v in w]


def frozenset_stays_frozen(x, s):
    """``fs |= t``, ``fs &= t``, ``fs -= t``, ``fs ^= t``: a new frozenset each time, the alias unchanged."""
    fs = frozenset(s)
    kept = fs
    fs |= {"z"}
    fs &= {"z", "a", "b", "c"}
    fs -= {"a"}
    fs ^= frozenset({"q", "b"})
    return x - 1, type(fs).__name__, sorted(fs), sorted(kept), fs is kept


#: Wrong or a graph break without the patch on every release of its range.
SHAPES = {f.__name__: f for f in (input_set_updated, made_in_frame_alias, tensors_by_identity, frozenset_stays_frozen)}
#: Right without the patch on some releases of its range (constants folded by CPython itself), kept right with it.
ALSO_NATIVE = {f.__name__: f for f in (self_operand,)}
#: Right with the patch in its range; 2.15 (out of range) keeps the other copy of an equal pair natively.
IN_RANGE_ONLY = {f.__name__: f for f in (equal_pair_copies,)}


def _make(n):
    """Other items on each call."""
    return torch.arange(3.0) * n, {"a", "b", "c", f"k{n}"}


@pytest.mark.parametrize("name", sorted({**SHAPES, **ALSO_NATIVE}))
def test_equals_eager(name):
    assert eager_vs_compiled({**SHAPES, **ALSO_NATIVE}[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.9")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert found is not None, "without the patch this shape differs from eager (or breaks) on 2.5-2.8"


def mixed_items(x, s):
    """A set of tensors and constants together: not provably CPython's membership, so a graph break (or, where
    Dynamo folds it, its own result as before) - never the rebinding taken for an update."""
    t = {x, "a"}
    kept = t
    t -= {x}
    return len(kept), t is kept


def test_mixed_items_break_or_match():
    found = eager_vs_compiled(mixed_items, _make, (1, 2))
    assert found is None or isinstance(found, Exception), found


@pytest.mark.skipif(not IN_RANGE, reason="out of range; 2.15 keeps the other copy of an equal pair natively")
@pytest.mark.parametrize("name", sorted(IN_RANGE_ONLY))
def test_equals_eager_in_range(name):
    assert eager_vs_compiled(IN_RANGE_ONLY[name], _make, (1, 2, 3)) is None
