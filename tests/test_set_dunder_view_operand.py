"""set-dunder-view-operand: a set's operator dunder called explicitly with a dict view (torch 2.12-2.13).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
(``NotImplemented`` or the result), the set after the call and the dict. The four reflected dunders with a
keys or items view, on a ``set`` and a ``frozenset`` (2.12+: computed natively on 2.12-2.13), the eight
forward and in-place ones (2.13+: computed natively on 2.12-2.13; tdcompat's ``set-view-operator``
graph-breaks them on 2.12), a set subclass's inherited dunder (2.12+, wrong natively on 2.12-2.13 too), and
the shapes the patch must leave to Dynamo (the operators themselves, ``operator.and_``, a set operand, other
set methods) on 2.12+. Without the patch (reverted in-process) the reflected shapes are wrong on 2.12-2.13
and the forward ones on 2.13 (``__or__``/``__ror__`` are right there): asserted.
"""

from __future__ import annotations

import operator

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "set-dunder-view-operand"
TORCH = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = (2, 12) <= TORCH < (2, 14)

REFLECTED = ("__ror__", "__rand__", "__rsub__", "__rxor__")
FORWARD = ("__or__", "__and__", "__sub__", "__xor__", "__ior__", "__iand__", "__isub__", "__ixor__")


def _explicit(dunder, view, kind):
    def shape(x, d):
        s = {"a", ("a", 1), "z"} if kind == "set" else frozenset({"a", ("a", 1), "z"})
        r = getattr(s, dunder)(d.keys() if view == "keys" else d.items())
        if r is NotImplemented:  # the fallback code that calls a dunder by hand writes
            r = "NotImplemented"
        return x + len(s), r, s

    shape.__name__ = f"{kind}_{dunder.strip('_')}_{view}"
    return shape


def _shapes(dunders):
    return {f.__name__: f for f in (_explicit(d, v, k) for d in dunders for v in ("keys", "items")
                                    for k in ("set", "frozenset")
                                    if not (k == "frozenset" and d.startswith("__i")))}


REFLECTED_SHAPES = _shapes(REFLECTED)
FORWARD_SHAPES = _shapes(FORWARD)


class USet(set):
    pass


class OwnRand(set):
    def __rand__(self, other):
        return ("own", len(other), super().__rand__(other))


def operators(x, d):
    """The operators themselves: CPython falls back to the view's reflected operator (a new set)."""
    s = {"a", "z"}
    kept = s
    s &= d.keys()
    u = {"a", ("a", 1)} | d.items()
    return x + len(s), s, kept, u, s is kept


def operator_functions(x, d):
    s = {"a", "z"}
    return x + 1, operator.and_(s, d.keys()), operator.sub(frozenset({"a", "q"}), d.keys()), s


def set_operand(x, d):
    """A set operand: the dunders' own answer (a set), which Dynamo computes."""
    s = {"a", "z"}
    other = set(d.keys())
    return x + 1, s.__and__(other), s.__rsub__(other), s.__ior__(other) is s, s


def keeps_other_calls(x, d):
    s = {"a", "z"}
    return x + 1, s.intersection(d.keys()), s.union(d.items()), sorted(s.__rand__({"a", "q"}))


def user_set(x, d):
    """A set subclass: its inherited dunder is CPython's set one, ``NotImplemented`` too (Dynamo calls it on the
    subclass's set tracker, so the patch answers it: wrong without it on 2.12-2.13); one with its own
    ``__rand__`` that calls ``super()``'s."""
    u = USet({"a", "z"})
    r = u.__rand__(d.keys())
    own = OwnRand({"a"}).__rand__(d.keys())
    return x + 1, "NotImplemented" if r is NotImplemented else r, u, own[:2], own[2] is NotImplemented


KEPT_SHAPES = {f.__name__: f for f in (operators, operator_functions, set_operand, keeps_other_calls)}
USER_SHAPES = {"user_set": user_set}


def _make(n):
    return torch.arange(3.0) * n, {"a": n, "b": 2, ("a", 1): 3} if n % 2 else {"a": 1, "z": n}


@pytest.mark.skipif(TORCH < (2, 12), reason="2.5-2.11: right or a graph break, not this patch's range")
@pytest.mark.parametrize("name", sorted(REFLECTED_SHAPES))
def test_reflected_dunder_is_not_implemented(name):
    assert eager_vs_compiled(REFLECTED_SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(TORCH < (2, 13), reason="2.12: set-view-operator's graph break; 2.5-2.11 not this range")
@pytest.mark.parametrize("name", sorted(FORWARD_SHAPES))
def test_forward_dunder_is_not_implemented(name):
    assert eager_vs_compiled(FORWARD_SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(TORCH < (2, 12), reason="the patch applies on torch >=2.12,<2.14")
@pytest.mark.parametrize("name", sorted(KEPT_SHAPES))
def test_operators_and_other_operands_stay_dynamos(name):
    assert eager_vs_compiled(KEPT_SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(TORCH < (2, 12), reason="the patch applies on torch >=2.12,<2.14")
def test_user_set_inherited_dunder():
    assert eager_vs_compiled(user_set, _make, (1, 2, 3)) is None


def _fails_without_patch(shapes):
    with without_patch(NAME):
        return sorted(name for name, fn in shapes.items() if eager_vs_compiled(fn, _make, (1, 2)) is not None)


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.12,<2.14")
def test_without_the_patch_reflected_dunders_are_wrong():
    right = {name for name in REFLECTED_SHAPES if "_ror_" in name} if TORCH == (2, 13) else set()  # 2.13: __ror__
    assert _fails_without_patch(REFLECTED_SHAPES) == sorted(set(REFLECTED_SHAPES) - right)
    assert _fails_without_patch(USER_SHAPES) == ["user_set"]


@pytest.mark.skipif(TORCH != (2, 13), reason="the forward dunders are computed on 2.13 only (2.12: a break)")
def test_without_the_patch_forward_dunders_are_wrong_on_2_13():
    right = {name for name in FORWARD_SHAPES if "_or_" in name}  # __or__: NotImplemented natively on 2.13
    assert _fails_without_patch(FORWARD_SHAPES) == sorted(set(FORWARD_SHAPES) - right)
