"""string-format-deferred: f-strings and ``str.format`` of mutable values (every release, 2.5-2.15).

A list, a dict and a tensor formatted and then changed in the frame, an object passed in written before an
f-string of it, an object built in the frame: compiled with ``fullgraph=True`` they are a clean graph break
(eager formats them where the program does), never the text of the value's final state. Values whose text cannot
change - constants, symbolic ints, tuples and sizes of them, strings being formatted - still compile and equal
eager on calls with different inputs. Without the patch (reverted in-process) the mutable shapes are wrong on every
release: ``test_without_the_patch_it_is_wrong`` asserts it.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.dynamo_api import torch_release

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "string-format-deferred"


class P:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"P({self.v})"


def tensor_after(x, n):
    y = x.clone()
    s = f"{y}"
    y.add_(n)
    return s, y


def list_after(x, n):
    items = [x.sum().item() > 1e9, n]
    s = "{}".format(items)
    items.append(5)
    return x + 1, s, items


def dict_after(x, n):
    d = {"a": x}
    s = f"{d}"
    d["a"] = x + n
    return s, d


def obj_written_before(x, n, p):
    p.v = n * 2
    return x + 1, f"{p}", p.v


def obj_made(x, n):
    p = P(n)
    p.v = n + 1
    return x + 1, "{:}".format(p)


#: 2.14+ format an f-string's object with a default spec where it stands (its str): right without the patch.
OBJECT_FSTRING_RIGHT = torch_release() >= (2, 14)
MUTABLE = {f.__name__: f for f in (tensor_after, dict_after) + (() if OBJECT_FSTRING_RIGHT else (obj_written_before,))}


def _make(n):
    return torch.arange(3.0) * n, n + 3, P(n)


def _args(fn, n):
    args = _make(n)
    return args if fn is obj_written_before else args[:2]


@pytest.mark.parametrize("name", sorted(MUTABLE))
def test_a_mutable_value_breaks(name):
    fn = MUTABLE[name]
    assert is_break(eager_vs_compiled(fn, lambda n: _args(fn, n), (1, 2)))


@pytest.mark.parametrize("fn", [list_after, obj_made], ids=lambda f: f.__name__)
def test_never_worse(fn):
    assert_right_break_or_native(NAME, fn, lambda n: _args(fn, n))


def fixed(x, n):
    """Constants, a symbolic int (n changes: the second call makes it symbolic), a tuple and a size of them."""
    t = (n, "a", 2.5)
    return x + 1, "{:>5}|{}".format(n, t), "{}".format(x.shape), "{}:{}".format("k", n + 1)


@pytest.mark.skipif(not OBJECT_FSTRING_RIGHT, reason="2.14+ format the f-string's object where it stands")
def test_an_object_written_before_its_fstring_compiles_from_2_14():
    assert eager_vs_compiled(obj_written_before, lambda n: _make(n), (1, 2)) is None


def test_values_whose_text_is_fixed_compile():
    assert eager_vs_compiled(fixed, lambda n: (torch.ones(n + 1), n + 3), (1, 2, 3)) is None


def sym_float(x, n):
    return x + 1, "{:.3f}".format(n / 7)


def test_a_symbolic_float_breaks():
    """2.5 returns a symbolic float from the graph in float32: its text is refused, not deferred."""
    found = eager_vs_compiled(sym_float, lambda n: (torch.ones(2), n + 3), (1, 2))
    assert found is None or is_break(found), found


@pytest.mark.parametrize("name", sorted(MUTABLE))
def test_without_the_patch_it_is_wrong(name):
    fn = MUTABLE[name]
    with without_patch(NAME):
        found = eager_vs_compiled(fn, lambda n: _args(fn, n), (1, 2))
    assert isinstance(found, str), found  # a wrong value: the final state's text


def test_without_the_patch_an_object_made_in_the_frame_crashes():
    """2.13+: the object built in the frame is reconstructed without its attribute (``AttributeError``)."""
    with without_patch(NAME):
        found = eager_vs_compiled(obj_made, lambda n: _args(obj_made, n), (1, 2))
    if torch_release() >= (2, 13):
        assert isinstance(found, AttributeError), found
