"""The "unhashable-module" patch, tested the way PyTorch's test/dynamo tests are written.

``test_unhashable_mapping_module`` is the test proposed upstream in
docs/upstream/unhashable-module/. In this process tdcompat is active
(conftest imports it); ``test_fails_without_the_patch`` runs the same body in a
fresh interpreter with ``TDCOMPAT_DISABLE=unhashable-module`` and asserts that
it fails there, on every torch tdcompat supports (the gap is open up to 2.15).
"""

import collections.abc
import json
import os
import subprocess
import sys
import textwrap

import torch
import torch._dynamo
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter

import tdcompat  # noqa: F401  (also imported by conftest; needed when run as a script)

try:  # PyTorch's own base class; it needs ``expecttest``, which is not a torch dependency
    from torch._dynamo.test_case import TestCase
except ImportError:  # pragma: no cover - depends on the environment
    import unittest

    class TestCase(unittest.TestCase):
        """What ``torch._dynamo.test_case.TestCase`` does that these tests rely on."""

        def setUp(self):
            super().setUp()
            torch._dynamo.reset()

        def tearDown(self):
            torch._dynamo.reset()
            super().tearDown()

        def assertEqual(self, first, second, msg=None):  # unittest API
            if isinstance(first, torch.Tensor) or isinstance(second, torch.Tensor):
                torch.testing.assert_close(first, second, msg=msg)
            else:
                super().assertEqual(first, second, msg)


class M(torch.nn.Module, collections.abc.MutableMapping):
    # nn.Module + MutableMapping without __hash__: Mapping sets __hash__ = None
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(()))
        self.register_buffer("shift", torch.zeros(3))
        self._store = {"a": torch.randn(3), "b": torch.randn(3)}

    def __getitem__(self, key):
        return self._store[key]

    def __setitem__(self, key, value):
        self._store[key] = value

    def __delitem__(self, key):
        del self._store[key]

    def __iter__(self):
        return iter(self._store)

    def __len__(self):
        return len(self._store)


class Parent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.maps = M()

    def forward(self, x):
        return self.lin(x) * self.maps.scale + self.maps["a"]


def use_items(m, x):
    return m["a"] * m.scale + m["b"] + m.shift + x


def use_dict(m, x):
    d = dict(m)
    return d["a"] * m.scale + d["b"] + m.shift + x


class UnhashableModuleTests(TestCase):
    def test_unhashable_mapping_module(self):
        torch.manual_seed(0)
        m = M()
        self.assertIsNone(type(m).__hash__)
        x = torch.randn(3)
        for fn in (use_items, use_dict):
            torch._dynamo.reset()
            cnt = CompileCounter()
            opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
            self.assertEqual(opt_fn(m, x), fn(m, x))
            self.assertEqual(opt_fn(m, x + 1), fn(m, x + 1))
            self.assertEqual(cnt.frame_count, 1)

    def test_unhashable_submodule_of_hashable_module(self):
        torch.manual_seed(0)
        p = Parent()
        x = torch.randn(3)
        cnt = CompileCounter()
        opt_p = torch.compile(p, backend=cnt, fullgraph=True)
        self.assertEqual(opt_p(x), p(x))
        self.assertEqual(cnt.frame_count, 1)

    def test_parameters_still_marked_static_and_module_left_as_is(self):
        m = M()
        before = dict(vars(m))
        torch.compile(use_items, backend="eager", fullgraph=True)(m, torch.randn(3))
        self.assertEqual(getattr(m.scale, "_dynamo_static_input_type", None), "unguarded")
        self.assertEqual(getattr(m.shift, "_dynamo_static_input_type", None), "unguarded")
        self.assertEqual(set(vars(m)), set(before))
        self.assertNotIn("named_modules", vars(m))

    def test_eager_walk_still_raises(self):
        # The patch changes Dynamo's bookkeeping only: nn.Module's own walk is untouched.
        with self.assertRaises(TypeError):
            list(M().parameters())

    def test_fails_without_the_patch(self):
        code = textwrap.dedent(
            """
            import json, sys, torch, tdcompat
            sys.path.insert(0, {tests!r})
            from test_unhashable_module import M, use_items
            status = {{s.name: s.state.value for s in tdcompat.status()}}
            m = M()
            try:
                torch.compile(use_items, backend="eager", fullgraph=True)(m, torch.randn(3))
                outcome = "compiled"
            except Exception as exc:
                outcome = f"{{type(exc).__name__}}: {{exc}}"
            print(json.dumps({{"status": status["unhashable-module"], "outcome": outcome}}))
            """
        ).format(tests=os.path.dirname(os.path.abspath(__file__)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
        env["TDCOMPAT_DISABLE"] = "unhashable-module"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        self.assertEqual(result["status"], "disabled")
        self.assertNotEqual(result["outcome"], "compiled")
        # 2.5-2.7 surface the TypeError itself; 2.8+ wrap it as "Observed exception".
        text = result["outcome"] + proc.stderr
        self.assertTrue("unhashable type" in text or "Observed exception" in text, text[-2000:])


if __name__ == "__main__":
    try:
        from torch._dynamo.test_case import run_tests
    except ImportError:  # pragma: no cover
        from unittest import main as run_tests
    run_tests()


# -- the module used as a dict key or set member (issue 26: fresh fuzz seeds on 2.7.1, 2.9.1, 2.12.1) --------
TORCH_RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


def keyed_in_try(m, x):
    try:
        d = {m: "h"}
        return x + len(d), "no error"
    except TypeError:
        return x - 1, "TypeError"


def member_in_try(m, x):
    try:
        return x + 1, m in {1, 2}
    except TypeError:
        return x - 1, "TypeError"


def _key_outcome(fn, fullgraph):
    """'ok', 'break' (Dynamo's Unsupported under fullgraph=True) or the exception's name."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
    for n in (1, 2):
        m, x = M(), torch.full((3,), float(n))
        expected = fn(m, x)
        try:
            got = compiled(m, x)
        except torch._dynamo.exc.Unsupported:
            return "break"
        except Exception as error:  # noqa: BLE001 - the outcome is the exception's type
            return type(error).__name__
        if not (torch.equal(got[0], expected[0]) and got[1] == expected[1]):
            return "wrong"
    return "ok"


def test_unhashable_module_as_dict_key_raises_typeerror_in_the_trace():
    """``{m: v}`` raises TypeError as eager does: the user's ``except TypeError`` runs. Once
    ``wrap_module`` succeeded, Dynamo's own ``hash(m)`` escaped as InternalTorchDynamoError (2.7-2.12,
    a working program made to raise; 2.5-2.6 cannot raise TypeError in the trace: a break)."""
    assert _key_outcome(keyed_in_try, fullgraph=False) == "ok"
    assert _key_outcome(keyed_in_try, fullgraph=True) in (("break",) if TORCH_RELEASE < (2, 7) else ("ok",))


def test_unhashable_module_set_membership_raises_typeerror_in_the_trace():
    """``m in {1, 2}`` raises TypeError as eager does. 2.9-2.12's CONTAINS_OP catches a TypeError out
    of ``__contains__`` and iterates with ``==`` (False where eager raises); deferring there let
    Dynamo's own ``hash(m)`` escape as InternalTorchDynamoError (a working program made to crash,
    measured on 2.9.1-2.12.1). 2.5-2.6 cannot raise TypeError in the trace: a break."""
    for fullgraph in (False, True):
        got = _key_outcome(member_in_try, fullgraph)
        assert got == ("break" if fullgraph and TORCH_RELEASE < (2, 7) else "ok"), (fullgraph, got)


def membership_messages(m, x):
    """Each hashed container raises with CPython's message; a list compares with ``==``."""
    out = []
    for s in ({1, 2}, {"k": 1}, {1: 2}.keys(), frozenset({3})):
        try:
            out.append(m in s)
        except TypeError as error:
            out.append(str(error))
    try:
        out.append(m not in {1})
    except TypeError:
        out.append("TE")
    out.append(m in [1, 2])
    return x + len(out), tuple(out)


