"""builtin-format: ``format(value[, spec])`` compared with eager (every release, 2.5-2.15).

Constants of every pure type with specs that change the text (``x``, ``>6``, ``.3f``, ``,``, ``+e``), a dynamic
int (the second call's other value turns it symbolic), a default spec, the result written to an object and read
back in the frame: compiled with ``fullgraph=True`` and compared with eager on calls with different inputs (the
return value and the inputs after the call). A user object, a tensor, a bad spec, a non-str spec and keywords
are a clean graph break or right, never a wrong value or a crash. Without the patch (reverted in-process) the
shapes are wrong on 2.7-2.15 and crash on 2.5-2.6: ``test_without_the_patch_it_fails`` asserts that.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.dynamo_api import torch_release

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "builtin-format"


class Box:
    def __init__(self, n, label):
        self.n, self.label, self.text = n, label, ""


class Fmt:
    """A class with its own ``__format__``."""

    def __init__(self, n):
        self.n = n

    def __format__(self, spec):
        return f"Fmt<{self.n}:{spec}>"


def hex_int(x, b):
    b.text = format(b.n, "x")
    return x + 1, b.text, format(b.n * 2, "08b")


def padded_str(x, b):
    return x + len(b.label), format(b.label, ">6"), format(b.label, "^7"), format(b.label)


def float_specs(x, b):
    v = len(b.label) / 3 + 85  # a constant float (b.n / 3 turns symbolic: see string-format-deferred)
    return x + 1, format(v, ".3f"), format(v, "+e"), format(b.n * 1000, ","), format(v)


def mixed(x, b):
    return x + 1, format(True, "d"), format(None), format(2 + 1j, ".1f"), format(b.n)


SHAPES = {f.__name__: f for f in (hex_int, padded_str, float_specs, mixed)}


def _make(n):
    return torch.arange(3.0) * n, Box(255 + n, "ab" * n)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3)) is None


def dynamic_int(x, n):
    return x + 1, format(n, "x"), format(n)


def test_a_dynamic_int_is_formatted_after_the_graph():
    """The second call's other int makes ``n`` symbolic: formatted from the graph's output, right."""
    assert eager_vs_compiled(dynamic_int, lambda n: (torch.ones(2) * n, 250 + n), (1, 2, 3)) is None


def user_format(x, f):
    return x + 1, format(f, "spec")


def user_default(x, f):
    return x + 1, format(f)


def bad_spec(x, b):
    try:
        return x + 1, format(b.n, "q")
    except ValueError as error:
        return x - 1, str(error)


def spec_not_str(x, b):
    try:
        return x + 1, format(b.n, 5)
    except TypeError as error:
        return x - 1, str(error)


def tensor(x, b):
    return x + 1, format(x.sum())


def braces(x, b):
    try:
        return x + 1, format(b.label, "{")
    except ValueError as error:
        return x - 1, str(error)


def user_format_braces(x, f):
    return x + 1, format(f, "{}")


@pytest.mark.parametrize("fn", [user_format, user_default, bad_spec, spec_not_str, tensor, braces],
                         ids=lambda f: f.__name__)
def test_never_worse(fn):
    """Right or a clean graph break (eager then raises what CPython raises), never a wrong value or a crash."""
    make = (lambda n: (torch.ones(2) * n, Fmt(n))) if fn in (user_format, user_default) else _make
    assert_right_break_or_native(NAME, fn, make)


@pytest.mark.skipif(torch_release() < (2, 9), reason="2.5-2.8 raise only a few exceptions inside the trace")
@pytest.mark.parametrize("fn", [bad_spec, spec_not_str], ids=lambda f: f.__name__)
def test_an_invalid_call_raises_inside_the_trace(fn):
    """CPython's exception, caught in the frame: right under fullgraph (a constant int: a symbolic one breaks)."""
    assert eager_vs_compiled(fn, lambda n: (torch.ones(2) * n, Box(255, "a" * n)), (1, 2)) is None


def test_braces_in_the_spec_of_an_object_break():
    assert is_break(eager_vs_compiled(user_format_braces, lambda n: (torch.ones(2), Fmt(n)), (1,)))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_without_the_patch_it_fails(name):
    """2.7-2.15: the value itself (wrong); 2.5-2.6: the str unpadded, an int crashes the compile."""
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert found is not None
    if torch_release() >= (2, 7):
        assert isinstance(found, str), found  # a wrong value, not an exception
