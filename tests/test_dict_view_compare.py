"""dict-view-compare: a dict's items (and keys) view compared with a set, a frozenset or another view, against eager
(torch >=2.8,<2.12).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs (other keys each call:
an int value that changes would become a symbolic one, which the patch leaves to a graph break): the return value
and every input after the call. Without the patch (reverted in-process) the answered shapes are wrong on the
releases of its range: ``test_without_the_patch_it_fails`` asserts that they are.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "dict-view-compare"
RELEASE = parse_torch_version(torch.__version__).base_version
IN_RANGE = RELEASE in SpecifierSet(">=2.8,<2.12")
#: 2.5-2.7 fold ``d.items()`` to a tuple (dict-items-view graph-breaks its comparisons): not this gap.
HAS_ITEMS_VIEW = RELEASE in SpecifierSet(">=2.8")

PAIRS = {("a", 1), ("k1", 1)}


def tensor_values(x, d):
    """A tensor among the values, a set of the same size: not computable by value."""
    e = {"a": x, "b": 1}
    return x + 1, e.items() == {("b", 1), ("a", 2)}, e.items() != {("b", 1), ("a", 2)}


def tensor_values_other_size(x, d):
    """A tensor among the values, a set (made in the frame) or a view of another size: the sizes decide."""
    e = {"a": x, "b": 1}
    return (x + 1, e.items() == {("b", 1)}, e.items() != {("b", 1)}, e.items() <= {("b", 1)},
            e.items() == d.keys() if len(d) != 2 else None, e.items() < {("b", 1), 1})


class PlainSet(set):
    """A set subclass that keeps the builtin's ``__len__`` and ``__contains__``: compared by its elements."""


def user_set_subclass(x, d):
    """An items view and a plain ``set`` subclass, either side (2.9-2.11: always unequal)."""
    u = PlainSet(PAIRS)
    return x + 5, d.items() == u, u != d.items(), d.items() <= PlainSet(PAIRS | {("z", 0)})


def items_equal_set(x, d):
    """``d.items() == s`` / ``!=`` with the view on the left (2.8-2.11: always unequal)."""
    return x + 1, d.items() == PAIRS, d.items() != PAIRS, d.items() == frozenset(PAIRS)


def set_equal_items(x, d):
    """The set on the left: ``set.__eq__`` gives NotImplemented, CPython runs the view's reflected ``==``."""
    return x - 1, PAIRS == d.items(), frozenset(PAIRS) != d.items(), set(d.items()) == d.items()


def set_equal_keys(x, d):
    """``s == d.keys()`` (2.9-2.11: ``SetVariable.__eq__`` answers False for a non-set)."""
    return x * 2, {"a", "k1"} == d.keys(), frozenset(d) != d.keys(), {"a"} == d.keys()


def items_subset_of_set(x, d):
    """``<=`` and ``<`` with the items view on the left (2.8-2.11: a ``TypeError`` in the trace, taken here)."""
    try:
        return x + 2, d.items() <= PAIRS | {("z", 0)}, d.items() < PAIRS, d.items() <= set(d.items())
    except TypeError:
        return x - 2, "TypeError"


def items_and_keys_views(x, d):
    """An items view against a keys view (equal when the keys are the pairs) and against another items view."""
    e = {("a", 1): 0, ("k1", 1): 0}
    return (x + 3, d.items() == e.keys(), e.keys() == d.items(), d.items() == dict(d).items(),
            d.items() != {"a": 1}.items())


def ordered_dict_items(x, d):
    """An ``OrderedDict``'s items view (``odict_items``) compares as a set too."""
    od = collections.OrderedDict(d)
    return x + 4, od.items() == PAIRS, PAIRS != od.items()


def views_superset_of_set(x, d):
    """``v > s``, ``v >= s``, ``s <= v``, ``s < v`` with a keys and an items view, inside ``try``: all reach
    Dynamo's ``cmp_lt`` polyfill as ``s.__lt__(v)`` (2.8-2.11: a ``TypeError`` in the trace, taken here)."""
    k, i = d.keys(), d.items()
    try:
        return (x + 6, k > {"a"}, k >= {"a", "k1"}, {"a"} <= k, frozenset({"a"}) < k, i > {("a", 1)},
                i >= PAIRS, PAIRS <= i, {("a", 1)} < i)
    except TypeError:
        return x - 6, "TypeError"


