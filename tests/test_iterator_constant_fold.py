"""iterator-constant-fold: a builtin called on a fresh iterator over constants consumes *that* iterator (2.5-2.15).

``sum``, ``all``, ``any``, ``max``, ``min``, ``sorted``, ``set``, ``tuple``, ``list`` and ``str.join`` of an iterator
made by ``iter()`` over constants, then the iterator read again in the same frame; the iterator's other uses
(truth, a loop, ``zip``, ``enumerate``, returned, passed on) must stay right. Compiled with ``fullgraph=True``
and compared with eager on calls with different inputs. Without the patch (reverted in-process) ``sum``/``all``/
``any`` are wrong on every release: asserted.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, is_break, without_patch

NAME = "iterator-constant-fold"
RELEASE = parse_torch_version(torch.__version__).release[:2]

CONSUMERS = {
    "sum": sum, "all": all, "any": any, "max": max, "min": min, "sorted": sorted, "set": lambda it: sorted(set(it)),
    "tuple": tuple, "list": list, "join": lambda it: "-".join(map(str, it)), "any_or": lambda it: any(it) or 5,
}
#: Wrong without the patch (tdcompat's other patches applied) on every release 2.5-2.15 (measured); ``sum`` from
#: 2.6 (2.5 does not fold it there: iterator-consumption's unpack consumes it); the others on 2.5-2.8 only.
EVERYWHERE = ("all", "any", "any_or") + (("sum",) if RELEASE >= (2, 6) else ())


def _make(n):
    return torch.arange(3.0) * n, n


def _consumed(consume):
    def fn(x, n):
        it = iter([1, 0, 2, 3] if n % 2 else (0, 2, 1))
        first = consume(it)
        return x + 1, first, list(it)
    fn.__name__ = consume.__name__
    return fn


@pytest.mark.parametrize("name", sorted(CONSUMERS))
def test_equals_eager(name):
    found = eager_vs_compiled(_consumed(CONSUMERS[name]), _make, (3, 4, 5))
    assert found is None or (is_break(found) and name in ("max", "min")), found  # 2.5: max/min of an iterator break


@pytest.mark.parametrize("name", EVERYWHERE)
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(_consumed(CONSUMERS[name]), _make, (3, 4, 5))
    assert found is not None and not is_break(found), found


def truth(x, n):
    it = iter([1, 2])
    empty = iter(())
    return (x + 1 if it else x), (1 if empty else 0), list(it)


def loop_then_rest(x, n):
    it = iter([1, n, 3])
    for v in it:
        if v == 1:
            break
    return x + v, list(it)


def zipped(x, n):
    it = iter([1, 2, 3])
    return x + 1, list(zip(it, "ab")), list(it)


def enumerated(x, n):
    it = iter(("a", "b"))
    return x + 1, list(enumerate(it)), list(it)


def returned(x, n):
    it = iter([1, 2, 3])
    next(iter([0]))
    return x + 1, it


def helper(it):
    return next(it), sum(it)


def passed_on(x, n):
    it = iter([4, 5, 6])
    return x + 1, helper(it), list(it)


OTHER_USES = {f.__name__: f for f in (truth, loop_then_rest, zipped, enumerated, passed_on)}


@pytest.mark.parametrize("name", sorted(OTHER_USES))
def test_other_uses_stay_right(name):
    found = eager_vs_compiled(OTHER_USES[name], _make, (3, 4))
    assert found is None, found


def test_returned_iterator_as_without_the_patch():
    """Dynamo rebuilds a returned iterator as a ``tuple_iterator`` (advanced or not, with or without tdcompat):
    native, left alone; its items are right."""
    assert_right_break_or_native(NAME, returned, _make, (3, 4))
