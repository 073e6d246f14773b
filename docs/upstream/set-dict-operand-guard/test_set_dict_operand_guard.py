# Owner(s): ["module: dynamo"]
"""A set built from the keys of a dict passed in guards those keys.

``SetVariable._iter_operand_keys`` / ``_operand_keys`` (``BaseSetVariable`` on
2.15), ``DictKeySetVariable._as_set_variable`` (torch/_dynamo/variables/sets.py)
and ``BuiltinVariable.call_frozenset`` (builtin.py) reuse a dict operand's hashed
keys instead of iterating it (do-not-rehash), which skipped the keys guard that
iterating installs: code compiled for one input dict was reused for a later dict
with other keys, so ``set(d)`` kept the first call's keys.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


def set_of(d, x):
    return x + len(set(d)), sorted(set(d))


def frozenset_of(d, x):
    return x * 2, sorted(frozenset(d))


def unpacked(d, x):
    return x - 1, sorted({*d})


def updated(d, x):
    s = {"a", "z"}
    s.update(d)
    return x * 3, sorted(s)


def union(d, x):
    return x + 1, sorted({"z"}.union(d))


class SetDictOperandGuardTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, kind=dict):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for keys in ({"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}, {"a": 1}):
            x = torch.randn(3)
            self.assertEqual(compiled(kind(keys), x), fn(kind(keys), x))
        self.assertEqual(cnt.frame_count, 3)

    def test_set(self):
        self._check(set_of)

    def test_frozenset(self):
        self._check(frozenset_of)

    def test_unpacked(self):
        self._check(unpacked)

    def test_update(self):
        self._check(updated)

    def test_union(self):
        self._check(union)

    def test_ordered_dict(self):
        self._check(set_of, collections.OrderedDict)

    def test_same_keys_compile_once(self):
        cnt = CompileCounter()
        compiled = torch.compile(set_of, backend=cnt, fullgraph=True)
        for _ in range(2):
            x = torch.randn(3)
            self.assertEqual(compiled({"a": 1}, x), set_of({"a": 1}, x))
        self.assertEqual(cnt.frame_count, 1)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
