# Owner(s): ["module: dynamo"]
"""``not d`` / ``bool(d)`` of a dict passed in guard its keys (upstream kit for tdcompat's dict-truth-guard).

For test/dynamo/test_dicts.py.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class DictTruthGuardTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, kind):
        cnt = torch._dynamo.testing.CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for items in ({}, {"a": 1, "b": 2}, {}):
            x = torch.randn(3)
            self.assertEqual(fn(x, kind(items)), opt_fn(x, kind(items)))
        self.assertEqual(cnt.frame_count, 2)  # the empty and the filled dict: one recompile

    def test_not_dict_input(self):
        def fn(x, d):
            return x + 1, not d

        self._check(fn, dict)

    def test_bool_dict_input(self):
        def fn(x, d):
            return x - 1, bool(d)

        self._check(fn, dict)

    def test_not_ordered_dict_input(self):
        def fn(x, d):
            return x * 2, not d

        self._check(fn, collections.OrderedDict)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
