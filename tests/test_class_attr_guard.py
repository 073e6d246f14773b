"""class-attr-guard: literal and enum class attributes are guarded (torch <2.12).

Each test compiles with ``fullgraph=True``, changes the class between calls and compares
with eager; without the patch (reverted in-process) the same shape is asserted to be
wrong or a graph break on 2.5-2.11, where the patch applies.
"""

from __future__ import annotations

import enum

import pytest
import torch
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, without_patch

NAME = "class-attr-guard"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 12)


class Mode(enum.Enum):
    A = 1
    B = 2


class Base:
    scale = 2
    tag = "a"
    mode = Mode.A
    dims = (1, 2)
    flag = True
    items: list = []


class Sub(Base):
    pass


class Meta(type):
    @property
    def scale(cls):  # a data descriptor on the metaclass wins over the class dict
        return cls._hidden * 10


class WithMeta(metaclass=Meta):
    scale = 1
    _hidden = 1


class Holder(Base):
    def __init__(self, x):
        self.x = x


def _reset():
    Base.scale, Base.tag, Base.mode, Base.dims, Base.flag, Base.items = 2, "a", Mode.A, (1, 2), True, ["i"]
    for name in ("scale", "tag"):
        if name in Sub.__dict__:
            delattr(Sub, name)
    WithMeta._hidden = 1


def _step(n):
    """What changes before call ``n`` (n = 0 leaves the defaults)."""
    _reset()
    if n:
        Base.scale, Base.tag, Base.mode, Base.dims, Base.flag = 5, "b", Mode.B, (3,), False
        Sub.tag = "own"
        WithMeta._hidden = 2


def global_class(x):
    return x * Base.scale, Base.tag, Base.mode is Mode.B, x + len(Base.dims), Base.flag


def argument_class(cls, x):
    return x * cls.scale + len(cls.tag), cls.dims, cls.mode


def inherited(cls, x):
    return x * cls.scale, cls.tag + "!"


def through_type(o, x):
    return x * type(o).scale, type(o).tag


def through_type_of_new_object(x):
    """``type(o)`` of an object made in the frame has no source on 2.5-2.6."""
    o = Holder(x)
    return x * type(o).scale, type(o).tag, getattr(type(o), "missing", "default"), hasattr(type(o), "tag")


def list_attribute(cls, x):
    cls.items.append(cls.tag)
    return len(cls.items), list(cls.items), x + 1


def metaclass_property(cls, x):
    return x * cls.scale


CASES = [
    (global_class, lambda: ()),
    (argument_class, lambda: (Base,)),
    (inherited, lambda: (Sub,)),
    (through_type, lambda: (Holder(1),)),
    (through_type_of_new_object, lambda: ()),
    (list_attribute, lambda: (Base,)),
]


def _run(fn, args_fn):
    """[(eager, compiled)] for two calls with the class changed in between, or None on a break."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    out = []
    for n in (0, 1):
        x = torch.full((2,), float(n + 1))
        _step(n)
        expected = fn(*args_fn(), x)
        after_eager = list(Base.items)
        _step(n)
        try:
            got = compiled(*args_fn(), x)
        except Unsupported:
            return None
        out.append((repr((expected, after_eager)), repr((got, list(Base.items)))))
    _reset()
    return out


@pytest.mark.parametrize("fn,args_fn", CASES, ids=[c[0].__name__ for c in CASES])
def test_class_attributes_changed_between_calls(fn, args_fn):
    assert applied(NAME) == NEEDED
    out = _run(fn, args_fn)
    assert out is not None
    for expected, got in out:
        assert got == expected


@pytest.mark.skipif(not NEEDED, reason="2.12+ guards class attributes natively (pytorch/pytorch#177191)")
@pytest.mark.parametrize("fn,args_fn", CASES, ids=[c[0].__name__ for c in CASES])
def test_without_the_patch_it_is_wrong_or_a_break(fn, args_fn):
    with without_patch(NAME):
        out = _run(fn, args_fn)
    assert out is None or any(got != expected for expected, got in out)


def test_metaclass_data_descriptor_is_left_to_dynamo():
    """The metaclass's property wins in CPython; the patch defers, so tdcompat is exactly Dynamo."""
    out = _run(metaclass_property, lambda: (WithMeta,))
    if not NEEDED:
        return
    with without_patch(NAME):
        assert _run(metaclass_property, lambda: (WithMeta,)) == out


def test_class_made_in_frame_compiles():
    def made(x):
        cls = type("Made", (), {"k": 3})
        return x * cls.k

    compiled = torch.compile(made, backend="eager", fullgraph=True)
    for n in (1, 2):
        x = torch.full((2,), float(n))
        assert torch.equal(compiled(x), made(x))


class Plain:
    pass


class PlainMeta(type):
    pass


class WithPlainMeta(metaclass=PlainMeta):
    pass


class GetattrMeta(type):
    def __getattr__(cls, name):
        return 42


class WithGetattrMeta(metaclass=GetattrMeta):
    pass


def missing_in_try(cls, x):
    try:
        return x + cls.maybe
    except AttributeError:
        return x - 1


@pytest.mark.parametrize("cls", [Plain, WithPlainMeta], ids=["plain", "metaclass"])
def test_missing_class_attribute_is_guarded(cls):
    """``cls.maybe`` missing on the first call, present on the second: eager takes the
    ``except`` branch, then adds. Dynamo answered None (2.5; 2.8-2.11 under a metaclass) or
    raised without a guard (2.8-2.15), reusing the first answer: class-attr-guard before 2.12,
    getattr-missing-guard's class handler from 2.12 (user_defined.py, 'Step 7', open upstream)."""

    def run():
        torch._dynamo.reset()
        compiled = torch.compile(missing_in_try, backend="eager", fullgraph=True)
        out = []
        try:
            for n in (0, 1):
                if n:
                    cls.maybe = 5
                x = torch.full((2,), float(n + 1))
                try:
                    got = compiled(cls, x)
                except Exception as error:  # noqa: BLE001 - 2.5's own failure is part of the record
                    got = type(error).__name__
                out.append((repr(missing_in_try(cls, x)), repr(got)))
        finally:
            if "maybe" in cls.__dict__:
                del cls.maybe
        return out

    out = run()
    assert all(got == expected for expected, got in out), out
    if NEEDED:
        # getattr-missing-guard's class handler guards the same miss on every release: without
        # both, Dynamo's own answer is wrong (2.5: None; 2.6-2.11: unguarded).
        with without_patch(NAME), without_patch("getattr-missing-guard"):
            assert any(got != expected for expected, got in run())


def test_metaclass_getattr_is_left_to_dynamo():
    """A metaclass ``__getattr__`` answers missing names with user code: the patch defers."""
    def read(cls, x):
        return x + cls.anything

    def outcome():
        torch._dynamo.reset()
        try:
            return "ok", torch.compile(read, backend="eager", fullgraph=True)(WithGetattrMeta, torch.ones(2))
        except Exception as error:  # noqa: BLE001 - 2.5-2.11 fail natively (the metaclass is ignored)
            return type(error).__name__, None

    got = outcome()
    if got[0] == "ok":
        assert torch.equal(got[1], read(WithGetattrMeta, torch.ones(2)))
    elif NEEDED:
        with without_patch(NAME):
            assert outcome()[0] == got[0]  # exactly Dynamo's own failure
