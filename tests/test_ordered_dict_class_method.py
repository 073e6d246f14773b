"""ordered-dict-class-method: ``OrderedDict.<method>(od, ...)`` called through the class (torch <2.14).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
and every input after the call. Without the patch (reverted in-process) each shape fails where it is
measured to (a crash on 2.5-2.6, a graph break on 2.7-2.8, a wrong result for a plain-dict receiver on
2.9-2.12 and for ``__ior__`` on 2.13): ``test_without_the_patch_it_fails`` asserts that it does.
"""

from __future__ import annotations

from collections import OrderedDict

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "ordered-dict-class-method"
VERSION = parse_torch_version(torch.__version__).base_version
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = VERSION in SpecifierSet("<2.14")


def update(x, od):
    OrderedDict.update(od, {"z": x.sum(), "a": 0})
    return x + 1, list(od)


def setdefault(x, od):
    v = OrderedDict.setdefault(od, "n", 5)
    w = OrderedDict.setdefault(od, "a", 7)
    return x + v + w, list(od.items())


def ior_identity(x, od):
    r = OrderedDict.__ior__(od, {"q": 3, "a": -1})
    return x + 1, r is od, list(od.items())


def or_copy(x, od):
    r = OrderedDict.__or__(od, {"q": 3})
    return x + 1, type(r).__name__, list(r), list(od)


def pop_and_views(x, od):
    v = OrderedDict.pop(od, "a")
    return x * v, list(OrderedDict.keys(od)), list(OrderedDict.items(od)), list(OrderedDict.values(od))


def made_in_frame(x, od):
    o = OrderedDict(a=x, b=2)
    OrderedDict.__setitem__(o, "c", 3)
    OrderedDict.__delitem__(o, "a")
    OrderedDict.move_to_end(o, "b")
    return o, OrderedDict.copy(o)


def plain_receiver(x, od):
    d = dict(od)
    try:
        OrderedDict.update(d, b=2)
    except TypeError:
        d["caught"] = 1
    return x + 1, d


SHAPES = {f.__name__: f for f in (update, setdefault, ior_identity, or_copy, pop_and_views, made_in_frame,
                                  plain_receiver)}
#: Where each shape is right with the patch (elsewhere in range: right or a graph break). 2.5-2.6 cannot raise
#: TypeError in the trace; their `is` on dicts needs container-identity; move_to_end is Dynamo's from 2.7.
RIGHT = {"update": ">=2.5", "setdefault": ">=2.5", "ior_identity": ">=2.5", "or_copy": ">=2.5",
         "pop_and_views": ">=2.5", "made_in_frame": ">=2.7", "plain_receiver": ">=2.9"}
#: Where each shape fails without the patch (measured: crash or break on 2.5-2.8, wrong on 2.9-2.13 as listed).
NATIVE_FAILS = {"update": "<2.9", "setdefault": "<2.9", "ior_identity": ("<2.9", "==2.13.*"), "or_copy": "<2.9",
                "pop_and_views": "<2.9", "made_in_frame": "<2.9", "plain_receiver": "<2.13"}


def _within(spec) -> bool:
    return any(VERSION in SpecifierSet(s) for s in ((spec,) if isinstance(spec, str) else spec))


def _make(n):
    return torch.arange(3.0) * n, OrderedDict(a=n, b=2)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager_or_breaks(name):
    found = eager_vs_compiled(SHAPES[name], _make, (1, 2, 3))
    if not IN_RANGE or _within(RIGHT[name]):
        assert found is None, found
    assert found is None or isinstance(found, Unsupported), found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch <2.14")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    if not _within(NATIVE_FAILS[name]):
        pytest.skip(f"{name}: right natively on {VERSION}")
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert found is not None


class SubOD(OrderedDict):
    def update(self, *args, **kwargs):  # OrderedDict.update(sub, ...) bypasses this: deferred to Dynamo
        super().update(*args, **kwargs)
        self["touched"] = True


def test_a_subclass_receiver_is_dynamos():
    def fn(x, od):
        s = SubOD(a=1)
        OrderedDict.update(s, b=2)
        return x + 1, list(s)

    found = eager_vs_compiled(fn, _make, (1, 2))
    with without_patch(NAME):
        native = eager_vs_compiled(fn, _make, (1, 2))
    assert type(found) is type(native), (found, native)
