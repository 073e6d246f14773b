"""set-view-operator: a set, frozenset, dict or keys view with a dict view under ``|``, ``&``, ``-``, ``^`` and in
place, against eager (torch >=2.8,<2.13).

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

from conftest import assert_right_break_or_native, eager_vs_compiled, without_patch

NAME = "set-view-operator"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
RELEASE = parse_torch_version(torch.__version__).base_version
IN_RANGE = RELEASE in SpecifierSet(">=2.9,<2.13")


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


# -- 2.8-2.12: an items view on the right of a set, a dict on the left of a view, a keys view with an items view ----


def set_or_items(x, d):
    """``s | d.items()`` and ``s |= d.items()``: a new set of the set's elements and the pairs (2.8 crashes:
    ``BuiltinVariable.call_or_`` sends them to the dict ``__or__``); ``fs | d.items()`` is a ``set``."""
    s = {("a", 1), "z"}
    kept = s
    u = s | d.items()
    s |= d.items()
    fu = frozenset({"z"}) | d.items()
    return (x + len(u), sorted(map(repr, u)), sorted(map(repr, s)), sorted(map(repr, kept)), s is kept,
            type(fu).__name__, sorted(map(repr, fu)))


def dict_or_view(x, d):
    """``e | d.keys()`` / ``d | e.items()`` with a plain dict on the left: ``dict.__or__`` gives NotImplemented,
    the view's reflected ``|`` builds ``set(e)`` updated with the view (only the dict's keys count: a tensor
    value is fine). 2.8 crashes; 2.9-2.12 raise ``TypeError`` in the trace, taken by this ``except``."""
    e = {"a": x, "q": 2}
    try:
        u = e | d.keys()
        v = d | {"a": 1, "r": 3}.items()
    except TypeError:
        return x - 1, "TypeError"
    return x + len(u), sorted(u), sorted(map(repr, v)), sorted(e), sorted(d)


def keys_or_items(x, d):
    """``d.keys() | d.items()``: a set of the keys and the pairs (2.8 breaks, 2.9-2.12 crash the compile:
    ``DictKeysVariable`` reads the operand's ``set_items``)."""
    k = d.keys()
    u = k | d.items()
    return x + len(u), sorted(map(repr, u))


def keys_ops_items(x, d):
    """``&``, ``-``, ``^`` and ``|=`` of a keys view with an items view (2.9-2.12 crash the compile)."""
    k = d.keys()
    pairs = {"a": "a", ("b", 2): 0}.keys()
    out = [sorted(map(repr, k & d.items())), sorted(map(repr, k - d.items())), sorted(map(repr, k ^ d.items())),
           sorted(map(repr, pairs & d.items()))]
    k |= d.items()
    return x * 2, out, type(k).__name__, sorted(map(repr, k))


def keys_ops_iterables(x, d):
    """A keys view with a dict, a list or a tuple on the right (CPython's view operators take any iterable;
    2.9-2.12 crash the compile: ``AttributeError: 'ConstDictVariable' object has no attribute 'set_items'``)."""
    k = {"a": 0, "q": 1, "z": 2}.keys()
    return (x + 1, sorted(k - d), sorted(k & d), sorted(k | ["a", "w"]), sorted(k ^ ("q", "v")),
            sorted(d.keys() - d))


#: Where each shape compiles (with tdcompat): 2.5-2.7 graph-break on all of them; 2.8 on a keys view with
#: ``&``/``-``/``^`` ("Failed to trace builtin operator", with and without tdcompat: not this gap there).
COMPILES_ON = {"set_or_items": ">=2.8", "dict_or_view": ">=2.8", "keys_or_items": ">=2.8", "keys_ops_items": ">=2.9",
               "keys_ops_iterables": ">=2.9"}
VIEW_SHAPES = {f.__name__: f for f in (set_or_items, dict_or_view, keys_or_items, keys_ops_items, keys_ops_iterables)}


@pytest.mark.parametrize("name", sorted(VIEW_SHAPES))
def test_view_operands_equal_eager(name):
    if RELEASE not in SpecifierSet(COMPILES_ON[name]):
        pytest.skip(f"{name} graph-breaks before {COMPILES_ON[name]} (not this gap)")
    assert eager_vs_compiled(VIEW_SHAPES[name], _make, (1, 2, 3)) is None


#: Where each shape fails without the patch: 2.8 crashes (``keys | items``: breaks); 2.9-2.12 raise a
#: ``TypeError`` in the trace (a break, or the ``except`` taken); 2.9-2.11 crash on a keys view with an items
#: view (2.12 computes that right), 2.9-2.12 on a keys view with a dict, a list or a tuple.
FAILS_WITHOUT = {"set_or_items": ">=2.8,<2.13", "dict_or_view": ">=2.8,<2.13", "keys_or_items": ">=2.8,<2.12",
                 "keys_ops_items": ">=2.9,<2.12", "keys_ops_iterables": ">=2.9,<2.13"}


@pytest.mark.parametrize("name", sorted(FAILS_WITHOUT))
def test_without_the_patch_view_operands_fail(name):
    """Each shape is wrong, a crash or a break without the patch on the releases ``FAILS_WITHOUT`` names."""
    if RELEASE not in SpecifierSet(FAILS_WITHOUT[name]):
        pytest.skip(f"{name} fails without the patch on {FAILS_WITHOUT[name]} only")
    with without_patch(NAME):
        found = eager_vs_compiled(VIEW_SHAPES[name], _make, (1, 2))
    assert found is not None, "without the patch this shape differs from eager (or breaks) on 2.8-2.12"


def explicit_dunders(x, d):
    """``s.__or__(d.keys())`` is ``NotImplemented`` in CPython (``set.__or__`` takes only sets), and
    ``operator.or_(s, d.items())`` the reflected view operator's set: the tracker's method cannot tell these
    from ``s | view``, so they must not get the operator's answer."""
    import operator

    return (x + 1, {"a"}.__or__(d.keys()), {"a"}.__ior__(d.items()), frozenset({"a"}).__sub__(d.keys()),
            sorted(map(repr, operator.or_({"a"}, d.items()))), sorted(operator.or_(d, d.keys())))


def tensor_values_with_dict(x, d):
    """``d | e.items()`` where a value is a tensor: not computable by value."""
    e = {"a": x, "b": 1}
    try:
        u = d | e.items()
    except TypeError:
        return x - 1, "TypeError"
    return x + 1, len(u)


@pytest.mark.parametrize("fn", [explicit_dunders, tensor_values_with_dict, tensor_values_in_place],
                         ids=lambda f: f.__name__)
def test_calls_it_cannot_compute_break_or_match(fn):
    """A graph break or eager's result, never a difference the patch made, on every release (measured native
    difference: 2.13.0 ``{"a"}.__ior__(d.items())`` is a set: it xfails, named; 2.15.0's ``d | e.items()``
    reused the first call's size until set-dict-operand-guard guarded ``d``'s keys)."""
    assert_right_break_or_native(NAME, fn, _make)


def operator_functions(x, d):
    """``operator.and_(s, d.keys())`` & co.: the operator's semantics (the view's reflected operator, a new set),
    computed; only an explicit ``s.__and__(view)`` (``NotImplemented`` in CPython) breaks. Breaking these made
    upstream's ``test_cross_type_set_binop_*`` tests fail on 2.12.1, where they pass natively."""
    import operator

    s = {"a", "z"}
    return (x + 1, sorted(operator.and_(s, d.keys())), sorted(operator.or_(s, d.keys())),
            sorted(operator.isub({"a", "q"}, d.keys())), sorted(map(repr, operator.xor({("a", 1)}, d.items()))),
            sorted(s))


@pytest.mark.skipif(RELEASE not in SpecifierSet(">=2.9,<2.13"), reason="set-view-operator answers these on 2.9-2.12")
def test_operator_functions_are_computed():
    assert eager_vs_compiled(operator_functions, _make, (1, 2, 3)) is None
