"""dict-items-view: ``d.items()`` is a live view of the dict, not a tuple snapshot (torch <2.8).

Each shape compiled with ``fullgraph=True`` and compared with eager on calls with different dicts (other keys,
other values): the return value (views by their type and what they show) and the inputs after the call.
Without the patch (reverted in-process) the ``WRONG_WITHOUT`` shapes are wrong on 2.5-2.7:
``test_without_the_patch_it_fails`` asserts that they are. What the patch does not model (``==``, set
operators, indexing, ``hash``) graph-breaks; what compiled without the patch still compiles.
"""

from __future__ import annotations

import collections
import collections.abc
import operator

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, compiled_outcome, eager_vs_compiled, is_break, without_patch

NAME = "dict-items-view"
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = parse_torch_version(torch.__version__).base_version in SpecifierSet("<2.8")


class Holder:
    """An object a view is stored on."""


def _try(fn, *args):
    try:
        return fn(*args)
    except (TypeError, ValueError, KeyError) as error:
        return type(error).__name__


# -- what the view answers -------------------------------------------------------------------------------------


def after_delete(x, d, o):
    v = d.items()
    del d["a"]
    return x + len(v), list(v)


def after_insert(x, d, o):
    v = d.items()
    d["w"] = x * 2
    return x + 1, list(v), len(v)


def after_value_change(x, d, o):
    v = d.items()
    d["b"] = d["b"] + 10
    return x - 1, [w for _, w in v]


def its_type(x, d, o):
    v = d.items()
    return x + 1, type(v).__name__, isinstance(v, tuple), isinstance(v, collections.abc.ItemsView)


def returned(x, d, o):
    return x + 1, d.items()


def returned_then_changed(x, d, o):
    v = d.items()
    d["z"] = 3
    return x + 1, v


def returned_with_its_dict(x, d, o):
    e = {"p": x, "q": 2}
    v = e.items()
    e["r"] = 3
    return e, v


def stored_on_object(x, d, o):
    o.v = d.items()
    d["s"] = 1
    return x + 1


def ordered_dict_items(x, d, o):
    od = collections.OrderedDict(d)
    v = od.items()
    od["q"] = 2
    del od["a"]
    return x + 1, type(v).__name__, list(v), v


def defaultdict_items(x, d, o):
    dd = collections.defaultdict(int)
    dd.update(d)
    v = dd.items()
    dd["q"] += 1
    return x + 1, type(v).__name__, list(v)


def made_in_frame(x, d, o):
    e = {"p": x, "q": 2}
    v = e.items()
    e["r"] = 3
    return x + len(v), list(v)


def tensor_values(x, d, o):
    e = {"t": x, "u": x * 2}
    v = e.items()
    e["w"] = x + 3
    return [w * 1 for _, w in v]


def for_loop(x, d, o):
    out = []
    for k, w in d.items():
        out.append((k, w))
    return x + len(out), out


def list_tuple_len(x, d, o):
    v = d.items()
    return x + len(v), list(v), tuple(v), [*v]


def to_dict(x, d, o):
    return x + 1, dict(d.items()), collections.OrderedDict(d.items())


def update_from(x, d, o):
    e = {"z": 0, "a": -1}
    e.update(d.items())
    return x + 1, e


def comprehension(x, d, o):
    return x + 1, {k: w for k, w in d.items() if k != "b"}, [k for k, _ in d.items()]


def zip_enumerate(x, d, o):
    v = d.items()
    return x + 1, list(zip(v, range(5))), list(enumerate(v)), list(zip(*v))


def iterator(x, d, o):
    it = iter(d.items())
    return x + 1, next(it), list(it)


def truth_jump(x, d, o):
    e = {}
    v = e.items()
    first = 1 if v else 0
    e["k"] = 1
    return x + first, 1 if v else 0


def contains_constant_pair(x, d, o):
    v = d.items()
    return x + 1, ("a", 1) in v, ("a", 2) in v, ("zz", 1) in v, ("a", 1.0) in v, (1, "a") in v