SHAPES = {f.__name__: f for f in (user_set_subclass, tensor_values_other_size, items_equal_set, set_equal_items,
                                  set_equal_keys, items_subset_of_set, items_and_keys_views, ordered_dict_items,
                                  views_superset_of_set)}
#: Shapes Dynamo gets wrong (or breaks on) without the patch, per release.
FAILS_WITHOUT = {"user_set_subclass": ">=2.9,<2.12", "tensor_values_other_size": ">=2.8,<2.12",
                 "items_equal_set": ">=2.8,<2.12", "set_equal_items": ">=2.8,<2.12",
                 "set_equal_keys": ">=2.9,<2.12", "items_subset_of_set": ">=2.8,<2.12",
                 "items_and_keys_views": ">=2.8,<2.12", "ordered_dict_items": ">=2.8,<2.12",
                 "views_superset_of_set": ">=2.8,<2.12"}


def _make(n):
    """Other keys on each call: ``{"a": 1, "k1": 1}`` equals ``PAIRS`` on the first call only."""
    return torch.arange(3.0) * n, {"a": 1, f"k{n}": 1, **({"c": 1} if n == 3 else {})}


#: 2.8 cannot build a ``set`` subclass in the frame ("Unsupported function call", with and without tdcompat).
COMPILES_ON = {"user_set_subclass": ">=2.9"}


@pytest.mark.skipif(not HAS_ITEMS_VIEW, reason="2.5-2.7 fold d.items() to a tuple (not this gap)")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    if RELEASE not in SpecifierSet(COMPILES_ON.get(name, ">=2.8")):
        pytest.skip(f"{name} graph-breaks on {RELEASE} with and without tdcompat (not this gap)")
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.8,<2.12")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    if RELEASE not in SpecifierSet(FAILS_WITHOUT[name]):
        pytest.skip(f"{name} is right without the patch on {RELEASE}")
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert found is not None, "without the patch this shape differs from eager (or breaks)"


class Members(set):
    """A set subclass: CPython compares an items view with it by contents (calling its ``__contains__``)."""

    def __contains__(self, item):
        return True


def user_set_operand(x, d):
    """A user set subclass: CPython compares by contents through its ``__contains__``."""
    return x + 1, d.items() == Members({1, 2}), d.items() != Members({1})


def other_operands(x, d):
    """A list, a dict, a number: unequal in CPython (``NotImplemented`` both ways), left to Dynamo."""
    return x + 1, d.items() == [("a", 1)], d.items() == d, d.items() != 3, [("a", 1)] == d.items()


def explicit_set_lt(x, d):
    """An explicit ``s.__lt__(view)`` (CPython: ``NotImplemented``): left to Dynamo."""
    return x + 1, {"a"}.__lt__(d.keys()), frozenset({("a", 1)}).__lt__(d.items())


def user_set_on_the_left(x, d):
    """A user set subclass on the left of ``<=`` with a keys view: the polyfill asks ``u == view`` first, which
    Dynamo answers False on 2.9-2.11 (then ``u < view`` raises ``TypeError``, natively): computing the ``<`` for the
    set the subclass holds turned that graph break into a wrong ``False`` (first version of this change)."""
    return x + 1, PlainSet(set(d)) <= d.keys(), PlainSet({"a"}) <= d.keys(), PlainSet(set(d.items())) <= d.items()


UNMODELLED = {f.__name__: f for f in (tensor_values, user_set_operand, other_operands, explicit_set_lt,
                                      user_set_on_the_left)}


@pytest.mark.skipif(not HAS_ITEMS_VIEW, reason="2.5-2.7 fold d.items() to a tuple (not this gap)")
@pytest.mark.parametrize("name", sorted(UNMODELLED))
def test_what_it_does_not_compute_breaks_or_matches(name):
    """Never worse: a graph break or eager's result; a difference only where Dynamo gives it without the patch
    (xfail, named)."""
    assert_right_break_or_native(NAME, UNMODELLED[name], _make, (1, 2))


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.8,<2.12")
def test_tensor_values_break_rather_than_answer():
    """The comparison with a tensor value graph-breaks under the patch (Dynamo's answer was always unequal)."""
    found = eager_vs_compiled(tensor_values, _make, (1, 2))
    assert found is not None and is_break(found), found
