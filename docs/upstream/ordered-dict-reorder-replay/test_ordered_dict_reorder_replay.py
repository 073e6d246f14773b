# Owner(s): ["module: dynamo"]
"""``od.move_to_end(k)`` on an OrderedDict passed in is replayed onto the caller's dict (upstream kit for
tdcompat's ordered-dict-reorder-replay).

For test/dynamo/test_dicts.py.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class OrderedDictReorderReplayTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls=collections.OrderedDict):
        cnt = torch._dynamo.testing.CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for extra in (1, 2):
            x = torch.randn(3)
            eager, compiled = cls(a=1, b=2, c=3), cls(a=1, b=2, c=3)
            eager[f"k{extra}"] = compiled[f"k{extra}"] = extra
            self.assertEqual(fn(x, eager), opt_fn(x, compiled))
            self.assertEqual(list(eager.items()), list(compiled.items()))

    def test_move_to_end_reorders_the_input(self):
        def fn(x, od):
            od.move_to_end("a")
            return x + 1, list(od)

        self._check(fn)

    def test_move_to_front_reorders_the_input(self):
        def fn(x, od):
            od.move_to_end("c", last=False)
            return x - 1

        self._check(fn)

    def test_move_to_end_of_a_subclass_reorders_the_input(self):
        class Sub(collections.OrderedDict):
            pass

        def fn(x, od):
            od.move_to_end("b")
            od["z"] = 0
            return x * 2

        self._check(fn, Sub)

    def test_move_to_end_of_a_subclass_with_its_own_setitem_reorders_the_input(self):
        class Doubling(collections.OrderedDict):
            def __setitem__(self, key, value):
                super().__setitem__(key, value * 2 if type(value) is int else value)

        def fn(x, od):
            od.move_to_end("a")
            od.move_to_end("c", last=False)
            return x + 1, list(od)

        self._check(fn, Doubling)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