def contains_not_a_pair(x, d, o):
    v = d.items()
    return x + 1, "a" in v, ("a",) in v, ("a", 1, 2) in v, None in v, 1 in v


ANSWERED = {f.__name__: f for f in (
    after_delete, after_insert, after_value_change, its_type, returned, returned_then_changed,
    returned_with_its_dict, stored_on_object, ordered_dict_items, defaultdict_items, made_in_frame, tensor_values,
    for_loop, list_tuple_len, to_dict, update_from, comprehension, zip_enumerate, iterator, truth_jump,
    contains_constant_pair, contains_not_a_pair)}

#: Wrong without the patch on 2.5.1, 2.6.0 and 2.7.1 (measured; ``made_in_frame`` only on 2.7, ``after_insert``
#: of a tensor value on 2.7, ``ordered_dict_items``/``defaultdict_items`` by the view's type).
WRONG_WITHOUT = ("after_delete", "its_type", "returned", "returned_then_changed", "stored_on_object",
                 "ordered_dict_items", "tensor_values", "truth_jump")


# -- what it does not answer: a graph break, never a tuple's answer ----------------------------------------------


def index(x, d, o):
    return x + 1, _try(operator.getitem, d.items(), 0)


def equal(x, d, o):
    return x + 1, d.items() == {("a", 1), ("b", d["b"])}


def set_operator(x, d, o):
    return x + 1, _try(operator.or_, {("a", 1), "k"}, d.items())


def view_operator(x, d, o):
    return x + 1, _try(operator.sub, d.items(), {("a", 1)})


def dict_or_view(x, d, o):
    return x + 1, _try(operator.or_, {"z": 0}, d.items())


def hashed(x, d, o):
    return x + 1, _try(hash, d.items())


def unhashable_probe(x, d, o):
    return x + 1, _try(operator.contains, d.items(), (["l"], 1))


def contains_input_value(x, d, o):
    """The stored value of ``b`` is an int input (a symbolic int once Dynamo makes it dynamic)."""
    return x + 1, ("b", d["b"]) in d.items(), ("b", 2) in d.items()


def builtin_bool(x, d, o):
    return x + 1, bool(d.items())


def repr_of(x, d, o):
    return x + 1, repr(d.items())


BREAKS = {f.__name__: f for f in (index, equal, set_operator, view_operator, dict_or_view, hashed,
                                  unhashable_probe, contains_input_value, builtin_bool, repr_of)}


def make(n):
    """Other keys and values on each call: ``c<n>`` for odd ``n``, ``b`` = ``n``."""
    d = {"a": 1, "b": n}
    if n % 2:
        d[f"c{n}"] = n
    return torch.arange(3.0) * n, d, Holder()


