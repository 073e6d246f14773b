# Owner(s): ["module: dynamo"]
"""Writes into the __dict__ of an existing function or a bound method (upstream kit for tdcompat's
function-dict-write). For test/dynamo/test_dicts.py, next to DunderDictVariableTests.
"""

import torch
import torch._dynamo.test_case
from torch._dynamo.exc import Unsupported


def target():
    return 1


class Owner:
    def meth(self):
        return 2


class FunctionDictWriteTests(torch._dynamo.test_case.TestCase):
    def tearDown(self):
        target.__dict__.clear()
        Owner.meth.__dict__.clear()
        super().tearDown()

    def _check(self, fn):
        opt_fn = torch.compile(fn, backend="eager")
        for n in (1, 2):
            expected = fn(torch.ones(2) * n, n), dict(target.__dict__), dict(Owner.meth.__dict__)
            target.__dict__.clear()
            Owner.meth.__dict__.clear()
            got = opt_fn(torch.ones(2) * n, n), dict(target.__dict__), dict(Owner.meth.__dict__)
            self.assertEqual(expected, got)
            target.__dict__.clear()
            Owner.meth.__dict__.clear()
        torch._dynamo.reset()
        with self.assertRaises(Unsupported):
            torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(2), 1)

    def test_global_function_dict_setitem(self):
        def fn(x, n):
            target.__dict__["tag"] = n
            return x + 1

        self._check(fn)

    def test_global_function_dict_update(self):
        def fn(x, n):
            target.__dict__.update(tag=n)
            return x + 1

        self._check(fn)

    # (a bound method's __dict__, Owner().meth.__dict__["k"] = v, breaks the same way, but at that graph break
    # Dynamo rebuilds the DunderDictVariable on the stack as a new dict and the eager write is lost: it
    # also needs tdcompat's dunder-dict-escape kit)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
