"""function-dict-write: writes into the ``__dict__`` of an existing function or a bound method (torch 2.12+).

Compiled (``fullgraph=True`` and without) and compared with eager on calls with different inputs: the return
value and the functions' own ``__dict__`` afterwards (keys in order). tdcompat turns Dynamo's crash into a
graph break, so with ``fullgraph=True`` these are ``Unsupported`` and without it they equal eager. A function
made in the frame is Dynamo's (tracked: right natively). Without the patch (reverted in-process) the compile
crashes with ``AssertionError`` on 2.12+: asserted there.
"""

from __future__ import annotations

import functools

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "function-dict-write"
TORCH = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = TORCH >= (2, 12)


def target():
    return 1


class Owner:
    def meth(self):
        return 2


def global_setitem(x, n):
    target.__dict__["tag"] = n
    return x + 1, len(target.__dict__)


def global_update(x, n):
    target.__dict__.update(tag=n, other=n + 1)
    return x * 2, sorted(target.__dict__)


def global_delete(x, n):
    target.__dict__["tag"] = n
    del target.__dict__["tag"]
    return x - 1, "tag" in target.__dict__


def method_setitem(x, n):
    m = Owner().meth
    m.__dict__["tag"] = n
    return x + 1, m.__func__ is Owner.meth


def made_in_frame(x, n):
    def inner(y):
        return y + n

    inner.__dict__["tag"] = n
    inner.__dict__.update(more=n + 1)
    return inner(x), inner.tag, dict(inner.__dict__)


def wraps_in_frame(x, n):
    @functools.wraps(target)
    def wrapper(y):
        return y + n

    return wrapper(x), sorted(wrapper.__dict__), wrapper.__name__


def vars_in_frame(x, n):
    def inner(y):
        return y + n

    inner.k = n
    return inner(x), list(vars(inner))


def renamed_in_frame(x, n):
    def inner(y):
        return y + n

    inner.__name__ = "renamed"
    inner.k = n
    return inner(x), list(vars(inner))


WRITES = {f.__name__: f for f in (global_setitem, global_update, global_delete, method_setitem)}
RIGHT = {f.__name__: f for f in (made_in_frame,)}
# `vars()` of a function made in the frame: crashed on 2.9-2.11 (vars-untraced-owner), right from 2.12
VARS = {f.__name__: f for f in (vars_in_frame,)}
# a function's `__name__`/`__doc__`/... stores listed as `__dict__` keys (dunder-dict-order, 2.12+): a graph break
SLOTS = {f.__name__: f for f in (wraps_in_frame, renamed_in_frame)}


def _state():
    return [(k, v) for k, v in target.__dict__.items()], [(k, v) for k, v in Owner.meth.__dict__.items()]


def _clear():
    target.__dict__.clear()
    Owner.meth.__dict__.clear()


def _run(fn, fullgraph):
    """Eager then compiled, for n = 1, 2: (eager results and states, compiled ones or the exception)."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
    expected, got = [], []
    try:
        for n in (1, 2):
            _clear()
            expected.append((repr(fn(torch.arange(3.0) * n, n)), _state()))
            _clear()
            got.append((repr(compiled(torch.arange(3.0) * n, n)), _state()))
    except Exception as exc:  # noqa: BLE001 - a graph break or a crash is the finding
        return expected, exc
    finally:
        _clear()
    return expected, got


@pytest.mark.parametrize("shape", sorted(WRITES))
def test_writes_break_cleanly_under_fullgraph(shape):
    _expected, got = _run(WRITES[shape], fullgraph=True)
    assert isinstance(got, Unsupported) or got == _expected, got


@pytest.mark.parametrize("shape", sorted(WRITES) + sorted(RIGHT) + sorted(SLOTS) + sorted(VARS))
def test_without_fullgraph_equals_eager(shape):
    expected, got = _run({**WRITES, **RIGHT, **SLOTS, **VARS}[shape], fullgraph=False)
    assert got == expected, got


@pytest.mark.parametrize("shape", sorted(SLOTS))
def test_function_slots_are_not_listed_as_dict_keys(shape):
    expected, got = _run(SLOTS[shape], fullgraph=True)
    assert isinstance(got, Unsupported) or got == expected, got


@pytest.mark.skipif(TORCH < (2, 12), reason="dunder-dict-order applies on 2.12+")
@pytest.mark.parametrize("shape", sorted(SLOTS))
def test_without_dunder_dict_order_function_slots_are_listed(shape):
    """Dynamo lists a function's slot stores as ``__dict__`` keys (silently wrong, 2.12.1-2.15.0)."""
    with without_patch("dunder-dict-order"):
        expected, got = _run(SLOTS[shape], fullgraph=True)
    assert not isinstance(got, Exception) and got != expected, got


@pytest.mark.parametrize("shape", sorted(RIGHT))
def test_made_in_frame_compiles(shape):
    expected, got = _run(RIGHT[shape], fullgraph=True)
    if TORCH >= (2, 12):
        assert got == expected, got


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on 2.12+")
@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("shape", sorted(WRITES))
def test_without_the_patch_the_compile_crashes(shape, fullgraph):
    with without_patch(NAME):
        _expected, got = _run(WRITES[shape], fullgraph)
    assert isinstance(got, AssertionError), got


@pytest.mark.parametrize("shape", sorted(VARS))
def test_vars_of_a_function_made_in_the_frame(shape):
    expected, got = _run(VARS[shape], fullgraph=True)
    if TORCH >= (2, 12):
        assert got == expected, got
    assert isinstance(got, Unsupported) or got == expected, got


@pytest.mark.skipif(not (2, 9) <= TORCH < (2, 12), reason="vars-untraced-owner applies on 2.9-2.11")
@pytest.mark.parametrize("fullgraph", [False, True])
def test_vars_without_the_patch_the_compile_crashes(fullgraph):
    with without_patch("vars-untraced-owner"):
        _expected, got = _run(vars_in_frame, fullgraph)
    assert isinstance(got, Exception) and not isinstance(got, Unsupported), got


class Holder(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.n = n


def module_setattr_submodule(x, m):
    """``nn.Module.__setattr__`` with a module value inlines a nested function (``remove_from``), whose
    ``__annotations__`` Dynamo reads through the function's ``__dict__`` model (2.12+): no refusal there."""
    m.sub = torch.nn.ReLU()
    return m.sub(m.lin(x)) + m.n


@pytest.mark.parametrize("patch", ["dunder-dict-order", "function-dict-write"])
def test_module_submodule_store_never_worse(patch):
    def make(n):
        return torch.arange(3.0) * n, Holder(n)

    found = eager_vs_compiled(module_setattr_submodule, make, (1, 2))
    with without_patch(patch):
        native = eager_vs_compiled(module_setattr_submodule, make, (1, 2))
    assert found is None or native is not None, (found, native)
