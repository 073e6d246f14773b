"""frozenset-inplace-op: ``fs |= b`` (``&=``, ``^=``, ``-=``) on a frozenset runs the binary operator (2.9-2.12).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
(the new frozenset's items and type, the one held under another name) and the set passed in. Without the
patch (reverted in-process) the compile crashes on 2.9-2.12 (``Illegal call_method update on a frozenset``):
``test_without_the_patch_it_fails`` asserts it. 2.5-2.8 build a ``set`` instead (native, not this patch):
the shapes run from 2.9.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "frozenset-inplace-op"
RELEASE = parse_torch_version(torch.__version__).base_version
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = RELEASE in SpecifierSet(">=2.9,<2.13")
NATIVE_SET = RELEASE in SpecifierSet("<2.9")  # 2.5-2.8: a set where CPython gives a frozenset


def ior_with_set(x, s):
    fs = frozenset(s)
    kept = fs
    fs |= {"z", len(s)}
    return x + len(fs), sorted(map(str, fs)), sorted(kept), type(fs).__name__


def isub_iand(x, s):
    fs = frozenset(s) | frozenset({"q"})
    fs -= {"a"}
    fs &= s | {"q"}
    return x + 1, sorted(fs), type(fs).__name__


def ixor_with_frozenset(x, s):
    fs = frozenset(s)
    fs ^= frozenset({"b", "w"})
    return x + 1, sorted(fs), type(fs).__name__, "w" in fs


SHAPES = {f.__name__: f for f in (ior_with_set, isub_iand, ixor_with_frozenset)}


def _make(n):
    return torch.arange(3.0) * n, {"a", "b", f"s{n}"}


@pytest.mark.skipif(NATIVE_SET, reason="2.5-2.8 build a set where CPython gives a frozenset (native)")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch 2.9-2.12")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert isinstance(found, Exception) and "Illegal call_method" in str(found), found


def ior_with_keys_view(x, s):
    fs = frozenset(s)
    try:
        fs |= {"k": x}.keys()  # not a set: the patch defers (CPython: dict_keys.__ror__, a set)
    except TypeError:
        return "TypeError", x + 1
    return sorted(fs), type(fs).__name__


@pytest.mark.skipif(NATIVE_SET, reason="2.5-2.8 build a set where CPython gives a frozenset (native)")
def test_other_operands_stay_dynamos():
    """A dict view on the right is not accepted: the call is Dynamo's, as without the patch."""
    with without_patch(NAME):
        native = eager_vs_compiled(ior_with_keys_view, _make, (1, 2))
    found = eager_vs_compiled(ior_with_keys_view, _make, (1, 2))
    assert type(found) is type(native) and str(found)[:80] == str(native)[:80]
