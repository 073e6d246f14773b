# Owner(s): ["module: dynamo"]
"""``hash(K)`` runs ``type(K).__hash__`` in the trace.

``UserDefinedClassVariable.hash_impl`` computed ``hash(cls)`` once at trace time under a
``CLASS_MATCH`` guard: a metaclass ``__hash__`` that reads state returned the first call's number
on every later call.
"""

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


class Salt:
    n = 0


class SaltedMeta(type):
    def __hash__(cls):
        return len(cls.__name__) * 1000 + Salt.n


class Salted(metaclass=SaltedMeta):
    pass


class MinusOneMeta(type):
    def __hash__(cls):
        return -1


class MinusOne(metaclass=MinusOneMeta):
    pass


def hash_salted(x):
    h = hash(Salted)
    return x + h % 7, h, {Salted: 1}[Salted]


def hash_minus_one(x):
    return x, hash(MinusOne)  # CPython reduces -1 to -2


class MetaclassHashTests(torch._dynamo.test_case.TestCase):
    def test_hash_reads_state(self):
        counter = CompileCounter()
        compiled = torch.compile(hash_salted, backend=counter, fullgraph=True)
        for n in (1, 2, 3):
            Salt.n = n
            x = torch.randn(3)
            self.assertEqual(compiled(x), hash_salted(x))

    def test_hash_reduced_as_cpython_does(self):
        compiled = torch.compile(hash_minus_one, backend="eager", fullgraph=True)
        x = torch.randn(3)
        self.assertEqual(compiled(x), hash_minus_one(x))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
