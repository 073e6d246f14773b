"""The hash family never turns a graph break into a wrong compiled result (issue 26).

Measured before this change (``fullgraph=True``, backend eager, two calls with different
inputs, torch 2.5.1 and 2.12.1; on 2.10.0 for module hashing):

* ``hash-constant-fold`` (<2.13) made ``hash`` constant-foldable, so Dynamo folded ``hash(p)``
  for every tracker that is a Python constant: ``functools.partial`` (wrong on the first call),
  ``random.Random`` (both calls), NaN, an enum member whose ``__hash__`` reads state, a class
  whose metaclass defines ``__hash__`` (second call: the trace-time number). Without the patch
  (and now) each is ``Unsupported``. The patch now adds ``BuiltinVariable.call_hash`` and folds
  only values whose hash is a function of their (guarded) value.
* ``module-overridden-hash`` (2.10-2.12) hashed any module whose class defines ``__hash__`` by
  running it at trace time: a ``__hash__`` reading state the frame mutates (``m in s`` True
  where eager says False), one with side effects (run 11 times at trace time, never at run
  time), and the iteration order of a set of such modules (Dynamo's insertion order, CPython's
  hash order) were wrong. It now accepts only a provably identity-derived, pure ``__hash__``
  (TensorDictParams') and breaks on iterating such sets and on hashing after a mutation of a
  key the hash reads.
* ``unhashable-module`` read ``value._modules`` with ``getattr``: on the half-built copy
  ``copy.deepcopy`` makes, a ``__getattr__`` reading ``self._parameters`` recursed; under
  ``TDCOMPAT_STRICT=1`` that was ``TdcompatError`` (2.13/2.15 with tensordict's
  ``TensorDictModule``, whose ``__getattr__`` recurses while compiling; every release with the
  class here), a spurious warning otherwise.
"""

from __future__ import annotations

import enum
import functools
import random

import pytest
import torch
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied as _applied, last_json, run_python, same as _same, without_patch as _without

TORCH = parse_torch_version(torch.__version__).release[:2]


def _outcome(fn, *args):
    """``("ok", result)`` compiled with ``fullgraph=True`` on these very objects, or
    ``("break", message)``: the hashes of identity-hashed objects are compared, so eager and
    compiled must see the same objects."""
    try:
        return "ok", torch.compile(fn, backend="eager", fullgraph=True)(*args)
    except Unsupported as error:
        return "break", str(error).splitlines()[0]


# -- 1. hash() of an argument (hash-constant-fold) ------------------------------------------------
class Stateful(enum.Enum):
    A = 1

    def __hash__(self):  # reads state that is not the member's value
        return hash(self.value) + len(vars(self).get("extra", ()))


class HashMeta(type):
    def __hash__(cls):
        return 42 + cls.__dict__.get("k", 0)


class Classy(metaclass=HashMeta):
    pass


class Color(enum.IntEnum):
    RED = 1


class Named(str):
    def __hash__(self):
        return len(self) + Named.salt


Named.salt = 0


class Pair(tuple):
    pass


def _hash_input(kind: str, call: int):
    if kind == "partial":
        return functools.partial(max, call)
    if kind == "random":
        return random.Random(call)
    if kind == "nan":
        return float("nan")
    if kind == "enum_state":
        Stateful.A.extra = (0,) * call
        return Stateful.A
    if kind == "metaclass":
        Classy.k = call
        return Classy
    if kind == "int_enum":
        return Color.RED
    if kind == "str_subclass":
        Named.salt = call
        return Named("ab")
    if kind == "tuple_subclass":
        return Pair((call, "a"))
    raise AssertionError(kind)


def hash_of(p, x):
    return hash(p), x + 1


#: Measured natively (no tdcompat involved): 2.13.0 and 2.15.0 fold these to the trace-time value
#: (the metaclass'd class too, which metaclass-hash now traces: see test_metaclass_hash_runs_in_the_trace).
_WRONG_UPSTREAM = {"nan": (2, 13)}


@pytest.mark.parametrize("kind", ["partial", "random", "nan", "enum_state", "metaclass", "int_enum",
                                  "str_subclass", "tuple_subclass"])
