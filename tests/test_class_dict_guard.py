"""class-dict-guard: key reads of a class's own ``__dict__`` are guarded (torch 2.5-2.11).

``'v' in K.__dict__``, ``K.__dict__.get('v', d)`` and ``K.__dict__['v']`` were answered from the
class at trace time with no guard: the first call's answer was reused after ``K`` gained or lost
``v`` (silently wrong, 2.5-2.11; 2.12 guards the class dict's keys). Each test compiles with
``fullgraph=True`` and calls three times, changing the class between calls, comparing with eager;
without the patch (reverted in-process) the shape is asserted wrong on 2.5-2.11 (2.5-2.6 guard with a
predicate of tdcompat's own: no ``MAPPING_KEYS_CHECK`` there).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # tdcompat applies its patches when Dynamo is imported

from tdcompat.versions import parse_torch_version

from conftest import applied, same, without_patch

NAME = "class-dict-guard"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 12)


class Base:
    v = "inherited"


class Passed(Base):
    w = 1


class Made(Base):
    w = 1


def own_keys_of_passed(x, cls):
    return x + 1, "v" in cls.__dict__, cls.__dict__.get("v", "D"), "w" in cls.__dict__


def own_keys_of_global(x):
    return x * 2, "v" in Passed.__dict__, Passed.__dict__["w"] if "w" in Passed.__dict__ else None


def own_keys_of_made(x):
    o = Made()
    return x - 1, "v" in type(o).__dict__, type(o).__dict__.get("v", "D")


def _change(call):
    """Call 1: neither class has its own ``v``; call 2: both do; call 3: ``v`` gone, ``w`` gone."""
    for cls in (Passed, Made):
        for key in ("v", "w"):
            if key in vars(cls):
                delattr(cls, key)
        if call in (1, 2):
            cls.w = 1
        if call == 2:
            cls.v = 5


def _outcome(fn, with_class):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    try:
        for call in (1, 2, 3):
            _change(call)
            args = (torch.full((2,), float(call)),) + ((Passed,) if with_class else ())
            if not same(fn(*args), compiled(*args)):
                return "wrong"
        return "ok"
    finally:
        _change(1)


SHAPES = [(own_keys_of_passed, True), (own_keys_of_global, False), (own_keys_of_made, False)]


@pytest.mark.parametrize("fn,with_class", SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_class_dict_keys_are_guarded(fn, with_class):
    assert applied(NAME) == NEEDED
    assert _outcome(fn, with_class) == "ok"


@pytest.mark.skipif(not NEEDED, reason="the patch applies to 2.5-2.11")
@pytest.mark.parametrize("fn,with_class", SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_without_the_patch_it_is_wrong(fn, with_class):
    with without_patch(NAME):
        assert _outcome(fn, with_class) == "wrong"
