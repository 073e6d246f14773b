"""dict-subclass-fromkeys: ``Sub.fromkeys(keys, v)`` of a dict subclass, compared with eager (2.7-2.15).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the result's type,
items and attributes, what the class recorded, the inputs after the call. Classes: plain ``dict``,
``OrderedDict`` and ``defaultdict`` subclasses, one with its own ``__setitem__`` (``dict`` and ``OrderedDict``),
one with its own ``__init__``, one whose ``__setitem__`` records the keys, one with another metaclass. With the
patch each shape is right or a clean graph break; without it (reverted in-process) the result is a plain
``dict`` on 2.13+ (``test_without_the_patch_it_is_wrong`` asserts that it is) and a graph break on 2.7-2.12
(``test_without_the_patch_it_breaks``). A ``fromkeys`` assigned on the class between calls and deleted again
recompiles (``test_replaced_then_deleted``: without the patch 2.13-2.15 keep the first call's result).
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "dict-subclass-fromkeys"
_VERSION = parse_torch_version(torch.__version__).base_version
IN_RANGE = _VERSION in SpecifierSet(">=2.7")
#: 2.7-2.12 read the classmethod through the class only: ``o.fromkeys`` of an instance is still a skipped builtin
BY_NAME = _VERSION in SpecifierSet(">=2.7,<2.13")
#: 2.7-2.8 cannot raise TypeError inside the trace (``dict.fromkeys(d, value=5)``: a graph break)
RAISES_TYPEERROR = _VERSION in SpecifierSet(">=2.9")


class Plain(dict):
    pass


class PlainOrdered(collections.OrderedDict):
    pass


class PlainDefault(collections.defaultdict):
    pass


class Tenfold(dict):
    """Stores ints times ten: ``_PyDict_FromKeys`` on a subclass stores through it."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value * 10 if type(value) is int else value)


class TenfoldOrdered(collections.OrderedDict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value * 10 if type(value) is int else value)


class Tagged(dict):
    """Its own ``__init__`` (``cls()`` runs it) sets an attribute."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tag = "made"


class Recording(dict):
    """Records each key it is given (a class-level list, read back by the shapes)."""

    seen: list = []

    def __setitem__(self, key, value):
        Recording.seen.append(key)
        super().__setitem__(key, value)


class _Meta(type):
    pass


class WithMeta(dict, metaclass=_Meta):
    pass


CLS = [Plain]


def _result(x, r):
    return x, type(r).__name__, list(r.items()), getattr(r, "tag", None), list(Recording.seen)


def from_input_keys(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    return _result(x + 1, CLS[0].fromkeys(d, len(d)))


def from_list_no_value(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    return _result(x - 1, CLS[0].fromkeys(list(d)))


def from_generator(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    return _result(x * 2, CLS[0].fromkeys((k + "!" for k in d), 3))


def from_string(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    return _result(x + len(d), CLS[0].fromkeys("ba", len(d)))


def tensor_value(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    r = CLS[0].fromkeys(d, x)
    return _result(x + 2, r)


def changed_after(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    r = CLS[0].fromkeys(d, 0)
    r["z"] = len(r)
    r.pop(next(iter(d)))
    return _result(x + 3, r)


def through_an_instance(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    return _result(x - 2, CLS[0]().fromkeys(d, 1))


def through_type_of(x, d):
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    o = CLS[0]()
    return _result(x - 3, type(o).fromkeys(d, 2))


def value_keyword(x, d):
    """``value=`` is ``OrderedDict.fromkeys``'s only (``dict.fromkeys`` raises TypeError)."""
    Recording.seen.clear()  # eager and compiled share the class: each call starts empty
    try:
        r = CLS[0].fromkeys(d, value=5)
    except TypeError:
        return x + 4, "TypeError", list(Recording.seen)
    return _result(x + 5, r)


SHAPES = {f.__name__: f for f in (from_input_keys, from_list_no_value, from_generator, from_string, tensor_value,
                                  changed_after, through_an_instance, through_type_of, value_keyword)}
CLASSES = (Plain, PlainOrdered, PlainDefault, Tenfold, TenfoldOrdered, Tagged, Recording, WithMeta)


def _make(n):
    return torch.arange(3.0) * n, {"a": n, "b": n + 1, **({"c": 0} if n > 1 else {})}


@pytest.fixture
def cls(request):
    CLS[0] = request.param
    Recording.seen.clear()
    yield request.param
    CLS[0] = Plain
    Recording.seen.clear()


@pytest.mark.parametrize("cls", CLASSES, indirect=True, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_right_or_a_break(name, cls):
    assert_right_break_or_native(NAME, SHAPES[name], _make, (1, 2))


@pytest.mark.skipif(not IN_RANGE, reason="2.5-2.6 graph-break on the classmethod (a skipped builtin)")
@pytest.mark.parametrize("cls", (Plain, PlainOrdered, Tenfold, TenfoldOrdered, Tagged, Recording), indirect=True,
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_compiles_right(name, cls):
    if BY_NAME and name == "through_an_instance":
        pytest.skip("2.7-2.12: an instance's fromkeys is a skipped builtin (a graph break)")
    if not RAISES_TYPEERROR and name == "value_keyword" and not issubclass(cls, collections.OrderedDict):
        pytest.skip("2.7-2.8: dict.fromkeys(d, value=5) raises TypeError, which the trace cannot raise (a break)")
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2)) is None


