"""instance-dict-writes: a write through ``obj.__dict__`` under a property's name (torch <2.12).

CPython writes the instance dict and leaves the property alone; a later ``obj.p`` runs the property's getter.
Before 2.8 Dynamo replays such a write as ``obj.p = v`` (the setter again: ``RecursionError`` for a setter
that writes ``self.__dict__['p']``, or its effect twice) and answers ``obj.p`` from its record; 2.8-2.11
replay it as a ``__dict__`` write. The patch replays it as a ``__dict__`` write on 2.5-2.7 too
(``SideEffects.codegen_update_mutated``: the object's whole record, in order) and traces the getter for a
read. Upstream: ``DictTests::test_property_backed_by_dunder_dict_mutated`` / ``_pending_side_effects``.

Each program is compiled with ``fullgraph=True`` and compared with eager on three calls with different
inputs (return value, the objects' attributes and their key order); the shapes the patch takes must
compile on every release <2.12 (asserted); the shapes it refuses must be right or a clean graph break.
Without the patch (reverted in-process) the upstream shapes are not right on 2.5-2.7 (asserted).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.cases.gap_instance_dict import Counted  # a getter that is not the value, a setter that counts
from tdcompat.versions import parse_torch_version

from conftest import applied, assert_right_break_or_native, eager_vs_compiled, without_patch

NAME = "instance-dict-writes"
RELEASE = parse_torch_version(torch.__version__).release[:2]


class CountedSub(Counted):
    pass


class Plain:
    """Upstream's shape: a getter and setter that read and write ``__dict__['x']`` as they are."""

    def __init__(self, x):
        self.__dict__["x"] = x

    @property
    def x(self):
        return self.__dict__["x"]

    @x.setter
    def x(self, value):
        self.__dict__["x"] = value


def setter_then_read(o, t):
    a = o.v
    o.v = a + t
    return a, o.v, o.sets, o.__dict__["v"], list(o.__dict__)


def dict_write_then_read(o, t):
    o.__dict__["v"] = t * 2
    o.w = t
    return o.v, o.__dict__["v"], list(o.__dict__)


def setter_after_dict_write(o, t):
    o.__dict__["v"] = t + 1
    o.v = o.v + t
    return o.v, o.sets, list(o.__dict__)


def update_and_setdefault(o, t):
    o.__dict__.update(v=t - 1, w=3)
    o.__dict__.setdefault("v", t * 100)
    return o.v, o.w, list(o.__dict__)


def through_vars(o, t):
    vars(o)["v"] = t * 3
    return o.v, vars(o)["v"]


def with_other_stores_and_a_deletion(o, t):
    o.extra = t
    o.__dict__["v"] = t + 5
    del o.__dict__["sets"]
    o.more = 1
    return o.v, hasattr(o, "sets"), list(o.__dict__)


def written_twice(o, t):
    o.__dict__["v"] = t
    o.__dict__["v"] = o.__dict__["v"] + 1
    return o.v


def upstream_mutated(o, t):
    a = o.x
    o.x = a + 1
    return o.x, t + 1


def upstream_pending(o, t):
    a = o.__dict__["x"]
    o.__dict__["x"] = a + 1
    return o.__dict__["x"], t + 1


INPUT_SHAPES = (setter_then_read, dict_write_then_read, setter_after_dict_write, update_and_setdefault,
                through_vars, with_other_stores_and_a_deletion, written_twice)


def _counted(cls):
    return lambda n: (cls(torch.full((2,), float(n))), torch.arange(2.0) + n)


def _plain(n):
    return Plain(torch.full((2,), float(n))), torch.arange(2.0) * n


@pytest.mark.parametrize("cls", (Counted, CountedSub), ids=lambda c: c.__name__)
@pytest.mark.parametrize("fn", INPUT_SHAPES, ids=lambda f: f.__name__)
def test_input_object(fn, cls):
    """Every shape compiles where the patch applies (a property's name written through ``__dict__``)."""
    found = eager_vs_compiled(fn, _counted(cls), inputs=(1, 2, 3))
    if applied(NAME):
        assert found is None, found
    else:
        assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found


def made_in_frame(t):
    o = Counted(t)
    o.__dict__["v"] = t + 1
    o.v = o.v + t
    o.w = 2
    return o.v, o.sets, o


