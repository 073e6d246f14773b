"""set-subclass-inplace: ``u &= s`` (``|=``, ``-=``, ``^=``) on a set subclass keeps ``u`` (torch 2.9-2.14).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value
(``u``, the alias taken before, ``u is k``), the set passed in after the call (a later ``u.add`` must reach it).
The four in-place operators on a subclass built in the frame and on one passed in, with a ``set``, a
``frozenset`` or another subclass instance as operand, and the explicit ``u.__iand__(s)``; a class with its own
dunder, the binary operators and other set methods stay Dynamo's. Without the patch (reverted in-process) the
operator shapes are wrong on 2.9-2.14: asserted. 2.5-2.8 graph-break (not this patch's range).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "set-subclass-inplace"
TORCH = parse_torch_version(torch.__version__).release[:2]
IN_RANGE = (2, 9) <= TORCH < (2, 15)


class USet(set):
    pass


class Tagged(set):
    tag = "t"


class OwnIand(set):
    def __iand__(self, other):
        self.discard("z")
        return ("own", len(other))


OPERATORS = ("&=", "|=", "-=", "^=")
OPERANDS = {"set": "{'a', 'c', n}", "frozenset": "frozenset({'a', n})", "subclass": "USet({'a', 'q'})"}


def _shape(where, op, operand):
    if where == "built":
        src = (f"def shape(x, u, n):\n    u = Tagged({{'a', 'z', n}})\n    k = u\n    u {op} {OPERANDS[operand]}\n"
               f"    u.add('w')\n    return x + len(u), u, k, u is k, type(u).__name__\n")
    else:
        src = (f"def shape(x, u, n):\n    k = u\n    u {op} {OPERANDS[operand]}\n    u.add('w')\n"
               f"    return x + len(k), u is k, type(u).__name__\n")
    namespace = {"USet": USet, "Tagged": Tagged}
    exec(compile(src, f"<{where} {op} {operand}>", "exec"), namespace)
    fn = namespace["shape"]
    fn.__name__ = f"{where}_{op[0]}_{operand}".replace("&", "and").replace("|", "or").replace("-", "sub") \
        .replace("^", "xor")
    return fn


def explicit(x, u, n):
    """``u.__iand__(s)`` spelled out: CPython's returns ``u`` itself."""
    r = u.__iand__({"a", "z", n})
    r.add("w")
    return x + 1, r is u, type(r).__name__


SHAPES = {f.__name__: f for f in [_shape(w, op, o) for w in ("built", "passed") for op in OPERATORS
                                  for o in OPERANDS] + [explicit]}


def own_dunder(x, u, n):
    """A class with its own ``__iand__``: its answer, not the instance."""
    o = OwnIand({"a", "z"})
    k = o
    o &= {"a", n}
    return x + 1, o, sorted(map(repr, k))


def binary_and_methods(x, u, n):
    """The binary operators build a new ``set``; the named methods update in place."""
    v = u & {"a", n}
    w = u | {"q"}
    u.intersection_update({"a", "b", "z", n})
    u.update({"m"})
    return x + len(v), v, w, type(v).__name__, sorted(map(repr, u))


KEPT = {f.__name__: f for f in (own_dunder, binary_and_methods)}


def _make(n):
    return torch.arange(3.0) * n, Tagged({"a", "b", "z", n}), n


@pytest.mark.skipif(TORCH < (2, 9), reason="2.5-2.8: a graph break, not this patch's range")
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_in_place_operator_keeps_the_instance(name):
    assert eager_vs_compiled(SHAPES[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(TORCH < (2, 9), reason="2.5-2.8: a graph break, not this patch's range")
@pytest.mark.parametrize("name", sorted(KEPT))
def test_other_shapes_stay_dynamos(name):
    assert eager_vs_compiled(KEPT[name], _make, (1, 2, 3)) is None


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.9,<2.15")
def test_without_the_patch_it_fails():
    with without_patch(NAME):
        failing = sorted(name for name, fn in SHAPES.items() if eager_vs_compiled(fn, _make, (1, 2)) is not None)
    assert failing == sorted(SHAPES)
