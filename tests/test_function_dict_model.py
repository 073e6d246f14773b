"""function-dict: a function's and a bound method's ``__dict__`` are the function's own dict (torch 2.5-2.11).

Compiled with ``fullgraph=True`` and without, compared with eager on two calls with different inputs: the
return value and the functions' own ``__dict__`` afterwards (keys in order). Without the patch (reverted
in-process) Dynamo answers ``f.__dict__`` with the getset descriptor every function shares: the identity,
type and equality shapes are silently wrong on 2.5-2.11 (asserted), the others graph-break. On 2.12+ the
patch does not apply; there the shapes that write break cleanly (``function-dict-write``) and the rest are
Dynamo's (method-dict identity is wrong natively there: ``NATIVE_212``).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import without_patch

NAME = "function-dict"
TORCH = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = TORCH < (2, 12)


def first():
    return 1


def second():
    return 2


def shadowing():
    return 3


class Owner:
    def meth(self):
        return 4


def _reset(n):
    for fn in (first, second, Owner.meth):
        fn.__dict__.clear()
    first.tag = n
    second.tag = n + 1
    Owner.meth.tag = n * 10
    shadowing.__dict__.clear()
    shadowing.__dict__["__call__"] = n  # a key the function type also answers: refused (a break)


# -- shapes: (x, n) -> results ---------------------------------------------------------------------------------


def identity(x, n):
    return x + n, first.__dict__ is second.__dict__, first.__dict__ is first.__dict__


def dict_type(x, n):
    return x * n, type(first.__dict__) is dict, isinstance(Owner.meth.__dict__, dict)


def equality(x, n):
    return x - n, first.__dict__ == second.__dict__, first.__dict__ == {"tag": n}


def method_dict_returned(x, n):
    m = Owner().meth
    return x + 1, m.__dict__, m.__dict__.get("tag")


def method_func_identity(x, n):
    m = Owner().meth
    return x + 1, m.__func__.__dict__ is Owner.meth.__dict__, m.__dict__ is Owner.meth.__dict__


def reads(x, n):
    d = first.__dict__
    return x + d.get("tag", 0), sorted(d), "tag" in d, len(d), list(d.items())


def write_then_attribute(x, n):
    d = first.__dict__
    d["tag"] = n + 5
    d["extra"] = len(d) + n
    return x + first.tag, first.extra, hasattr(first, "extra"), getattr(first, "missing", n)


def delete_then_attribute(x, n):
    d = second.__dict__
    del d["tag"]
    try:
        got = second.tag
    except AttributeError:
        got = "gone"
    return x + 1, got, hasattr(second, "tag"), getattr(second, "tag", -n)


def write_through_method(x, n):
    m = Owner().meth
    m.__dict__["k"] = n
    return x + m.k, m.__func__.k, Owner.meth.k, sorted(Owner.meth.__dict__)


def dunder_key(x, n):
    return x + 1, shadowing.__dict__.get("__call__")


WRONG = {f.__name__: f for f in (identity, dict_type)}
RIGHT = {f.__name__: f for f in (equality, method_dict_returned, method_func_identity, reads)}
WRITES = {f.__name__: f for f in (write_then_attribute, delete_then_attribute, write_through_method)}
REFUSED = {f.__name__: f for f in (dunder_key,)}
ALL = {**WRONG, **RIGHT, **WRITES, **REFUSED}
# `==` of two dict trackers: a graph break before 2.9 (Dynamo compares no two ConstDictVariables there)
CANNOT_COMPARE = {"equality"} if TORCH < (2, 9) else set()
# identity of a method's __dict__ for an object made in the frame: wrong natively on 2.12-2.15 (a dict
# tracker per method tracker), not this patch's range
NATIVE_212 = {"method_func_identity", "method_dict_returned"}


def _state():
    return [list(fn.__dict__.items()) for fn in (first, second, Owner.meth, shadowing)]


def _norm(value):
    if isinstance(value, tuple):
        return tuple(_norm(v) for v in value)
    if isinstance(value, dict):
        return ("dict", id(value), list(value.items()))
    if isinstance(value, torch.Tensor):
        return value.tolist()
    return value


def _run(fn, fullgraph):
    """Eager then compiled, for n = 1, 2: (eager results and states, compiled ones or the exception)."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
    expected, got = [], []
    try:
        for n in (1, 2):
            x = torch.arange(3.0) * n - 1
            _reset(n)
            expected.append((_norm(fn(x, n)), _state()))
            _reset(n)
            got.append((_norm(compiled(x, n)), _state()))
    except Exception as exc:  # noqa: BLE001 - a graph break or a crash is the finding
        return expected, exc
    finally:
        _reset(0)
    return expected, got


@pytest.mark.parametrize("shape", sorted(WRONG) + sorted(RIGHT) + sorted(WRITES))
def test_fullgraph_equals_eager(shape):
    expected, got = _run(ALL[shape], fullgraph=True)
    if IN_RANGE and shape not in CANNOT_COMPARE:
        assert got == expected, got
    elif IN_RANGE or shape not in NATIVE_212:
        assert isinstance(got, Unsupported) or got == expected, got
    else:
        assert isinstance(got, Unsupported) or got != expected, got  # Dynamo's, not tdcompat's


@pytest.mark.parametrize("shape", sorted(set(ALL) - NATIVE_212))
def test_without_fullgraph_equals_eager(shape):
    expected, got = _run(ALL[shape], fullgraph=False)
    assert got == expected, got


@pytest.mark.parametrize("shape", sorted(REFUSED))
def test_a_dict_shadowing_a_function_type_attribute_breaks(shape):
    expected, got = _run(REFUSED[shape], fullgraph=True)
    assert isinstance(got, Unsupported) or (not IN_RANGE and got == expected), got


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.5-2.11")
@pytest.mark.parametrize("shape", sorted(WRONG))
def test_without_the_patch_it_is_wrong(shape):
    """Dynamo answers with the shared getset descriptor: silently wrong (measured 2.5.1-2.11.0)."""
    with without_patch(NAME):
        expected, got = _run(WRONG[shape], fullgraph=True)
    assert not isinstance(got, Exception) and got != expected, got


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.5-2.11")
@pytest.mark.parametrize("shape", sorted(WRITES) + ["method_dict_returned"])
def test_without_the_patch_it_breaks(shape):
    with without_patch(NAME):
        _expected, got = _run(ALL[shape], fullgraph=True)
    assert isinstance(got, Unsupported), got


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.5-2.11")
def test_without_the_patch_equality_is_not_eager():
    """``f.__dict__ == g.__dict__``: a graph break, or on 2.8 the descriptor compared with itself (True,
    silently wrong)."""
    with without_patch(NAME):
        expected, got = _run(equality, fullgraph=True)
    assert isinstance(got, Unsupported) or got != expected, got
    if TORCH == (2, 8):
        assert not isinstance(got, Exception), got
