# Owner(s): ["module: dynamo"]
"""``v in seq`` finds ``v`` itself when the sequence holds it.

``utils.iter_contains`` answered a search value that ``is_python_constant()`` by comparing
``item.as_python_constant()`` with ``search.as_python_constant()`` (``is``, then ``==``). A
``functools.partial`` made in the frame is such a constant, but ``as_python_constant()`` builds a
new partial on each call, and partials compare by identity: ``h in (1, h)`` was False.
"""

import functools

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


def scale(a, x):
    return x * a


def contains_partial(x, n):
    h = functools.partial(scale, 2)
    return h(x) + n, h in (1, "s", h), h in [h], h not in [h], h in (functools.partial(scale, 2),)


def contains_object(x, n):
    o = object()
    return x + n, o in (1, o), o not in [o], o in (object(),)


class SequenceContainsIdentityTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for n in (1, 2):
            x = torch.randn(3)
            self.assertEqual(compiled(x, n), fn(x, n))

    def test_partial_made_in_frame(self):
        self._check(contains_partial)

    def test_plain_object_made_in_frame(self):
        self._check(contains_object)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
