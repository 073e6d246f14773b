# Owner(s): ["module: dynamo"]
"""``S(d)`` of an OrderedDict subclass with its own ``__setitem__`` stores through it (upstream kit for
tdcompat's ordered-dict-subclass-setitem).

For test/dynamo/test_dicts.py. The construction graph-breaks (CPython runs the subclass's ``__setitem__``
for every item), so the tests compile without ``fullgraph`` and compare with eager.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class Doubling(collections.OrderedDict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2)


class OrderedDictSubclassSetitemTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn):
        opt_fn = torch.compile(fn, backend="eager")
        for n in (1, 2):
            x = torch.randn(3)
            self.assertEqual(fn(x, {"a": n, "b": 3}), opt_fn(x, {"a": n, "b": 3}))

    def test_built_from_a_dict_stores_through_setitem(self):
        def fn(x, d):
            o = Doubling(d)
            return x + 1, list(o.items())

        self._check(fn)

    def test_built_from_keywords_stores_through_setitem(self):
        def fn(x, d):
            o = Doubling(**d)
            return x - 1, list(o.items())

        self._check(fn)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
