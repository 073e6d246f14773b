# Owner(s): ["module: dynamo"]
"""A builtin called on a fresh iterator over constants consumes that iterator, not a copy.

``ListIteratorVariable.as_python_constant`` answered a new iterator over the items' constants for an iterator
not yet advanced, so ``BuiltinVariable.call_function`` folded ``sum(it)``/``all(it)``/``any(it)`` over that copy
and the frame's iterator stayed where it was: ``list(it)`` afterwards listed every item again.
"""

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


def consumed(consume):
    def fn(x, n):
        it = iter([1, 0, 2, 3] if n % 2 else (0, 2, 1))
        first = consume(it)
        return x + 1, first, list(it)

    return fn


class IteratorConstantFoldTests(torch._dynamo.test_case.TestCase):
    def _check(self, consume):
        fn = consumed(consume)
        counter = CompileCounter()
        compiled = torch.compile(fn, backend=counter, fullgraph=True)
        for n in (3, 4, 5):
            x = torch.arange(3.0) * n
            self.assertEqual(compiled(x, n), fn(x, n))

    def test_sum(self):
        self._check(sum)

    def test_all_stops_at_the_first_false_item(self):
        self._check(all)

    def test_any_stops_at_the_first_true_item(self):
        self._check(any)

    def test_tuple_and_sorted(self):
        self._check(tuple)
        self._check(sorted)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