def bad_calls(x, d):
    """Calls CPython refuses with ``TypeError``: no iterable, an int as the iterable, a third argument."""
    caught = []
    for call in (lambda: CLS[0].fromkeys(), lambda: CLS[0].fromkeys(1, 2), lambda: CLS[0].fromkeys(d, 1, 2)):
        try:
            call()
        except TypeError:
            caught.append(len(caught))
    return x + len(caught), caught


@pytest.mark.skipif(not RAISES_TYPEERROR, reason="2.5-2.8 cannot raise TypeError inside the trace")
@pytest.mark.parametrize("cls", (Plain, PlainOrdered, Tenfold), indirect=True, ids=lambda c: c.__name__)
def test_calls_cpython_refuses_raise_type_error(cls):
    assert eager_vs_compiled(bad_calls, _make, (1, 2)) is None


@pytest.mark.parametrize("cls", (Plain, PlainOrdered, Tenfold), indirect=True, ids=lambda c: c.__name__)
def test_calls_cpython_refuses_right_or_a_break(cls):
    found = eager_vs_compiled(bad_calls, _make, (1, 2))
    assert found is None or is_break(found), found


def read_only(x, d):
    """The classmethod read, not called: its name, callable; two reads are not the same object."""
    m = CLS[0].fromkeys
    return x + 1, m.__name__, callable(m), CLS[0].fromkeys is CLS[0].fromkeys


@pytest.mark.parametrize("cls", (Plain, PlainOrdered, Tenfold), indirect=True, ids=lambda c: c.__name__)
def test_read_only_right_or_a_break(cls):
    assert_right_break_or_native(NAME, read_only, _make, (1, 2))


class Swapped(dict):
    """Its ``fromkeys`` is replaced between calls, then deleted (the builtin again)."""


def swapped(x, d):
    return x + 1, Swapped.fromkeys(d, 1)


@pytest.mark.parametrize("fullgraph", (False, True), ids=("graphs", "fullgraph"))
def test_replaced_then_deleted(fullgraph):
    """Eager and compiled side by side over three calls: the builtin, a classmethod assigned on the class, the
    builtin again after ``del``. Each read is guarded (the builtin by type, ``__self__`` and ``__name__``, the
    class's own by its function), so each change recompiles."""
    from conftest import same

    if fullgraph and not IN_RANGE:
        pytest.skip("2.5-2.6 graph-break on the classmethod")
    torch._dynamo.reset()
    compiled = torch.compile(swapped, backend="eager", fullgraph=fullgraph)
    try:
        for step in range(3):
            if step == 1:
                Swapped.fromkeys = classmethod(lambda cls, keys, value=None: {"own": len(keys)})
            if step == 2:
                del Swapped.fromkeys
            expected, got = swapped(*_make(step + 2)), compiled(*_make(step + 2))  # the same keys each call
            assert same(expected, got), (step, expected, got)
    finally:
        if "fromkeys" in vars(Swapped):
            del Swapped.fromkeys


@pytest.mark.skipif(_VERSION not in SpecifierSet(">=2.13"), reason="2.5-2.12: a graph break at the read natively")
def test_replaced_without_the_patch_is_wrong():
    """2.13-2.15 guard nothing about ``Sub.fromkeys``: the replaced classmethod is not called."""
    with without_patch(NAME):
        with pytest.raises(AssertionError):
            test_replaced_then_deleted(False)


@pytest.mark.skipif(not IN_RANGE, reason="2.5-2.6 graph-break on the classmethod (a skipped builtin)")
@pytest.mark.parametrize("cls", (WithMeta,), indirect=True, ids=lambda c: c.__name__)
def test_another_metaclass_breaks(cls):
    assert is_break(eager_vs_compiled(from_input_keys, _make, (1, 2)))


class OwnFromKeys(dict):
    """Its own ``fromkeys`` classmethod: Dynamo inlines it (the patch never sees it)."""

    @classmethod
    def fromkeys(cls, keys, value=None):
        r = cls()
        for k in keys:
            r[k] = "own"
        return r


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.7")
@pytest.mark.parametrize("cls", (OwnFromKeys,), indirect=True, ids=lambda c: c.__name__)
def test_a_class_with_its_own_fromkeys_is_right_or_a_break(cls):
    found = eager_vs_compiled(from_input_keys, _make, (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.skipif(not BY_NAME, reason="2.7-2.12 only (2.13+: wrong, below)")
@pytest.mark.parametrize("cls", (Plain, PlainOrdered, Tenfold), indirect=True, ids=lambda c: c.__name__)
def test_without_the_patch_it_breaks(cls):
    """2.7-2.12: the classmethod is read as a skipped builtin (a graph break under ``fullgraph``)."""
    with without_patch(NAME):
        found = eager_vs_compiled(from_input_keys, _make, (1, 2))
    assert is_break(found), f"no graph break without the patch: {found!r}"


@pytest.mark.skipif(_VERSION not in SpecifierSet(">=2.13"), reason="2.13-2.15 only (2.7-2.12: a break, above)")
@pytest.mark.parametrize("cls", (Plain, PlainOrdered, Tenfold), indirect=True, ids=lambda c: c.__name__)
def test_without_the_patch_it_is_wrong(cls):
    """2.13+: a plain ``dict`` (and ``Tenfold``'s values not multiplied)."""
    with without_patch(NAME):
        found = eager_vs_compiled(from_input_keys, _make, (1, 2))
    assert isinstance(found, str), f"right without the patch: {found!r}"
