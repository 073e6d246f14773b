"""dict-subclass-class-method: ``Sub.get(d, k)`` for a dict subclass that does not override ``get`` (torch 2.7+).

Each program runs compiled with ``fullgraph=True`` and eagerly on equal fresh inputs, twice with
different inputs, and compares the return value and the inputs after the call. Without the patch
(reverted in-process) the accepted shapes are asserted to be graph breaks on 2.7-2.8 and right on
2.9+, where only the guard (a method the class gains later) and the call without a receiver
(2.9-2.12) go wrong; the shapes the patch defers are asserted right or failing exactly as without
it (never worse).
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, without_patch

NAME = "dict-subclass-class-method"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH >= (2, 7)
BREAKS_UNPATCHED = (2, 7) <= TORCH < (2, 9)


class Sub(dict):
    pass


class SubSub(Sub):
    pass


class ODSub(collections.OrderedDict):
    pass


class Over(dict):
    def get(self, key, default=None):
        return ("over", key)


class Meta(type):
    pass


class MetaSub(dict, metaclass=Meta):
    pass


class Swapped(dict):
    """Its ``get`` is replaced between the two calls of one test (and put back after it)."""


def reads(d, x):
    return (Sub.get(d, "a") + x, Sub.get(d, "zz", 7), list(Sub.keys(d)), [k for k, _ in Sub.items(d)],
            len(list(Sub.values(d))), Sub.__contains__(d, "b"), Sub.__getitem__(d, "b") * 2, Sub.__len__(d))


def writes(d, x):
    Sub.__setitem__(d, "c", x)
    default = Sub.setdefault(d, "e", x + 1)
    popped = Sub.pop(d, "a")
    Sub.update(d, {"u": x * 2}, w=x)
    Sub.__delitem__(d, "b")
    return default, popped, sorted(Sub.copy(d)), list(d)


def clear_it(d, x):
    Sub.clear(d)
    return len(d), x + 1


def made_in_frame(x):
    d = Sub(a=x, b=x * 2)
    Sub.__setitem__(d, "c", x + 1)
    return Sub.get(d, "c"), list(Sub.keys(d)), Sub.pop(d, "a"), d


def through_subsub(d, x):
    """A method of ``dict`` read through two levels of subclass, on an instance of the base."""
    return SubSub.get(d, "a") + x, list(SubSub.items(d))[0][0]


def od_get(d, x):
    """``ODSub.get`` is ``dict.get`` (accepted); ``ODSub.keys`` is OrderedDict's own (deferred)."""
    return ODSub.get(d, "a") + x, ODSub.get(d, "q", 3)


def _sub(seed):
    torch.manual_seed(seed)
    d = Sub(a=torch.randn(2), b=torch.randn(2))
    if seed:
        d["k"] = torch.ones(2)
    return d, torch.randn(2)


def _plain(seed):
    d, x = _sub(seed)
    return dict(d), x


def _x(seed):
    torch.manual_seed(seed)
    return (torch.randn(2),)


def _od(seed):
    d, x = _sub(seed)
    return ODSub(d), x


ACCEPTED = [
    ("reads_sub", reads, _sub),
    ("reads_plain_dict", reads, _plain),
    ("writes_sub", writes, _sub),
    ("writes_plain_dict", writes, _plain),
    ("clear", clear_it, _sub),
    ("made_in_frame", made_in_frame, _x),
    ("through_subsub", through_subsub, _sub),
    ("ordered_dict_subclass_get", od_get, _od),
]


def _run(fn, make):
    return eager_vs_compiled(fn, make)