def test_unhashable_module_membership_message_is_cpythons():
    """``str(e)`` of the TypeError is ``unhashable type: 'M'``, as in eager (2.8 lost it: the
    exception was raised without its argument). 2.7 cannot read it back under fullgraph=True."""
    assert _key_outcome(membership_messages, fullgraph=False) == "ok"
    assert _key_outcome(membership_messages, fullgraph=True) == (
        "break" if TORCH_RELEASE < (2, 8) else "ok")


class HashedByAttr(torch.nn.Module):
    """A module whose own ``__hash__`` reads an attribute (a user hash that can fail)."""

    def __init__(self, n):
        super().__init__()
        self.a = n
        self.lin = torch.nn.Linear(3, 3)

    def __hash__(self):
        return self.a

    def __eq__(self, other):
        return self is other


def delete_then_break(m, x):
    del m.a
    try:
        seen = m.a
    except AttributeError:
        seen = "AttributeError"
    torch._dynamo.graph_break()
    m.sub = torch.nn.ReLU()
    return x + 1, seen


def test_user_hash_is_not_called_by_dynamos_walk():
    """After ``del m.a`` and a graph break, Dynamo wraps ``m`` again in the resumed frame; its
    parameter walk hashed the module with the user's ``__hash__``, which now raised
    (InternalTorchDynamoError on 2.5-2.9 with tdcompat: ``del m.a`` traces there). Eager never
    hashes it. Compiled equals eager, the object's state included, for two inputs."""
    torch._dynamo.reset()
    compiled = torch.compile(delete_then_break, backend="eager")
    for n in (1, 2):
        eager_m, compiled_m, x = HashedByAttr(n), HashedByAttr(n), torch.full((3,), float(n))
        expected = delete_then_break(eager_m, x)
        got = compiled(compiled_m, x)
        assert torch.equal(got[0], expected[0]) and got[1] == expected[1]
        assert sorted(vars(compiled_m)) == sorted(vars(eager_m))
        assert type(compiled_m.sub) is torch.nn.ReLU and not hasattr(compiled_m, "a")


# -- the walk's per-trace memory of clean trees (a tree found clean may gain an unhashable module later) ------
class Holder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Sequential(torch.nn.ReLU()))

    def forward(self, x):
        out = self.inner(x)
        extra = self.__dict__["_modules"].get("late")
        return out + (extra["a"] * extra.scale if extra is not None else 0)


def test_tree_that_gains_an_unhashable_module_between_compiles():
    """The first compile walks a clean tree (and remembers it for that trace only); an unhashable
    module added under a submodule before the next compile must still be walked by id, not hashed:
    both calls equal eager under fullgraph, with different inputs."""
    torch.manual_seed(0)
    h = Holder()
    compiled = torch.compile(h, backend="eager", fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), h(x))
    h.inner[0].add_module("deep", M())  # the unhashable module, two levels down (Linear never calls it)
    h.add_module("late", M())
    y = torch.randn(3)
    torch.testing.assert_close(compiled(y), h(y))
    assert "named_modules" not in vars(h) and "named_modules" not in vars(h.inner)
