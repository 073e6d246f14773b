# Owner(s): ["module: dynamo"]
"""``s | view`` / ``s ^ view`` with the dict view on the right build the result from the left operand
(upstream kit for tdcompat's dict-view-reflected-or).

For test/dynamo/test_dicts.py.
"""

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


def _typed(s):
    return sorted((type(e).__name__, repr(e)) for e in s)


class DictViewReflectedOrTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn):
        cnt = torch._dynamo.testing.CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for d in ({1.0: 0, 2: 1}, {1.0: 0, 3: 1}):
            x = torch.randn(3)
            self.assertEqual(fn(x, dict(d)), opt_fn(x, dict(d)))

    def test_set_or_keys_keeps_the_sets_elements(self):
        def fn(x, d):
            r = {1, 2.0, "a"} | d.keys()
            return x + len(r), _typed(r)

        self._check(fn)

    def test_set_ior_keys_is_a_new_set_from_the_set(self):
        def fn(x, d):
            s = {1, 2.0}
            t = s
            t |= d.keys()
            return x + 1, _typed(t), t is s

        self._check(fn)

    def test_set_or_items_keeps_the_sets_pairs(self):
        def fn(x, d):
            r = {(1, 0), ("b", 2)} | d.items()
            return x - 1, _typed(r)

        self._check(fn)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