@pytest.mark.parametrize("fn,make", [a[1:] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_dict_methods_through_the_subclass_equal_eager(fn, make):
    assert applied(NAME) == NEEDED
    if NEEDED:
        assert _run(fn, make) is None
    else:  # 2.5-2.6: `dict.get(d, k)` itself is a graph break there
        assert isinstance(_run(fn, make), Unsupported)


@pytest.mark.skipif(not NEEDED, reason="the patch applies from 2.7")
@pytest.mark.parametrize("fn,make", [a[1:] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_without_the_patch(fn, make):
    """2.7-2.8 break on every accepted shape; 2.9+ answer them right (with no guard: below)."""
    with without_patch(NAME):
        failure = _run(fn, make)
    if BREAKS_UNPATCHED:
        assert isinstance(failure, Unsupported), failure
    else:
        assert failure is None


def overridden(d, x):
    return Over.get(d, "a"), x + 1


def with_metaclass(d, x):
    return MetaSub.get(d, "a") + x


def no_receiver(x):
    try:
        Sub.keys()
    except TypeError:
        return x - 1
    return x + 1


def not_a_dict(x):
    try:
        return Sub.get([1, 2], 0)
    except TypeError:
        return x - 1


def od_keys(d, x):
    return list(ODSub.keys(d)), x + 1


def iter_and_popitem(d, x):
    """Accepted, then Dynamo's own ``dict.__iter__(d)`` / ``dict.popitem(d)``: a break on 2.7-2.9."""
    return list(Sub.__iter__(d)), Sub.popitem(d), x + 1


DEFERRED = [
    ("overridden", overridden, _sub),
    ("metaclass", with_metaclass, _sub),
    ("not_a_dict", not_a_dict, _x),
    ("ordered_dict_own_method", od_keys, _od),
    ("iter_and_popitem", iter_and_popitem, _sub),
]


@pytest.mark.skipif(not NEEDED, reason="the patch applies from 2.7")
@pytest.mark.parametrize("fn,make", [d[1:] for d in DEFERRED], ids=[d[0] for d in DEFERRED])
def test_other_shapes_are_never_worse(fn, make):
    """Right, or a graph break that unpatched Dynamo has too; never a wrong value or a crash."""
    failure = _run(fn, make)
    if failure is None:
        return
    assert isinstance(failure, Unsupported), failure
    with without_patch(NAME):
        assert _run(fn, make) is not None


def swapped_get(d, x):
    return Swapped.get(d, "a"), x + 1


def _swap_between_calls():
    """(first, second, third) compiled answers of ``Swapped.get(d, "a")``: plain, after the class
    gains ``get``, after it loses it again."""
    torch._dynamo.reset()
    compiled = torch.compile(swapped_get, backend="eager", fullgraph=True)
    d = Swapped(a=1)
    first = compiled(d, torch.ones(1))[0]
    Swapped.get = lambda self, key, default=None: ("swapped", key)
    try:
        assert swapped_get(d, torch.ones(1))[0] == ("swapped", "a")
        second = compiled(d, torch.ones(1))[0]
    finally:
        del Swapped.get
    return first, second, compiled(d, torch.ones(1))[0]


@pytest.mark.skipif(not NEEDED, reason="the patch applies from 2.7")
def test_a_method_set_on_the_class_between_calls_recompiles():
    """The guard on ``Sub.get``: replacing it after the first call must not reuse dict.get."""
    assert _swap_between_calls() == (1, ("swapped", "a"), 1)


@pytest.mark.skipif(TORCH < (2, 9), reason="2.7-2.8 break on the first call without the patch")
def test_without_the_patch_2_9_on_keep_calling_dict_get():
    with without_patch(NAME):
        assert _swap_between_calls()[1] == 1  # silently wrong: eager calls the class's own get


def test_without_a_receiver_raises_type_error_as_eager():
    """``Sub.keys()``: TypeError in eager; compiled the same from 2.7 (2.7-2.8 broke and 2.9-2.12
    crashed without the patch); 2.5-2.6 break."""
    failure = _run(no_receiver, _x)
    if NEEDED:
        assert failure is None
        if TORCH < (2, 13):
            with without_patch(NAME):
                unpatched = _run(no_receiver, _x)
            if BREAKS_UNPATCHED:
                assert isinstance(unpatched, Unsupported), unpatched
            else:
                assert "IndexError" in str(unpatched)
    else:
        assert isinstance(failure, Unsupported), failure
