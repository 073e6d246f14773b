"""dict-or: ``a | b`` of two dicts (PEP 584) traced as CPython merges them (torch 2.5-2.7), ``OrderedDict``
operands included (2.5-2.8).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
and every input after the call. Without the patch (reverted in-process) the shapes are graph breaks on the
releases of its range: ``test_without_the_patch_it_fails`` asserts that they are; with an ``OrderedDict``
operand they are graph breaks or plain dicts (2.5-2.8). Operands the patch refuses (a dict subclass, an
``OrderedDict`` subclass, a ``defaultdict``, a non-dict) stay Dynamo's: equal to eager without ``fullgraph``.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-or"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
RELEASE = parse_torch_version(torch.__version__).base_version
IN_RANGE = RELEASE in SpecifierSet("<2.8")
#: Where ``OrderedDict`` operands fail without the patch (the patch's range).
ORDERED_IN_RANGE = RELEASE in SpecifierSet("<2.9")
#: ``d.__or__(e)`` spelled out is an observed exception in the trace on 2.9-2.12 (native, outside the patch's range).
NATIVE_DUNDER_OR_BREAK = RELEASE in SpecifierSet(">=2.9,<2.13")


def input_or_new(x, d, e):
    """An input on the left, a dict made in the frame on the right; the result written and read back."""
    merged = d | {"b": x * 2, "c": 3}
    merged["z"] = x.sum()
    return merged, list(merged), merged["b"] + merged["z"]


def new_or_input(x, d, e):
    """A dict made in the frame on the left: its keys first, the input's values win."""
    merged = {"c": x, "a": 0} | d
    return merged, [k for k in merged]


def two_inputs(x, d, e):
    """Two inputs, overlapping keys; neither operand changes (the result is a new dict)."""
    merged = d | e
    merged["b"] = merged["b"] + x
    return merged, d, e, len(merged)


def equal_numeric_keys(x, d, e):
    """``{1: .} | {1.0: .}``: one key, the left operand's key object (``1``) with the right one's value."""
    merged = {1: x, "s": 0} | {1.0: x * 3, True: 5}  # noqa: F601 - equal keys of other types, on purpose
    return merged, [type(k).__name__ for k in merged]


def chained(x, d, e):
    """``a | b | c``, then a method of the result."""
    merged = d | e | {"n": x.sum()}
    return merged.get("n") * 2, sorted(merged)


SHAPES = {f.__name__: f for f in (input_or_new, new_or_input, two_inputs, equal_numeric_keys, chained)}


def _make(n):
    return torch.arange(3.0) * n, {"a": n, "b": torch.ones(3) * n}, {"b": torch.zeros(3) + n, f"k{n}": n}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.8")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert isinstance(found, Exception) and "or" in str(found), found


OD = collections.OrderedDict


def ordered_input_or_new(x, d, e):
    """``od | {...}`` and ``{...} | od`` of an ``OrderedDict`` passed in: ``OrderedDict``s, read back."""
    od = OD(d)
    right = od | {"b": x * 2, "c": 3}
    left = {"c": x, "a": 0} | od
    left["c"] = left["a"] + right["c"]
    return type(right).__name__, type(left).__name__, list(right.items()), list(left.items())


def ordered_constants(x, d, e):
    """Constant operands made in the frame (2.5-2.7 fold ``operator.or_`` into a plain dict)."""
    merged = {"q": len(d), "r": 4} | OD(p=1, q=2)
    both = OD(q=len(e)) | OD(p=0, q=1)
    return type(merged).__name__, list(merged.items()), type(both).__name__, list(both.items()), x + 1


def ordered_dunder(x, d, e):
    """``a.__or__(b)`` spelled out has ``a``'s class: ``od.__or__(d)`` an ``OrderedDict``."""
    merged = OD(d).__or__(e)
    return type(merged).__name__, list(merged.items()), x + 1