class Bare(Counted):
    def __init__(self):
        self.sets = 0


def made_and_returned_only(t):
    o = Bare()
    o.__dict__["v"] = t
    o.z = 1
    return o


@pytest.mark.parametrize("fn", (made_in_frame, made_and_returned_only), ids=lambda f: f.__name__)
def test_object_made_in_the_frame(fn):
    found = eager_vs_compiled(fn, lambda n: (torch.arange(2.0) + n,), inputs=(1, 2, 3))
    if applied(NAME):
        assert found is None, found
        compiled = torch.compile(fn, backend="eager", fullgraph=True)
        for n in (4, 5):  # the returned object's keys in eager's order (the snapshot sorts them)
            t = torch.arange(2.0) + n
            made = [r for r in (fn(t), compiled(t)) for r in (r if isinstance(r, tuple) else (r,))
                    if isinstance(r, Counted)]
            assert [list(vars(o)) for o in made[:1]] == [list(vars(o)) for o in made[1:]]
    else:
        assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found


@pytest.mark.parametrize("fn", (upstream_mutated, upstream_pending), ids=lambda f: f.__name__)
def test_upstream_shapes(fn):
    found = eager_vs_compiled(fn, _plain, inputs=(1, 2, 3))
    assert found is None, found


@pytest.mark.skipif(RELEASE >= (2, 8), reason="2.8 on: Dynamo replays these as __dict__ writes itself")
@pytest.mark.parametrize("fn", (upstream_mutated, upstream_pending), ids=lambda f: f.__name__)
def test_upstream_shapes_fail_without_the_patch_before_2_8(fn):
    if not applied(NAME):
        pytest.skip(f"{NAME} is not applied")
    with without_patch(NAME):
        found = eager_vs_compiled(fn, _plain, inputs=(1, 2, 3))
    assert found is not None


def test_a_broken_replay_is_not_reached_without_property_setattr():
    """The replay takes a record entry under a property's name for a ``__dict__`` write only while
    ``property-setattr`` traces ``obj.p = v`` through the setter (without it Dynamo records ``p`` itself):
    with it reverted, a shadowed ``__dict__`` write graph-breaks again."""
    if not applied("property-setattr") or not applied(NAME) or RELEASE >= (2, 8):
        pytest.skip("only where the replay is this patch's (2.5-2.7)")
    with without_patch("property-setattr"):
        if not applied(NAME):
            pytest.skip(f"{NAME} needs property-setattr here")
        found = eager_vs_compiled(setter_after_dict_write, _counted(Counted), inputs=(1, 2))
    assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found


# -- never worse: what the replay does not take (other descriptors, property subclasses) --------------
class MyProperty(property):
    pass


class SubProperty:
    def __init__(self, x):
        self.__dict__["v"] = x

    @MyProperty
    def v(self):
        return self.__dict__["v"] * 10

    @v.setter
    def v(self, value):
        self.__dict__["v"] = value


class Setter:
    """A data descriptor that only takes stores (``__set__`` without ``__get__``)."""

    def __set__(self, obj, value):
        obj.__dict__["d"] = value * 2


class WithSetter:
    d = Setter()

    def __init__(self, x):
        self.__dict__["d"] = x


class SlotBase:
    __slots__ = ("v",)


class Slotted(SlotBase):
    def __init__(self, x):
        self.v = x
        self.__dict__["v"] = x + 1


def write_v_and_read(o, t):
    o.__dict__["v"] = t
    return o.v, o.__dict__["v"], list(o.__dict__)


def write_d_and_read(o, t):
    o.__dict__["d"] = t
    o.d = t + 1
    return o.__dict__["d"], o.d


@pytest.mark.parametrize("case", (
    ("property_subclass", write_v_and_read, lambda n: (SubProperty(torch.ones(2) * n), torch.arange(2.0) + n)),
    ("setter_only_descriptor", write_d_and_read, lambda n: (WithSetter(torch.ones(2) * n), torch.arange(2.0) + n)),
    ("slot", write_v_and_read, lambda n: (Slotted(torch.ones(2) * n), torch.arange(2.0) + n)),
), ids=lambda c: c[0])
def test_other_descriptors_are_right_or_break(case):
    _name, fn, make = case
    assert_right_break_or_native(NAME, fn, make, inputs=(1, 2, 3))
