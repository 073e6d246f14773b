"""ordered-dict-move-to-end: ``od.move_to_end(k, last)`` compared with eager (2.7-2.15).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the order the frame
reads, the dict passed in after the call (``ordered-dict-reorder-replay`` replays the new order). ``last``
positional or by keyword, constants of every builtin kind (``False``, ``0``, ``[]``, ``"x"``, ``None``), a
value the frame computes from its inputs, an object with its own ``__bool__``, a missing key, an
``OrderedDict`` passed in, made in the frame, and a subclass. With the patch each shape is right or a clean
graph break (an unknown truth); without it (reverted in-process) 2.7-2.8 crash on every ``last`` and 2.9+
ignore an object's ``__bool__``: ``test_without_the_patch_it_fails`` asserts that they do.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "ordered-dict-move-to-end"
RELEASE = parse_torch_version(torch.__version__).base_version
IN_RANGE = RELEASE in SpecifierSet(">=2.7")
CRASHES = RELEASE in SpecifierSet(">=2.7,<2.9")


class Sub(collections.OrderedDict):
    pass


class Falsy:
    """Its own ``__bool__``: CPython's ``last`` runs it."""

    def __bool__(self):
        return False


KIND = [collections.OrderedDict]


def front_keyword(x, od):
    od.move_to_end("b", last=False)
    return x + 1, list(od)


def front_positional(x, od):
    od.move_to_end("c", False)
    od["z"] = len(od)
    return x - 1, list(od.items())


def end_keyword(x, od):
    od.move_to_end("a", last=True)
    return x * 2, list(od)


def falsy_constants(x, od):
    od.move_to_end("c", 0)
    od.move_to_end("b", [])
    od.move_to_end("a", "")
    od.move_to_end("c", None)
    return x + 2, list(od)


def truthy_constants(x, od):
    od.move_to_end("a", 1)
    od.move_to_end("b", (0,))
    return x + 3, list(od)


def computed(x, od):
    od.move_to_end("c", last=len(od) > 3)
    return x + 4, list(od)


def missing_key(x, od):
    try:
        od.move_to_end("q", last=False)
    except KeyError:
        return x - 2, list(od), "KeyError"
    return x, list(od), None


def missing_key_one_argument(x, od):
    try:
        od.move_to_end("q")
    except KeyError:
        return x - 3, list(od), "KeyError"
    return x, list(od), None


def made_in_frame(x, od):
    o = KIND[0](od)
    o.move_to_end("c", last=False)
    o["y"] = 1
    o.move_to_end("a", False)
    return x + 5, list(o.items())


def own_bool(x, od):
    od.move_to_end("c", Falsy())
    return x + 6, list(od)


def own_bool_keyword(x, od):
    od.move_to_end("c", last=Falsy())
    return x + 7, list(od)


def through_the_class(x, od):
    collections.OrderedDict.move_to_end(od, "b", False)
    return x + 8, list(od)


SHAPES = {f.__name__: f for f in (front_keyword, front_positional, end_keyword, falsy_constants, truthy_constants,
                                  computed, missing_key, missing_key_one_argument, made_in_frame, own_bool,
                                  own_bool_keyword, through_the_class)}
#: Shapes whose last= truth runs user code: right or a clean break.
UNKNOWN_TRUTH = {"own_bool", "own_bool_keyword"}


def _make(n):
    od = KIND[0](a=1, b=2, c=3)
    if n > 1:
        od["d"] = 4
        od.move_to_end("a", last=False)
    return torch.arange(3.0) * n, od


@pytest.fixture
def kind(request):
    KIND[0] = request.param
    yield request.param
    KIND[0] = collections.OrderedDict


@pytest.mark.parametrize("kind", (collections.OrderedDict, Sub), indirect=True, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_right_or_a_break(name, kind):
    assert_right_break_or_native(NAME, SHAPES[name], _make, (1, 2))


@pytest.mark.skipif(not IN_RANGE, reason="2.5-2.6 graph-break on move_to_end")
@pytest.mark.parametrize("kind", (collections.OrderedDict, Sub), indirect=True, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(set(SHAPES) - UNKNOWN_TRUTH - {"through_the_class"}))
def test_compiles_right(name, kind):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2)) is None