def test_hash_not_a_function_of_a_guarded_value_is_never_folded(kind):
    """compiled == eager or a clean break, on both calls (identity hashes, user ``__hash__``,
    subclasses of the accepted types). Before this change 2.5-2.12 folded partial, Random, NaN,
    the enum member and the metaclass'd class to wrong numbers."""
    since = _WRONG_UPSTREAM.get(kind)
    if since and TORCH >= since:
        pytest.xfail(f"wrong natively on torch >= {since[0]}.{since[1]} (upstream generic_hash), tdcompat not involved")
    torch._dynamo.reset()
    for call in (1, 2):
        p, x = _hash_input(kind, call), torch.randn(2) * call
        expected = hash_of(p, x)
        state, got = _outcome(hash_of, p, x)
        if state == "ok":
            assert _same(got, expected), (kind, call, got, expected)
    torch._dynamo.reset()


class Token:
    pass


def hash_of_values(o, s, i, x):
    """TensorDictParams' shape and the accepted types: ids, str, int, bytes, None, a float,
    nested tuples."""
    return hash((id(o), s, i)), hash((b"k", None, 2.5, (s, (1, True)))), x * 2


def hash_of_frozenset(i, x):
    """A frozenset is accepted where Dynamo holds it as a constant (not on 2.5/2.6: a break there)."""
    return hash(frozenset({1, i})), x * 2


def test_hash_of_guarded_values_compiles_and_equals_eager():
    """Folded under ``fullgraph=True`` with different inputs on each call (a new object, another
    str, another int: guards make each call recompile where needed). Without the patch 2.5-2.12
    break; 2.13+ fold it natively."""
    torch._dynamo.reset()
    torch._dynamo.config.automatic_dynamic_shapes, saved = False, torch._dynamo.config.automatic_dynamic_shapes
    try:
        for call in (1, 2):
            args = (Token(), "s%d" % call, 10 + call, torch.randn(2) * call)
            state, got = _outcome(hash_of_values, *args)
            assert state == "ok", got
            assert _same(got, hash_of_values(*args))
            state, got = _outcome(hash_of_frozenset, 10 + call, args[-1])
            if state == "ok":  # a break where Dynamo does not hold the frozenset as a constant (2.5, 2.6)
                assert _same(got, hash_of_frozenset(10 + call, args[-1]))
        if TORCH < (2, 13):
            assert _applied("hash-constant-fold")
            with _without("hash-constant-fold"):
                state, got = _outcome(hash_of_values, Token(), "s", 1, torch.randn(2))
                assert state == "break", got
    finally:
        torch._dynamo.config.automatic_dynamic_shapes = saved
        torch._dynamo.reset()


# -- 2. modules whose class defines __hash__ in sets (module-overridden-hash) -------------------
CALLS: list = []


class IdHashed(torch.nn.Module):
    """tensordict's TensorDictParams.__hash__ (accepted: identity-derived and pure)."""

    def __init__(self, tag="m"):
        super().__init__()
        self.__dict__["_param_td"] = Token()
        self.tag = tag
        self.w = torch.nn.Parameter(torch.ones(2))

    def __hash__(self):
        return hash((id(self), id(self.__dict__.get("_param_td"))))


class ReadsState(torch.nn.Module):
    def __init__(self, k=1):
        super().__init__()
        self.k = k
        self.w = torch.nn.Parameter(torch.ones(2))

    def __hash__(self):
        return hash((id(self), self.k))


class Counting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(2))

    def __hash__(self):
        CALLS.append(1)
        return id(self)


class ValueHashed(torch.nn.Module):
    def __init__(self, h, tag):
        super().__init__()
        self.h, self.tag = h, tag
        self.w = torch.nn.Parameter(torch.ones(2))

    def __hash__(self):
        return self.h


def mutate_read_key(m, x):
    s = set()
    s.add(m)
    m.k = m.k + 1
    return x * m.w, m in s, len(s)


def rebind_hashed_key(m, x):
    s = set()
    s.add(m)
    m.__dict__["_param_td"] = Token()
    return x * m.w, m in s, len(s)


def setattr_hashed_key(m, x):
    s = {m}
    m._param_td = Token()
    s.add(m)
    return x * m.w, len(s)


def dict_key_rebound(m, x):
    d = {m: 1}
    m.__dict__["_param_td"] = Token()
    return x * m.w, m in d, len(d)


def count_hashes(m, x):
    s = set()
    s.add(m)
    return x * m.w, m in s, len(CALLS)


def iterate(a, b, x):
    s = set()
    s.add(a)
    s.add(b)
    return x * a.w, [m.tag for m in s]


def pop_one(a, b, x):
    s = {a, b}
    return x * a.w, s.pop().tag


