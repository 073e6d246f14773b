# Owner(s): ["module: dynamo"]
"""A class attribute store runs the metaclass's own ``__setattr__``.

Classes are tracked for attribute mutation, and ``SetAttrBuiltinVariable._call_setattr`` records
``K.v = x`` in the side-effects table without running ``type(K).__setattr__``: reads in the frame
of what the metaclass writes (here a write counter) are stale, and the metaclass runs only when the
store is replayed after the graph. Until Dynamo can inline the metaclass (its own
``type.__setattr__(cls, ...)`` call is unsupported today), the store graph-breaks.
"""

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


class Counting(type):
    def __setattr__(cls, name, value):
        type.__setattr__(cls, "nset", cls.__dict__.get("nset", 0) + 1)
        type.__setattr__(cls, name, value)


class Counted(metaclass=Counting):
    v = 0


def _reset(v):
    for key in ("z", "nset"):
        if key in Counted.__dict__:
            type.__delattr__(Counted, key)
    type.__setattr__(Counted, "v", v)
    type.__setattr__(Counted, "nset", 0)


def _state():
    return {k: Counted.__dict__.get(k) for k in ("v", "z", "nset")}


def store_then_read(x):
    Counted.z = x + 1
    return x * Counted.nset, "z" in Counted.__dict__, hasattr(Counted, "z")


class MetaclassSetattrTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, fullgraph):
        counter = CompileCounter()
        compiled = torch.compile(fn, backend=counter, fullgraph=fullgraph)
        for n in (1, 2):
            x = torch.randn(3) * n
            _reset(n)
            expected = (fn(x), _state())
            _reset(n)
            got = (compiled(x), _state())
            self.assertEqual(got, expected)
        return counter

    def test_store_then_read_equals_eager(self):
        self._check(store_then_read, fullgraph=False)

    def test_store_is_a_graph_break_under_fullgraph(self):
        with self.assertRaises(torch._dynamo.exc.Unsupported):
            self._check(store_then_read, fullgraph=True)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
