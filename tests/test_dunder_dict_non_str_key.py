"""dunder-dict-non-str-key: ``o.__dict__[k] = v`` with a key that is not a ``str`` (torch 2.12-2.13).

Compiled with ``fullgraph=True`` and compared with eager (return value, the objects made or passed in,
their ``__dict__`` keys in order) on calls with different inputs: writes, reads, deletions, ``update``,
``pop``, ``setdefault`` with int/float/bool/None/bytes keys on an object made in the frame (right on 2.13+),
and the shapes tdcompat refuses (an object passed in, a ``str`` subclass key, a tuple key, a NaN key: a graph break on
2.12-2.13; before 2.12 ``instance-dict-writes`` replays a tuple key, tests/test_instance_dict_non_str_keys.py).
Without the patch (reverted in-process) these compiles crash (``AssertionError``) on 2.12-2.13:
asserted there. Upstream's ``DunderDictVariableTests::test_dunder_dict_non_str_key_*`` in tdcompat's words.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, without_patch

NAME = "dunder-dict-non-str-key"  # records an object made in the frame's non-str keys (2.13)
BREAK = "non-str-attr-store"  # graph-breaks the stores Dynamo's replay cannot write (2.7 on)
TORCH = parse_torch_version(torch.__version__).release[:2]
# recorded for an object made in the frame from 2.13 (2.14 natively); before 2.12 instance-dict-writes replays them
RIGHT = TORCH >= (2, 13) or (TORCH < (2, 12) and applied("instance-dict-writes"))
# where the unpatched compile crashes (fullgraph or not; instance-dict-writes reverted too): made in the frame 2.7-2.13,
# passed in and str-subclass keys 2.7-2.15 (str subclass 2.12+ only)
CRASHES = {
    "made_setitem": ((2, 7) <= TORCH < (2, 14), (2, 7) <= TORCH < (2, 14)),
    "input_setitem": (TORCH >= (2, 7), TORCH >= (2, 12)),
    "str_subclass_key": (TORCH >= (2, 12), TORCH >= (2, 12)),
}


class Foo:
    pass


class S(str):
    pass


def made_setitem(x, n):
    f = Foo()
    f.__dict__[1] = x
    f.a = n
    f.__dict__[n + 0.5] = x * 2
    return dict(f.__dict__), list(f.__dict__), f


def made_roundtrip(x, n):
    f = Foo()
    d = vars(f)
    d[1] = x
    d[2.5] = n
    d[-3] = x + 1
    got = (d[1], d[2.5], d[-3], 2.5 in d, len(d))
    del d[2.5]
    return got, dict(d), [k for k in d], f


def made_update_pop(x, n):
    f = Foo()
    f.b = x
    f.__dict__.update({1: x, "c": n})
    v = f.__dict__.pop(1)
    f.__dict__.setdefault(2, n)
    f.__dict__[1] = n + 1  # re-added: last, as in CPython
    return v, list(f.__dict__), 1 in f.__dict__, len(f.__dict__), f.__dict__.get(2), f


def made_equal_keys(x, n):
    f = Foo()
    f.__dict__[1] = x
    f.__dict__[True] = n  # the same entry as 1: the key stays 1
    f.__dict__[1.0] = f.__dict__[1] + 1
    return list(f.__dict__), f.__dict__[1], f


def made_returned_dict(x, n):
    f = Foo()
    f.__dict__[None] = n
    f.__dict__[b"k"] = x
    return x + 1, vars(f)


def input_setitem(x, o):
    o.__dict__[1] = x
    return x + 1, list(o.__dict__)


def str_subclass_key(x, n):
    f = Foo()
    f.__dict__[S("a")] = n
    return x + 1, f


def tuple_key(x, n):
    f = Foo()
    f.__dict__[(3, 4)] = n
    return x + 1, list(f.__dict__)


def nan_key(x, n):
    f = Foo()
    f.__dict__[float("nan")] = n
    return x + 1, len(f.__dict__)


MADE = {f.__name__: f for f in (made_setitem, made_roundtrip, made_update_pop, made_equal_keys,
                                made_returned_dict)}
REFUSED = {f.__name__: f for f in (input_setitem, str_subclass_key, tuple_key, nan_key)}


def _make(n):
    return torch.arange(3.0) * n, n


def _make_input(n):
    o = Foo()
    o.a = n
    return torch.arange(3.0) * n, o


@pytest.mark.parametrize("shape", sorted(MADE))
def test_made_in_frame_equals_eager(shape):
    found = eager_vs_compiled(MADE[shape], _make, (1, 2, 3))
    # (made_setitem's `n + 0.5` key is a SymFloat once `n` turns dynamic: before 2.12 a break)
    if RIGHT and not (shape == "made_setitem" and TORCH < (2, 12)):
        assert found is None, found
    assert found is None or isinstance(found, Unsupported), found  # before 2.12: Dynamo's own break


@pytest.mark.parametrize("shape", sorted(REFUSED))
def test_refused_shapes_break_cleanly(shape):
    make = _make_input if shape == "input_setitem" else _make
    found = eager_vs_compiled(REFUSED[shape], make, (1, 2))
    assert found is None or isinstance(found, Unsupported), found
    # (2.14 replays tuple and NaN keys itself: right there; before 2.12 instance-dict-writes takes a tuple)
    if shape == "tuple_key" and RIGHT and TORCH < (2, 12):
        assert found is None, found
    elif shape not in ("tuple_key", "nan_key") or TORCH < (2, 14):
        assert isinstance(found, Unsupported), found


@pytest.mark.parametrize("shape", sorted(MADE) + sorted(REFUSED))
def test_without_fullgraph(shape):
    fn = {**MADE, **REFUSED}[shape]
    make = _make_input if shape == "input_setitem" else _make
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    for n in (1, 2):
        assert repr(fn(*make(n))[:-1]) == repr(compiled(*make(n))[:-1])


def _crash(fn, make, fullgraph):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
    try:
        for n in (1, 2):
            compiled(*make(n))
    except Unsupported as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - the crash is the finding
        return exc
    return None


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("shape", sorted(CRASHES))
def test_without_the_patch_the_compile_crashes(shape, fullgraph):
    """The unpatched compile of these shapes crashes on the releases listed in ``CRASHES`` (an exception that
    is not a graph break; ``non-str-attr-store`` applies from 2.7, 2.5-2.6 break cleanly); with it: none."""
    fn = {**MADE, **REFUSED}[shape]
    make = _make_input if shape == "input_setitem" else _make
    crashes = CRASHES[shape][fullgraph]
    with without_patch(BREAK), without_patch(NAME), without_patch("instance-dict-writes"):  # (its replay, <2.12)
        found = _crash(fn, make, fullgraph)
    assert (found is not None and not isinstance(found, Unsupported)) == crashes, found
    found = _crash(fn, make, fullgraph)
    assert found is None or isinstance(found, Unsupported), found


# -- getattr/hasattr of a non-str name: CPython's TypeError (2.14 answered from the record: the item, True) --


def getattr_names(x, n):
    """Non-str names present in the instance dict (an int, None) and one absent (a float). (A tuple key on an
    object that leaves the frame crashes 2.14-2.15's replay natively: ``Cannot construct ConstantVariable``.)"""
    f = Foo()
    f.__dict__[1] = x
    f.__dict__[None] = n
    out = []
    for name in (1, None, 2.5):
        try:
            out.append(getattr(f, name))
        except TypeError as error:
            out.append(str(error))
        try:
            out.append(hasattr(f, name))
        except TypeError as error:
            out.append(str(error))
    return x + 1, out, f


@pytest.mark.skipif(TORCH < (2, 13), reason="an object made in the frame takes non-str keys from 2.13")
def test_getattr_of_a_non_str_name_raises_type_error():
    assert eager_vs_compiled(getattr_names, _make, (1, 2, 3)) is None


@pytest.mark.skipif(TORCH != (2, 14), reason="2.14 records the keys natively and answers getattr from them")
def test_without_the_patch_getattr_of_a_non_str_name_is_wrong_on_2_14():
    def present(x, n):
        f = Foo()
        f.__dict__[1] = x
        try:
            return x + 1, getattr(f, 1), hasattr(f, 1)
        except TypeError as error:
            return x - 1, str(error)

    def absent(x, n):
        f = Foo()
        try:
            return x + 1, getattr(f, 2.5)
        except TypeError as error:
            return x - 1, str(error)

    with without_patch(NAME):
        assert isinstance(eager_vs_compiled(present, _make, (1, 2)), str)  # the item: a wrong value
        found = eager_vs_compiled(absent, _make, (1, 2))
    assert type(found).__name__ == "InternalTorchDynamoError", found