def membership_only(a, b, x):
    """What ``named_modules()``' memo does: membership, never order."""
    memo = set()
    for m in (a, b, a):
        if m not in memo:
            memo.add(m)
            x = x * m.w
    seen = {a: "a", b: "b"}
    return x, len(memo), a in memo, seen[b], [v for v in seen.values()]


def _reversed_pair(cls, **kw):
    """Two modules whose CPython set order is the reverse of their insertion order (found by
    trying: the order follows their addresses)."""
    keep = []
    for _ in range(200):
        a, b = cls(tag="a", **kw), cls(tag="b", **kw)
        s = set()
        s.add(a)
        s.add(b)
        if [m.tag for m in s] == ["b", "a"]:
            return a, b
        keep.append((a, b))  # keep them alive: new addresses next time
    raise AssertionError("no pair in reversed hash order found")


def _module_inputs(name: str, call: int):
    CALLS.clear()
    if name == "mutate_read_key":
        return (ReadsState(call),)
    if name in ("rebind_hashed_key", "setattr_hashed_key", "dict_key_rebound"):
        return (IdHashed(),)
    if name == "count_hashes":
        return (Counting(),)
    if name in ("iterate", "pop_one"):
        return _reversed_pair(IdHashed)
    if name == "iterate_value_hashed":
        return (ValueHashed(2, "a"), ValueHashed(1, "b")) if call == 1 else (ValueHashed(1, "a"), ValueHashed(2, "b"))
    raise AssertionError(name)


_MODULE_SHAPES = {
    "mutate_read_key": mutate_read_key,
    "rebind_hashed_key": rebind_hashed_key,
    "setattr_hashed_key": setattr_hashed_key,
    "count_hashes": count_hashes,
    "dict_key_rebound": dict_key_rebound,
    "iterate": iterate,
    "pop_one": pop_one,
    "iterate_value_hashed": iterate,
}


@pytest.mark.parametrize("name", sorted(_MODULE_SHAPES))
def test_module_hash_never_wrong(name):
    """compiled == eager or a clean break, both calls. Before this change 2.10-2.12 returned
    ``m in s`` True for mutate_read_key (eager False), ``len(CALLS)`` 11 for count_hashes (eager
    2), ``['a', 'b']`` for iterate_value_hashed (eager ``['b', 'a']``). 2.5-2.9 and 2.13+ hash
    every module natively and iterate sets in insertion order: only 2.10-2.12 are tdcompat's."""
    if not (2, 10) <= TORCH < (2, 13):
        pytest.skip("module-overridden-hash applies to 2.10-2.12; elsewhere Dynamo's own set order is in play")
    assert _applied("module-overridden-hash")
    fn = _MODULE_SHAPES[name]
    torch._dynamo.reset()
    for call in (1, 2):
        x = torch.randn(2) * call
        expected = fn(*_module_inputs(name, call), x)
        state, got = _outcome(fn, *_module_inputs(name, call), x)
        if state == "ok":
            assert _same(got, expected), (name, call, got, expected)
    torch._dynamo.reset()


def test_module_hash_wrong_before_narrowing_is_a_break_now():
    """The shapes measured wrong with the old patch are breaks now (not merely equal by luck)."""
    if not (2, 10) <= TORCH < (2, 13):
        pytest.skip("module-overridden-hash applies to 2.10-2.12")
    for name in ("mutate_read_key", "count_hashes", "iterate", "iterate_value_hashed", "rebind_hashed_key",
                 "dict_key_rebound", "pop_one"):
        torch._dynamo.reset()
        state, got = _outcome(_MODULE_SHAPES[name], *_module_inputs(name, 1), torch.randn(2))
        assert state == "break", (name, got)
    torch._dynamo.reset()


def test_identity_hashed_membership_compiles():
    """TorchRL's need (named_modules' memo over TensorDictParams): membership and dict keys of
    identity-hashed modules compile under ``fullgraph=True`` on 2.10-2.12 with the patch, and
    break without it."""
    torch._dynamo.reset()
    for call in (1, 2):
        a, b, x = IdHashed("a"), IdHashed("b"), torch.randn(2) * call
        expected = membership_only(a, b, x)
        state, got = _outcome(membership_only, a, b, x)
        if (2, 10) <= TORCH < (2, 13):
            assert state == "ok", got
        if state == "ok":
            assert _same(got, expected), (got, expected)
    if (2, 10) <= TORCH < (2, 13):
        with _without("module-overridden-hash"):
            state, got = _outcome(membership_only, IdHashed("a"), IdHashed("b"), torch.randn(2))
            assert state == "break", got
    torch._dynamo.reset()


