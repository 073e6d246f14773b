# Owner(s): ["module: dynamo"]
"""``o.copy()`` of an OrderedDict subclass is a ``type(o)`` (upstream kit for tdcompat's dict-subclass-copy).

For test/dynamo/test_dicts.py.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class Plain(collections.OrderedDict):
    pass


class DictSubclassCopyTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, make):
        cnt = torch._dynamo.testing.CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for n in (1, 2):
            x = torch.randn(3)
            eager, compiled = make(n), make(n)
            self.assertEqual(fn(x, eager), opt_fn(x, compiled))
            self.assertEqual(list(eager.items()), list(compiled.items()))

    def test_copy_of_an_ordered_dict_subclass_is_its_type(self):
        def fn(x, o):
            c = o.copy()
            c["z"] = len(o)
            return x + 1, type(c).__name__, list(c.items())

        self._check(fn, lambda n: Plain(a=n, b=2))

    def test_copy_of_an_ordered_dict_subclass_returned(self):
        def fn(x, o):
            return x - 1, o.copy()

        self._check(fn, lambda n: Plain(a=n))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
