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
#: A break with the patch on every release (a plain object in a bare field is formatted where it stands instead:
#: tests at the end).
MUTABLE = {f.__name__: f for f in (tensor_after, dict_after)}
#: Wrong without the patch: these, and the object written before its f-string before 2.14.
WRONG = {**MUTABLE, **({} if OBJECT_FSTRING_RIGHT else {"obj_written_before": obj_written_before})}


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


@pytest.mark.parametrize("name", sorted(WRONG))
def test_without_the_patch_it_is_wrong(name):
    fn = WRONG[name]
    with without_patch(NAME):
        found = eager_vs_compiled(fn, lambda n: _args(fn, n), (1, 2))
    assert isinstance(found, str), found  # a wrong value: the final state's text


def test_without_the_patch_an_object_made_in_the_frame_crashes():
    """2.13+: the object built in the frame is reconstructed without its attribute (``AttributeError``)."""
    with without_patch(NAME):
        found = eager_vs_compiled(obj_made, lambda n: _args(obj_made, n), (1, 2))
    if torch_release() >= (2, 13):
        assert isinstance(found, AttributeError), found


# -- a plain object in a bare field: formatted where it stands (its str, object-str-repr's guarded repr), 2.5-2.13 --


class Plain:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Plain({self.v})"


class WithFormat(Plain):
    def __format__(self, spec):
        return f"WF<{self.v}:{spec}>"


def plain_written_before(x, n, p):
    p.v = n * 2
    made = Plain(n + 1)
    made.v = n + 2
    return x + 1, f"{p}", "{0}|{0}|{k}".format(p, k=made), "[{}]".format(made), p.v


def plain_with_spec(x, n, p):
    try:
        return x + 1, "{:>12}".format(p)
    except TypeError as error:  # object.__format__ takes only an empty spec
        return x - 1, str(error)


def plain_with_attribute(x, n, p):
    return x + 1, "{0.v}".format(p)


def own_format(x, n, p):
    return x + 1, "{}".format(WithFormat(n))


def test_a_plain_object_in_a_bare_field_is_formatted_where_it_stands():
    """Right under fullgraph before 2.14 (this patch's conversion, through object-str-repr's traced repr); 2.14+
    defer ``str.format`` of an object (the f-string alone is right there): a graph break."""
    found = eager_vs_compiled(plain_written_before, lambda n: (torch.ones(2) * n, n + 3, Plain(n)), (1, 2, 3))
    if OBJECT_FSTRING_RIGHT:
        assert is_break(found), found
    else:
        assert found is None, found


@pytest.mark.parametrize("fn", [plain_with_spec, plain_with_attribute, own_format], ids=lambda f: f.__name__)
def test_other_object_fields_are_right_or_break(fn):
    assert_right_break_or_native(NAME, fn, lambda n: (torch.ones(2) * n, n + 3, Plain(n)))


@pytest.mark.skipif(OBJECT_FSTRING_RIGHT, reason="object-str-repr applies before 2.14")
def test_without_object_str_repr_a_plain_object_breaks():
    """The conversion reads ``str(obj)`` through object-str-repr's guarded repr: without it, a graph break."""
    with without_patch("object-str-repr"):
        found = eager_vs_compiled(plain_written_before, lambda n: (torch.ones(2) * n, n + 3, Plain(n)), (1, 2))
    assert is_break(found), found