def test_hash_proof_grammar():
    """What the static check accepts: TensorDictParams' shape (and ``id(self)``), nothing that
    reads a value, calls anything else or has an effect."""
    from tdcompat.patches.module_overridden_hash import hash_keys

    def make(body):
        ns = {}
        exec(f"class C(torch.nn.Module):\n    def __hash__(self):\n        {body}\n", {"torch": torch}, ns)
        return ns["C"]

    assert hash_keys(IdHashed) == frozenset({"_param_td"})
    assert hash_keys(make("return id(self)")) == frozenset()
    assert hash_keys(make("return hash((id(self), 3, 'x'))")) == frozenset()
    for body in ("return hash((id(self), self.k))", "return self.h", "return id(self) + 1",
                 "return hash(self.__dict__.get('k'))", "return hash(str(id(self)))",
                 "print(1); return id(self)", "return id(self) if self else 0",
                 "return hash((id(self), id(self.__dict__['k'])))"):
        assert hash_keys(make(body)) is None, body
    assert hash_keys(ReadsState) is None and hash_keys(Counting) is None and hash_keys(ValueHashed) is None


# -- 3. unhashable-module never runs a user __getattr__ -----------------------------------------
_RECURSING = """
import copy, json, warnings
import torch
import tdcompat

class Recursing(torch.nn.Module):
    # tensordict's TensorDictModule.__getattr__ while compiling (2.13+): reads self._parameters,
    # which on the half-built copy copy.deepcopy makes is __getattr__ again
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def __getattr__(self, name):
        params = self._parameters
        if name in params:
            return params[name]
        return super().__getattr__(name)

    def __setstate__(self, state):
        self.__dict__.update(state)

def f(m, x):
    c = copy.deepcopy(m)
    c.lin.bias.data.add_(1.0)
    return c.lin(x) + 1, c.lin.bias

m = Recursing()
cf = torch.compile(f, backend="eager")
out = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for call in (1, 2):
        x = torch.randn(2) * call
        e = f(m, x)
        try:
            g = cf(m, x)
            out.append(all(torch.allclose(a, b) for a, b in zip(e, g)))
        except Exception as error:
            out.append(f"{type(error).__name__}: {str(error)[:300]}")
state = {s.name: s.state.value for s in tdcompat.status()}["unhashable-module"]
print(json.dumps({"out": out, "state": state,
                  "warnings": [str(w.message)[:300] for w in caught if "tdcompat" in str(w.message)]}))
"""


@pytest.mark.parametrize("strict", ["1", "0"])
def test_half_built_module_is_not_inspected_through_getattr(strict):
    """A module whose ``__getattr__`` recurses on an empty ``__dict__``, deep-copied (graph
    break at ``deepcopy``; Dynamo then compiles ``__setstate__`` with the half-built copy as
    ``self``). Before the fix: ``TdcompatError`` (RecursionError in ``_wrap_module``) under
    strict mode, a ``TdcompatWarning`` otherwise, on every release."""
    result = last_json(run_python(_RECURSING, env={"TDCOMPAT_STRICT": strict}))
    assert result["state"] == "applied"
    assert result["out"] == [True, True], result
    assert result["warnings"] == [], result



# -- 4. hash() of a class whose metaclass defines __hash__ (metaclass-hash, 2.13+) ----------------
SALT = [0]


class SaltedMeta(type):
    def __hash__(cls):  # reads state: another number on every call below
        return len(cls.__name__) * 1000 + SALT[0]


class Salted(metaclass=SaltedMeta):
    pass


def hash_salted(x):
    h = hash(Salted)
    return x + h % 7, h, {Salted: 1}[Salted], Salted in {Salted, 1}


@pytest.mark.skipif(TORCH < (2, 13), reason="hash(cls) is a graph break before 2.13")
@pytest.mark.parametrize("fullgraph", [True, False])
def test_metaclass_hash_runs_in_the_trace(fullgraph):
    """``hash(K)`` where ``type(K).__hash__`` reads state: eager's number on every call. Without
    metaclass-hash 2.13.0 and 2.15.0 return the first call's number on the later calls (measured)."""
    def run():
        compiled = torch.compile(hash_salted, backend="eager", fullgraph=fullgraph)
        for call in (1, 2, 3):
            SALT[0] = call
            x = torch.randn(3)
            if not _same(hash_salted(x), compiled(x)):
                return f"wrong on call {call}"
        return "ok"

    torch._dynamo.reset()
    assert run() == "ok"
    with _without("metaclass-hash"):
        assert run() == "wrong on call 2"