@pytest.mark.skipif(not IN_RANGE, reason="2.5-2.6 graph-break on move_to_end")
@pytest.mark.parametrize("name", sorted(UNKNOWN_TRUTH))
def test_a_last_whose_truth_runs_user_code_breaks(name):
    assert is_break(eager_vs_compiled(SHAPES[name], _make, (1, 2)))


def test_a_key_that_is_no_constant_with_last_false_is_right_or_a_break():
    def fn(x, od):
        key = od["k"]
        od[key] = 1
        od.move_to_end(key, False)
        return x + 1, [type(k).__name__ for k in od]

    found = eager_vs_compiled(fn, lambda n: (torch.ones(2) * n, collections.OrderedDict(a=1, k=(n, "t"))), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.7")
def test_without_the_patch_it_fails():
    """2.7-2.8: ``last=False`` crashes the compile; 2.9+: ``last=Falsy()`` is read as True (silently)."""
    shape = front_keyword if CRASHES else own_bool
    with without_patch(NAME):
        found = eager_vs_compiled(shape, _make, (1, 2))
    if CRASHES:
        assert isinstance(found, Exception) and not is_break(found), found
    else:
        assert found is not None and not is_break(found), found


# A mapping with no move_to_end of its own: CPython raises AttributeError. 2.7-2.8's ConstDictVariable branch
# moves the key anyway (a plain dict, a defaultdict, passed in or made in the frame), 2.9-2.12 crash; with the
# patch each is a clean graph break there (and a break natively elsewhere), so eager raises it after the break.
STORAGE_BRANCH = RELEASE in SpecifierSet(">=2.7,<2.13")


class PlainSub(dict):
    """A dict subclass without move_to_end."""


def no_method_end(x, d):
    d.move_to_end("a")
    return x + 1, list(d)


def no_method_front(x, d):
    d.move_to_end("b", last=False)
    return x - 1, list(d)


def no_method_caught(x, d):
    out = []
    try:
        d.move_to_end("a")
        out.append("moved")
    except AttributeError:
        out.append("AttributeError")
    d["z"] = len(d)
    return x * 2, out, list(d)


def no_method_in_frame(x, d):
    e = {"a": d["a"], "b": 2}
    try:
        e.move_to_end("a")
    except AttributeError:
        e["c"] = 3
    return x + 3, list(e)


NO_METHOD = {f.__name__: f for f in (no_method_end, no_method_front, no_method_caught, no_method_in_frame)}
NO_METHOD_KINDS = {"dict": dict, "defaultdict": lambda **kw: collections.defaultdict(int, **kw), "PlainSub": PlainSub}


def _make_no_method(kind):
    def make(n):
        return torch.arange(3.0) * n, NO_METHOD_KINDS[kind](a=n, b=2, c=3)

    return make


@pytest.mark.parametrize("kind", sorted(NO_METHOD_KINDS))
@pytest.mark.parametrize("name", ["no_method_caught", "no_method_in_frame"])  # the frame catches the error
def test_a_mapping_without_move_to_end_is_right_or_a_break(name, kind):
    found = eager_vs_compiled(NO_METHOD[name], _make_no_method(kind), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("kind", sorted(NO_METHOD_KINDS))
@pytest.mark.parametrize("name", sorted(NO_METHOD))
def test_a_mapping_without_move_to_end_is_right_without_fullgraph(name, kind):
    """After the break eager raises the AttributeError the frame catches (or lets out, as eager does)."""
    fn, make = NO_METHOD[name], _make_no_method(kind)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    for n in (1, 2):
        try:
            expected = repr(fn(*make(n)))
        except AttributeError as error:
            expected = repr(error)
        try:
            got = repr(compiled(*make(n)))
        except AttributeError as error:
            got = repr(error)
        assert got == expected


@pytest.mark.skipif(not STORAGE_BRANCH, reason="2.7-2.12: Dynamo's dict branch takes move_to_end of any dict")
@pytest.mark.parametrize("kind", ["dict", "defaultdict"])
def test_without_the_patch_a_mapping_without_move_to_end_is_wrong_or_crashes(kind):
    """2.7-2.8: the key moves (no AttributeError); 2.9-2.12: the compile crashes."""
    with without_patch(NAME):
        found = eager_vs_compiled(no_method_caught, _make_no_method(kind), (1, 2))
    assert found is not None and not is_break(found), found
