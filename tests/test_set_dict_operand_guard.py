"""set-dict-operand-guard: a set built from a dict input's keys, compared with eager when the keys differ
between calls (torch >=2.9).

Compiled with ``fullgraph=True`` and compared with eager on calls whose dicts have other keys (a key added, one
removed): the return value and every input after the call. Without the patch (reverted in-process) the shapes
fail on the releases of its range: ``test_without_the_patch_it_fails`` asserts that they do.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, without_patch

NAME = "set-dict-operand-guard"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
RELEASE = parse_torch_version(torch.__version__).base_version
IN_RANGE = RELEASE in SpecifierSet(">=2.9")


#: One read of the dict's keys per shape (two would hide each other: either guard catches the change).
SHAPES = {
    "set": lambda x, d, e, o: (x + len(set(d)), sorted(set(d))),
    "frozenset": lambda x, d, e, o: (x * 2, sorted(frozenset(d))),
    "unpacked": lambda x, d, e, o: (x - 1, sorted({*d})),
    "update": lambda x, d, e, o: _updated(x, d),
    "union": lambda x, d, e, o: (x + 1, sorted({"z"}.union(d))),
    "symmetric_difference": lambda x, d, e, o: (x + 2, sorted({"a", "z"}.symmetric_difference(d))),
    "issuperset": lambda x, d, e, o: (x + 3, {"a", "k0"}.issuperset(d)),
    "keys_view_minus": lambda x, d, e, o: (x + 4, sorted(e.keys() - d)),
    "vars": lambda x, d, e, o: (x + 5, sorted(set(vars(o)))),
    "fromkeys": lambda x, d, e, o: (x + 6, list(dict.fromkeys(d))),
    "ordered_fromkeys": lambda x, d, e, o: (x + 7, len(collections.OrderedDict.fromkeys(d, 0))),
}


def _updated(x, d):
    s = {"a", "z"}
    s.update(d)
    return x * 3, sorted(s)


class Holder:
    """An object whose attributes are the call's keys."""


def _maker(kind):
    def make(n):
        """One more key on each call (``k0`` ... ``k<n-1>``): 2.9-2.13 guard the keys a folded dict had, so only
        a key added shows the missing guard there."""
        keys = {"a": 1, **{f"k{i}": i for i in range(n)}}
        d = kind(int, keys) if kind is collections.defaultdict else kind(keys)
        o = Holder()
        o.__dict__.update(keys)
        return torch.arange(3.0) * n, d, {"q": 1, "a": 2, "k1": 0}, o

    return make


KINDS = {"dict": dict, "OrderedDict": collections.OrderedDict, "defaultdict": collections.defaultdict}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name, kind):
    """What the patch fixes (``_fails_without``) equals eager; everything else is never worse: right, a graph
    break (2.5-2.8: set methods with a dict), or wrong natively too (then it xfails, named: 2.13's ``union`` of
    an ``OrderedDict``/``defaultdict`` input and 2.14's of a ``defaultdict``, folded on another path, open)."""
    if IN_RANGE and _fails_without(name, kind):
        assert eager_vs_compiled(SHAPES[name], _maker(KINDS[kind]), (1, 2, 3, 4)) is None
    else:
        assert_right_break_or_native(NAME, SHAPES[name], _maker(KINDS[kind]), (1, 2, 3, 4))


def _fails_without(name: str, kind: str) -> bool:
    """Measured: on 2.14.1 and 2.15.0 every shape and kind, but a ``defaultdict`` on 2.14 (iterated there, which
    guards its keys) and ``vars(o)`` (``dunder-dict-guards`` guards an instance dict's keys; without tdcompat it
    is wrong on both); on 2.9-2.13 the set methods folded over a copy of the dict (``union``,
    ``symmetric_difference``; 2.13 folds an ``OrderedDict``/``defaultdict`` input elsewhere: open)."""
    if RELEASE in SpecifierSet("<2.14"):
        folded = ("dict",) if RELEASE in SpecifierSet(">=2.13") else tuple(KINDS)
        return name in ("union", "symmetric_difference") and kind in folded
    return name != "vars" and not (kind == "defaultdict" and RELEASE in SpecifierSet("<2.15"))


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.9")
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name, kind):
    if not _fails_without(name, kind):
        pytest.skip(f"{name} of a {kind} is right without the patch here (measured)")
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _maker(KINDS[kind]), (1, 2))
    assert found is not None, "without the patch the first call's keys are reused"
