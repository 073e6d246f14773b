"""dict-key-partial-identity: a ``functools.partial`` is one object, compared by identity (torch <2.13).

Each test compiles with ``fullgraph=True``, calls twice with different inputs and compares
with eager (return value and the inputs after the call); without the patch (reverted
in-process) the shape is asserted to be wrong on the releases the patch applies to.
"""

from __future__ import annotations

import functools

import pytest
import torch
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, same, without_patch

NAME = "dict-key-partial-identity"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 13)


def _scale(x, k=1):
    return x * k


def _outcome(fn, make):
    """'ok', 'wrong' or 'break' for two calls with different inputs."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    for seed in (1, 2):
        expected = fn(*make(seed))
        try:
            got = compiled(*make(seed))
        except Unsupported:
            return "break"
        if not same(expected, got):
            return "wrong"
    return "ok"


def _tensor(seed):
    return (torch.full((2,), float(seed)),)


_PARTIALS = {}


def _input_partial(seed):
    """The same partial object for the same seed (an input read twice is one object)."""
    return _PARTIALS.setdefault(seed, functools.partial(_scale, k=seed)), torch.full((2,), float(seed))


def member_of_its_set(x):
    p = functools.partial(_scale, k=2)
    s = {p, 1, "s"}
    return p in s, 3 in s, len(s), p(x)


def equal_to_itself(x):
    p = functools.partial(_scale, k=2)
    q = p
    return p == q, p != p, p == functools.partial(_scale, k=2), x + 1


def two_equal_partials_are_two_members(x):
    p = functools.partial(_scale, k=2)
    q = functools.partial(_scale, k=2)
    return len({p, q, p}), q in {p}, x - 1


def dict_keyed_by_partial(x):
    p = functools.partial(_scale, k=3)
    q = functools.partial(_scale, k=3)
    d = {p: x, q: x + 1}
    d[p] = d[p] * 2
    return len(d), d[p], d[q], p in d


def through_a_list(x):
    p = functools.partial(_scale, k=2)
    items = [p, 1]
    return items[0] in {p}, items[0] == p, x + 2


def input_as_member(p, x):
    return p in {p, 1}, len({p, p}), p(x)


MADE = [member_of_its_set, equal_to_itself, two_equal_partials_are_two_members, dict_keyed_by_partial,
        through_a_list]


def _expected(fn):
    """2.7 raises an observed exception comparing two partials with ``==``, with and without tdcompat."""
    return "break" if fn in (equal_to_itself, through_a_list) and TORCH == (2, 7) else "ok"


@pytest.mark.parametrize("fn", MADE, ids=[f.__name__ for f in MADE])
def test_partial_made_in_frame(fn):
    assert applied(NAME) == NEEDED
    assert _outcome(fn, _tensor) == _expected(fn)
    if _expected(fn) == "break":
        with without_patch(NAME):
            assert _outcome(fn, _tensor) == "break"


def test_without_the_patch_partials_are_wrong():
    if not NEEDED:
        pytest.skip("2.13+ compare partials by identity natively")
    with without_patch(NAME):
        outcomes = {fn.__name__: _outcome(fn, _tensor) for fn in MADE}
    assert "wrong" in outcomes.values(), outcomes
    assert outcomes["equal_to_itself"] == ("break" if TORCH == (2, 7) else "wrong")  # `p == p` is False


def test_input_partial_is_right_or_a_break():
    """An input partial as a set member: a graph break with tdcompat on 2.5-2.9 (wrong natively),
    right elsewhere."""
    got = _outcome(input_as_member, _input_partial)
    assert got in ("ok", "break")
    if TORCH < (2, 10):
        assert got == "break"
        with without_patch(NAME):
            assert _outcome(input_as_member, _input_partial) == "wrong"
    else:
        assert got == "ok"