ORDERED = {f.__name__: f for f in (ordered_input_or_new, ordered_constants, ordered_dunder)}


@pytest.mark.parametrize("name", sorted(ORDERED))
def test_ordered_equals_eager(name):
    """Exact in the patch's range; beyond it Dynamo's own (2.9-2.12 break on ``od.__or__(d)``, 2.14+ on
    ``OrderedDict(d)`` of an input), never a wrong result."""
    found = eager_vs_compiled(ORDERED[name], _make, (1, 2, 3))
    if ORDERED_IN_RANGE:
        assert found is None, found
    else:
        assert found is None or isinstance(found, Unsupported), found


@pytest.mark.skipif(not ORDERED_IN_RANGE, reason="the patch applies on torch <2.9")
@pytest.mark.parametrize("name", ["ordered_input_or_new", "ordered_constants"])
def test_ordered_without_the_patch_it_fails(name):
    # (dict-constant-type folds an OrderedDict of constants as an OrderedDict: reverted too, as without tdcompat)
    with without_patch(NAME), without_patch("dict-constant-type"):
        found = eager_vs_compiled(ORDERED[name], _make, (1, 2))
    assert found is not None, "equal to eager without the patch"


class Sub(dict):
    def __or__(self, other):
        return "Sub.__or__"


class SubOD(collections.OrderedDict):
    pass


def refused_ordered_subclass(x, d, e):
    return SubOD(d) | e, dict(d) | SubOD(e)


def refused_subclass(x, d, e):
    return Sub(d) | e, x + 1


def refused_defaultdict(x, d, e):
    return collections.defaultdict(int, d) | e, x + 1


def refused_non_dict(x, d, e):
    try:
        return d | [("a", 1)], x
    except TypeError:
        return "TypeError", x + 1


@pytest.mark.skipif(not ORDERED_IN_RANGE, reason="the patch applies on torch <2.9 (2.11-2.12 crash on an "
                    "OrderedDict subclass operand, natively)")
@pytest.mark.parametrize("fn", (refused_ordered_subclass, refused_subclass, refused_defaultdict, refused_non_dict),
                         ids=lambda f: f.__name__)
def test_refused_operands_stay_dynamos(fn):
    """What the patch does not accept is Dynamo's (a graph break where it breaks): equal to eager."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    for n in (1, 2):
        x, d, e = _make(n)
        got, expected = compiled(x, dict(d), dict(e)), fn(x, dict(d), dict(e))
        assert repr(got) == repr(expected) and type(got[0]) is type(expected[0])


def dunder_or_spelled_out(x, d, e):
    """``a.__or__(b)`` as upstream's ``test_builtin_or_with_*_keys`` write it, and a non-dict operand
    (``NotImplemented``, no TypeError)."""
    return d.__or__(e), e.__or__(d), d.__or__([("a", 1)]) is NotImplemented, x + 1


@pytest.mark.parametrize("inputs", ((1, 2), (3, 4)))
def test_dunder_or_equals_eager(inputs):
    found = eager_vs_compiled(dunder_or_spelled_out, _make, inputs)
    assert not isinstance(found, str), found  # right, or Dynamo's break on the non-dict operand: never wrong


def dunder_or_dicts(x, d, e):
    return d.__or__(e), e.__or__({"m": x}), x + 1




@pytest.mark.parametrize("inputs", ((1, 2), (3, 4)))
def test_dunder_or_of_dicts_equals_eager(inputs):
    found = eager_vs_compiled(dunder_or_dicts, _make, inputs)
    if NATIVE_DUNDER_OR_BREAK:
        assert found is None or isinstance(found, Unsupported), found  # never a wrong result
    else:
        assert found is None, found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.8")
def test_dunder_or_without_the_patch_it_fails():
    with without_patch(NAME):
        found = eager_vs_compiled(dunder_or_dicts, _make, (1, 2))
    assert isinstance(found, Exception) and "__or__" in str(found), found
