# Owner(s): ["module: dynamo"]
"""``od.move_to_end(k, last)`` reads ``bool(last)`` as CPython does (upstream kit for tdcompat's
ordered-dict-move-to-end).

For test/dynamo/test_dicts.py.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.exc import Unsupported


class Falsy:
    def __bool__(self):
        return False


class OrderedDictMoveToEndTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn):
        cnt = torch._dynamo.testing.CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for n in (1, 2):
            x = torch.randn(3)
            od = collections.OrderedDict(a=1, b=2, c=3, **({"d": 4} if n > 1 else {}))
            self.assertEqual(fn(x, od), opt_fn(x, od))

    def test_move_to_end_last_false_positional(self):
        def fn(x, od):
            o = collections.OrderedDict(od)
            o.move_to_end("b", False)
            return x + 1, list(o)

        self._check(fn)

    def test_move_to_end_last_falsy_constants(self):
        def fn(x, od):
            o = collections.OrderedDict(od)
            o.move_to_end("c", 0)
            o.move_to_end("b", [])
            o.move_to_end("a", last="")
            return x - 1, list(o)

        self._check(fn)

    def test_move_to_end_last_with_its_own_bool_is_not_ignored(self):
        def fn(x, od):
            o = collections.OrderedDict(od)
            o.move_to_end("c", last=Falsy())
            return x + 2, list(o)

        opt_fn = torch.compile(fn, backend="eager", fullgraph=True)
        od = collections.OrderedDict(a=1, b=2, c=3)
        try:
            got = opt_fn(torch.ones(1), od)
        except Unsupported:
            return  # a graph break is right; moving "c" to the end is not
        self.assertEqual(got, fn(torch.ones(1), od))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
