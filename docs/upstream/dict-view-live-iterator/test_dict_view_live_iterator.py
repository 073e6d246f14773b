# Owner(s): ["module: dynamo"]
"""``reversed(d.values())`` / ``reversed(d.items())`` read the dict as they advance, as the forward dict
iterators do (upstream kit for tdcompat's dict-view-live-iterator).

For test/dynamo/test_dicts.py.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class DictViewReversedIteratorTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, make=dict):
        cnt = torch._dynamo.testing.CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for n in (1, 2):
            x = torch.randn(3)
            d1, d2 = make(a=n, b=2, c=3), make(a=n, b=2, c=3)
            self.assertEqual(fn(x, d1), opt_fn(x, d2))
            self.assertEqual(list(d1.items()), list(d2.items()))

    def test_reversed_values_reads_a_later_write(self):
        def fn(x, d):
            it = reversed(d.values())
            first = next(it)
            d["a"] = first + 50
            return x + 1, first, list(it)

        self._check(fn)
        self._check(fn, collections.OrderedDict)

    def test_reversed_items_loop_writing_a_later_key(self):
        def fn(x, d):
            out = []
            for k, v in reversed(d.items()):
                out.append((k, v))
                d["a"] = v * 7
            return x - 1, out

        self._check(fn)

    def test_reversed_values_of_a_dict_built_in_the_frame(self):
        def fn(x, d):
            e = dict(d)
            e["z"] = 26
            it = reversed(e.values())
            next(it)
            e["b"] = -1
            return x + 2, list(it), e

        self._check(fn)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
