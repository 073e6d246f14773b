"""dict-method-arity: a dict method called with a count or keywords CPython refuses raises TypeError (2.7-2.8).

Compiled with ``fullgraph=True`` and compared with eager on two calls with different inputs: the
return value (the error texts included) and the dict after the call. Without the patch (reverted
in-process) the compile crashes on 2.7-2.8.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, without_patch

NAME = "dict-method-arity"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = (2, 7) <= TORCH < (2, 9)


class Sub(dict):
    pass


CALLS = {
    "keys1": lambda d: d.keys(1), "values1": lambda d: d.values(1), "items1": lambda d: d.items(1),
    "copy1": lambda d: d.copy(1), "clear1": lambda d: d.clear(1), "get0": lambda d: d.get(),
    "get3": lambda d: d.get(1, 2, 3), "get_kw": lambda d: d.get(key="a"), "pop0": lambda d: d.pop(),
    "setdefault0": lambda d: d.setdefault(), "len1": lambda d: d.__len__(1),
    "contains0": lambda d: d.__contains__(), "setitem1": lambda d: d.__setitem__("a"),
    "update_int": lambda d: d.update(1), "update_none": lambda d: d.update(None),
}


#: 2.7 cannot trace ``str(error)`` (a graph break of its own): there the programs keep the type.
READS_TEXT = TORCH >= (2, 8)


def _program(call):
    def refused(d, x):
        try:
            result = call(d)
        except TypeError as error:
            return (str(error) if READS_TEXT else type(error).__name__), d, x - 1
        return result, d, x + 1

    return refused


def _plain(seed):
    torch.manual_seed(seed)
    d = {"a": torch.randn(2)}
    if seed:
        d["b"] = torch.ones(2)
    return d, torch.randn(2)


def _sub(seed):
    d, x = _plain(seed)
    return Sub(d), x


def _run(fn, make):
    return eager_vs_compiled(fn, make)


def _ordered(seed):
    d, x = _plain(seed)
    return collections.OrderedDict(d), x


MAKERS = {"plain": _plain, "subclass": _sub, "ordered": _ordered}
#: For an OrderedDict the patch defers dunder methods and keyword calls (CPython's text depends on how
#: the method was reached); Dynamo's own outcome is kept: a graph break or a crash on 2.7-2.8. ``get`` with
#: keywords is dict-method-keywords' (a graph break for any class but an exact dict, for the same reason).
NATIVE_TEXT = {(name, "ordered") for name in ("get_kw", "contains0", "len1", "setitem1")} | {("get_kw", "subclass")}
PARAMS = [(name, kind) for name in CALLS for kind in MAKERS if (name, kind) not in NATIVE_TEXT]


@pytest.mark.skipif(not NEEDED, reason="2.5-2.6 crash natively and cannot raise TypeError in the trace; 2.9+ raise "
                    "it with Dynamo's own text (native, left alone)")
@pytest.mark.parametrize("name,kind", PARAMS, ids=[f"{n}-{k}" for n, k in PARAMS])
def test_refused_arguments_raise_type_error_as_eager(name, kind):
    assert applied(NAME) == NEEDED
    assert _run(_program(CALLS[name]), MAKERS[kind]) is None


@pytest.mark.skipif(not NEEDED, reason="the patch applies on 2.7-2.8")
@pytest.mark.parametrize("name,kind", [("keys1", "plain"), ("get0", "plain"), ("copy1", "plain"),
                                       ("update_int", "subclass"), ("get0", "ordered")])
def test_without_the_patch_the_compile_crashes(name, kind):
    with without_patch(NAME):
        failure = _run(_program(CALLS[name]), MAKERS[kind])
    assert isinstance(failure, Exception) and not isinstance(failure, Unsupported), failure


@pytest.mark.skipif(not NEEDED, reason="the patch applies on 2.7-2.8")
@pytest.mark.parametrize("name,kind", sorted(NATIVE_TEXT))
def test_native_texts_are_the_same_without_the_patch(name, kind):
    failure = _run(_program(CALLS[name]), MAKERS[kind])
    with without_patch(NAME):
        unpatched = _run(_program(CALLS[name]), MAKERS[kind])
    assert failure is not None and type(failure) is type(unpatched), (failure, unpatched)
    assert not isinstance(failure, str) or failure == unpatched


def right_counts(d, x):
    d.setdefault("c", x)
    return d.get("a") + x, d.get("z", 0), list(d.keys()), d.pop("c") * 2, d.__contains__("a"), len(d)


def ordered_keywords(d, x):
    """OrderedDict's pop/popitem take what dict's do not: the probe on an OrderedDict raises nothing."""
    od = collections.OrderedDict(d)
    return od.popitem(False)[0], od.pop("zz", default=3), x + 1


@pytest.mark.skipif(not NEEDED, reason="the patch applies on 2.7-2.8")
@pytest.mark.parametrize("fn", [right_counts, ordered_keywords])
def test_accepted_counts_are_dynamo_s_own(fn):
    """Right counts go straight to Dynamo: the same outcome with and without the patch."""
    failure = _run(fn, _plain)
    with without_patch(NAME):
        unpatched = _run(fn, _plain)
    assert type(failure) is type(unpatched) and (failure is None or not isinstance(failure, str)), (failure, unpatched)
