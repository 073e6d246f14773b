"""sequence-compare-identity: list and tuple items compare by identity first (torch <2.13).

CPython's ``PyObject_RichCompareBool`` answers "equal" for one object compared with itself, so
``(n,) == (n,)`` of one NaN is True and ``(x, 1) == (x, 2)`` of one tensor never compares the
tensor. Each test compiles with ``fullgraph=True``, calls twice with different inputs and compares
with eager; without the patch (reverted in-process) the shape is asserted to fail on 2.5-2.12.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # tdcompat applies its patches when Dynamo is imported

from tdcompat.versions import parse_torch_version

from conftest import applied, compiled_outcome, without_patch

NAME = "sequence-compare-identity"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 13)


class Box:
    def __init__(self, n):
        self.a = n
        self.calls = 0


class Loud:
    """``__eq__`` with a side effect: CPython never calls it for the object against itself."""

    def __init__(self, box):
        self.box = box

    def __eq__(self, other):
        self.box.calls += 1
        return False

    __hash__ = object.__hash__


def _outcome(fn):
    """Two calls with different inputs; the boxes' attributes are compared too (``Loud`` counts)."""
    return compiled_outcome(fn, lambda n: (torch.full((2,), float(n)), Box(n)), (3, 4),
                            state=lambda args: vars(args[1]))


def tuple_with_nan_equals_itself(x, o):
    h = (o.a, float("nan"))
    return x + (h == h), h != h, x * (h <= h)


def nan_at_same_index(x, o):
    n = float("nan")
    return x + ([n, o.a] == [n, o.a]), [n, o.a] < [n, o.a + 1], (o.a, n, 1) > (o.a, n, 0), (n,) == (n, 1)


def nan_contained(x, o):
    n = float("nan")
    return x + (n in [1, "s", n]), n not in (o.a, n), n in (n,), n in [o.a, -0.0], float("nan") in [n]


def tensor_skipped(x, o):
    return x * ((x, o.a) == (x, o.a + 1)), [o.a, x] <= [o.a, x], (x, o.a) != (x, o.a)


def eq_side_effect_skipped(x, o):
    loud = Loud(o)
    pair = [loud, o.a]
    same_pair = pair == [loud, o.a]
    o.calls += 10
    return x + o.calls, same_pair, (loud, 1) < (loud, 2)


SHAPES = [tuple_with_nan_equals_itself, nan_at_same_index, nan_contained, tensor_skipped, eq_side_effect_skipped]


@pytest.mark.parametrize("fn", SHAPES, ids=[f.__name__ for f in SHAPES])
def test_identical_items(fn):
    assert applied(NAME) == NEEDED
    assert _outcome(fn) == "ok"


#: Without the patch: wrong (NaN), a data-dependent graph break (tensor), or __eq__ run (loud; 2.5's
#: compare of two user objects is right there).
FAILS = {tuple_with_nan_equals_itself: ("wrong",), nan_at_same_index: ("wrong",), nan_contained: ("wrong",),
         tensor_skipped: ("Unsupported", "UserError"),
         eq_side_effect_skipped: ("wrong", "Unsupported") if TORCH >= (2, 6) else ("ok",)}


@pytest.mark.skipif(not NEEDED, reason="2.13+ compare by identity first natively")
@pytest.mark.parametrize("fn", SHAPES, ids=[f.__name__ for f in SHAPES])
def test_without_the_patch_it_fails(fn):
    with without_patch(NAME):
        got = _outcome(fn)
    assert got in FAILS[fn], got


def lists_by_identity(x, o):
    a, b = ["s", 1], ["s", 1]  # constants: a dynamic int in a list makes 2.7+ break on `is`
    held = [a]
    return x + (a is b) + o.a, a is not b, held[0] is a, ["t"] is ["t"], b is not held[0]  # noqa: F632


def test_lists_made_in_frame_are_distinct_objects():
    """2.5-2.6 answered ``a is b`` of two lists with ``list_cmp(operator.is_, ...)``: True for equal
    items. A list the frame built is no other object."""
    assert _outcome(lists_by_identity) == "ok"


@pytest.mark.skipif(TORCH >= (2, 7), reason="2.7+ compare lists under `is` by tracker natively")
def test_lists_made_in_frame_without_the_patch_are_equal_by_value():
    with without_patch(NAME):
        assert _outcome(lists_by_identity) == "wrong"


class Holder:
    def __init__(self, n):
        self.a, self.l, self.m = n, [n, 1], [n, 1]


def lists_passed_in(x, h):
    return x + 1, h.l is h.m, h.l is h.l


def test_two_lists_passed_in_are_not_guessed():
    """Two distinct lists of an input, of equal items: a graph break on 2.5-2.6 (whether they are one
    object on a later call is not guarded), never the old True."""
    torch._dynamo.reset()
    compiled = torch.compile(lists_passed_in, backend="eager", fullgraph=True)
    if TORCH < (2, 7):
        with pytest.raises(torch._dynamo.exc.Unsupported):
            compiled(torch.ones(2), Holder(3))
    else:
        assert compiled(torch.ones(2), Holder(3))[1:] == (False, True)


def subclass_and_mixed(x, o):
    """Deferred shapes: a list against a tuple, torch.Size; Dynamo's answer either way."""
    n = float("nan")
    return x + (x.shape == (2,)), (n, 1) == (n, 1), [o.a] == [o.a]


def test_deferred_shapes_stay_right():
    assert _outcome(subclass_and_mixed) == "ok"