@pytest.mark.parametrize("name", sorted(ANSWERED))
def test_view_equals_eager(name):
    """In the patch's range every answered shape equals eager; elsewhere Dynamo's own view is never worse."""
    if IN_RANGE:
        assert eager_vs_compiled(ANSWERED[name], make, (1, 2, 3)) is None
    else:
        assert_right_break_or_native(NAME, ANSWERED[name], make, (1, 2, 3))


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_what_it_does_not_model_breaks_or_matches(name):
    """``==``, set operators, indexing, ``hash``, ``bool()``, ``repr``: right or a clean graph break (outside the
    patch's range, Dynamo's own view is never worse: 2.8-2.11's ``==`` and 2.11-2.12's ``repr`` xfail, named)."""
    if IN_RANGE:
        found = eager_vs_compiled(BREAKS[name], make, (1, 2))
        assert found is None or is_break(found), found
    else:
        assert_right_break_or_native(NAME, BREAKS[name], make, (1, 2))


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.8")
@pytest.mark.parametrize("name", sorted(BREAKS) + sorted(ANSWERED))
def test_no_graph_lost(name):
    """A shape that compiles right without the patch compiles right with it (the tuple's right answers kept)."""
    fn = {**ANSWERED, **BREAKS}[name]
    with without_patch(NAME):
        native = eager_vs_compiled(fn, make, (1, 2))
    if native is not None:
        pytest.skip(f"not right without the patch: {str(native)[:100]}")
    assert eager_vs_compiled(fn, make, (1, 2)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.8")
@pytest.mark.parametrize("name", WRONG_WITHOUT)
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(ANSWERED[name], make, (1, 2, 3))
    assert found is not None and not is_break(found), "without the patch the view is a tuple snapshot"


def alive_at_a_graph_break(x, d):
    v = d.items()
    torch._dynamo.graph_break()
    d["z"] = 5
    return x + 1, list(v), type(v).__name__


def test_a_view_alive_at_a_graph_break_is_rebuilt_as_a_view():
    """Without ``fullgraph``: the view crosses a graph break as ``d.items()`` of the dict itself (a tuple
    without the patch, which misses ``z``)."""
    def inputs(n):
        return torch.ones(2) * n, {"a": 1, "b": n}

    assert compiled_outcome(alive_at_a_graph_break, inputs, (1, 2), fullgraph=False) == "ok"
    if IN_RANGE:
        with without_patch(NAME):
            assert compiled_outcome(alive_at_a_graph_break, inputs, (1, 2), fullgraph=False) == "wrong"


def pairs_input(n):
    """A dict equal to ``{"a": 1, "b": 2}`` on the first call only."""
    return torch.ones(2) * n, {"a": 1, ("b" if n == 1 else f"k{n}"): 2}


def items_compared_with_sets(x, d):
    """``d.items() == s`` / ``!=`` / ``<=`` with a set, a frozenset, a keys view and another items view, either
    side: 2.7's ``cmp_eq`` polyfill asks the view's ``__eq__`` (2.5-2.6: a keys view breaks there, see
    :func:`items_compared_by_value`)."""
    pairs = {("a", 1), ("b", 2)}
    return (x + 1, d.items() == pairs, pairs != d.items(), d.items() == frozenset(pairs),
            d.items() <= pairs | {("z", 0)}, d.items() == {"a": 1, "b": 2}.items(), d.items() != d.keys())


@pytest.mark.skipif(parse_torch_version(torch.__version__).base_version not in SpecifierSet(">=2.7,<2.8"),
                    reason="2.7 only: its polyfill reaches the view")
def test_items_view_compared_with_sets():
    assert eager_vs_compiled(items_compared_with_sets, pairs_input, (1, 2, 3)) is None


def items_compared_by_value(x, d):
    """The six comparisons with a set, a frozenset, another items view and a list, either side, read again after
    the dict changed: on 2.5-2.6 ``BuiltinVariable`` constant-folds them over a copy of the view (the only path a
    (view, set) pair has there); without the patch the tuple snapshot is unequal to every set."""
    pairs = {("a", 1), ("b", 2)}
    v = d.items()
    first = (v == pairs, pairs != v, v == frozenset(pairs), v <= pairs | {("z", 0)}, v < pairs, pairs >= v,
             v > {("a", 1)}, v == {"a": 1, "b": 2}.items(), v != [("a", 1), ("b", 2)])
    d["c"] = 3
    return x + 1, first, v == pairs, v >= pairs, v != pairs


def items_equal_to_a_set(x, d):
    pairs = {("a", 1), ("b", 2)}
    return x + 1, d.items() == pairs, pairs != d.items()


@pytest.mark.skipif(parse_torch_version(torch.__version__).base_version not in SpecifierSet("<2.7"),
                    reason="2.5-2.6: the constant fold is the view's only path (2.7: its cmp_* polyfills)")
def test_items_view_compared_by_value():
    assert eager_vs_compiled(items_compared_by_value, pairs_input, (1, 2, 3)) is None
    with without_patch(NAME):
        found = eager_vs_compiled(items_equal_to_a_set, pairs_input, (1, 2, 3))
    assert found is not None and not is_break(found), "without the patch the snapshot is unequal to every set"
