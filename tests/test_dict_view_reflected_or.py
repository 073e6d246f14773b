"""dict-view-reflected-or: ``s | view`` / ``s ^ view`` with the view on the right (torch >=2.13).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
(the elements with their types, so ``1`` and ``1.0`` differ) and the inputs after the call. Without the patch
(reverted in-process) the ``|`` shapes keep the view's elements on 2.13-2.15: ``test_without_the_patch_it_fails``
asserts that they do.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-view-reflected-or"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = parse_torch_version(torch.__version__).base_version in SpecifierSet(">=2.13")


def _typed(s):
    return sorted((type(e).__name__, repr(e)) for e in s)


def keys_or(x, d):
    """``s | d.keys()``, then the result read back."""
    s = {1, 2.0, "a"}
    r = s | d.keys()
    r.add("w")
    return x + len(r), _typed(r), _typed(s)


def items_or(x, d):
    """``s | d.items()``: pairs equal across types (``(1, 0)`` and ``(1.0, 0)``)."""
    s = {(1, 0), ("b", 2)}
    r = s | d.items()
    return x - len(r), r


def keys_ior(x, d):
    """``t |= d.keys()`` on a set: the set's ``__ior__`` gives way to the view's reflected ``|``: a new set."""
    s = {1, 2.0}
    t = s
    t |= d.keys()
    return x * 2, _typed(t), t is s, _typed(s)


def keys_xor(x, d):
    """``s ^ d.keys()`` and the view on the left (Dynamo's own, right)."""
    s = {1, 2.0, "a"}
    return x + 1, _typed(s ^ d.keys()), _typed(d.keys() | s), _typed(d.keys() ^ s)


SHAPES = {f.__name__: f for f in (keys_or, items_or, keys_ior, keys_xor)}
WRONG_WITHOUT = ("keys_or", "items_or", "keys_ior")


def _make(n):
    d = {1.0: 0, 2: n} if n % 2 else {True: 0, 3: n}
    return torch.arange(3.0) * n, d


@pytest.mark.skipif(not IN_RANGE, reason="2.5-2.12 are not this patch's (2.5-2.8 break or crash natively on a set "
                    "merged with a view; 2.9-2.12: set-view-operator and its tests)")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.13")
@pytest.mark.parametrize("name", WRONG_WITHOUT)
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert isinstance(found, str), found
