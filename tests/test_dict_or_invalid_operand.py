"""dict-or-invalid-operand: ``d | 1`` and ``d |= None`` raise CPython's TypeError in compiled code (torch 2.8-2.12).

Compiled with ``fullgraph=True`` and compared with eager on two calls with different inputs: the
return value (the exceptions' texts included) and the dict after the call. Without the patch
(reverted in-process) the accepted shapes crash the compile on 2.8-2.10 and read another text on
2.11-2.12; the shapes the patch defers are right or fail exactly as without it.
"""

from __future__ import annotations

import collections
import operator

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import InternalTorchDynamoError, Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, without_patch

NAME = "dict-or-invalid-operand"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = (2, 8) <= TORCH < (2, 13)


def or_numbers(d, x):
    out = []
    for b in (1, 2.5, True, None, 1j, "ab", b"b", (1, 2), [("k", 1)]):
        try:
            out.append(d | b)
        except TypeError as error:
            out.append(str(error))
    return out, x + 1


def ior_numbers(d, x):
    out = []
    for b in (3, None, False):
        try:
            d |= b
        except TypeError as error:
            out.append(str(error))
    return out, d, x + 1


def made_in_frame(x):
    d = {"a": x}
    try:
        d = d | 0
    except TypeError as error:
        return str(error), d, x - 1
    return "no error", d, x + 1


def _dict(seed):
    torch.manual_seed(seed)
    d = {"a": torch.randn(2)}
    if seed:
        d["b"] = torch.ones(2)
    return d, torch.randn(2)


def _x(seed):
    torch.manual_seed(seed)
    return (torch.randn(2),)


ACCEPTED = [("or_numbers", or_numbers, _dict), ("ior_numbers", ior_numbers, _dict),
            ("made_in_frame", made_in_frame, _x)]


def _run(fn, make):
    return eager_vs_compiled(fn, make)


@pytest.mark.parametrize("fn,make", [a[1:] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_dict_or_a_number_raises_type_error_as_eager(fn, make):
    assert applied(NAME) == NEEDED
    failure = _run(fn, make)
    if TORCH >= (2, 8):
        assert failure is None
    else:  # 2.5-2.7: "constant fold exception", a graph break
        assert isinstance(failure, Unsupported), failure


@pytest.mark.skipif(not NEEDED, reason="the patch applies on 2.8-2.12")
@pytest.mark.parametrize("fn,make", [a[1:] for a in ACCEPTED if a[0] != "made_in_frame"],
                         ids=[a[0] for a in ACCEPTED if a[0] != "made_in_frame"])
def test_without_the_patch_it_crashes_or_reads_another_text(fn, make):
    """``|``: a crash on 2.8-2.10, "'dict'and 'int'" on 2.11-2.12; ``|=``: a crash on 2.8,
    "<class 'int'> object is not iterable" on 2.9, right on 2.10-2.12."""
    with without_patch(NAME):
        failure = _run(fn, make)
    if fn is or_numbers and TORCH >= (2, 11):
        assert isinstance(failure, str) and "'dict'and" in failure, failure
    elif fn is or_numbers or TORCH == (2, 8):
        assert isinstance(failure, InternalTorchDynamoError), failure
    elif TORCH == (2, 9):
        assert isinstance(failure, str) and "<class 'int'>" in failure, failure
    else:
        assert failure is None


class Reflected:
    """Defines ``__ror__``: CPython's ``d | Reflected()`` calls it."""

    def __ror__(self, other):
        return ("ror", len(other))


def ior_pairs(d, x):
    d |= [("k", 1)]
    return d, x + 1


def ior_string(d, x):
    try:
        d |= "ab"
    except (TypeError, ValueError) as error:
        return type(error).__name__, x
    return d, x


def dunder_or(d, x):
    return d.__or__(1), x + 1


def operator_or(d, x):
    try:
        return operator.or_(d, 1), x
    except TypeError as error:
        return str(error), x


def ordered(d, x):
    try:
        return collections.OrderedDict(d) | 1, x
    except TypeError as error:
        return str(error), x


def reflected(d, x):
    return d | Reflected(), x + 1


DEFERRED = [("ior_pairs", ior_pairs), ("ior_string", ior_string),
            ("dunder_or", dunder_or), ("operator_or", operator_or), ("ordered", ordered), ("reflected", reflected)]


@pytest.mark.skipif(not NEEDED, reason="the patch applies on 2.8-2.12")
@pytest.mark.parametrize("fn", [d[1] for d in DEFERRED], ids=[d[0] for d in DEFERRED])
def test_other_operands_are_never_worse(fn):
    """Right, or failing exactly as without the patch (2.11-2.12 word ``operator.or_(d, 1)`` and an
    OrderedDict's TypeError wrongly by themselves: the same difference both ways)."""
    failure = _run(fn, _dict)
    if failure is None:
        return
    with without_patch(NAME):
        unpatched = _run(fn, _dict)
    assert type(unpatched) is type(failure), (failure, unpatched)
    if isinstance(failure, str):
        assert failure == unpatched
