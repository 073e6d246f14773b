# Owner(s): ["module: dynamo"]
"""Non-str keys written into an instance ``__dict__`` (upstream kit for tdcompat's non-str-attr-store).

For test/dynamo/test_dicts.py, next to DunderDictVariableTests::test_dunder_dict_non_str_key_setitem.
"""

import torch
import torch._dynamo.test_case
from torch._dynamo.exc import Unsupported


class Foo:
    pass


class SKey(str):
    pass


class NonStrInstanceDictKeyTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, make):
        # without fullgraph: equal to eager (the store runs eagerly after a graph break)
        opt_fn = torch.compile(fn, backend="eager")
        for n in (1, 2):
            expected_obj, got_obj = make(n), make(n)
            self.assertEqual(fn(torch.ones(2) * n, expected_obj), opt_fn(torch.ones(2) * n, got_obj))
            self.assertEqual(vars(expected_obj), vars(got_obj))
            self.assertEqual(list(vars(expected_obj)), list(vars(got_obj)))
        torch._dynamo.reset()
        with self.assertRaises(Unsupported):
            torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(2), make(1))

    def test_non_str_key_on_input(self):
        def fn(x, o):
            o.__dict__[1] = x
            return x + 1, list(o.__dict__)

        def make(n):
            o = Foo()
            o.a = n
            return o

        self._check(fn, make)

    def test_str_subclass_key(self):
        # (on an object passed in: one made in the frame also needs its __dict__ rebuilt as the object's
        # own dict at the graph break, tdcompat's dunder-dict-escape kit)
        def fn(x, o):
            o.__dict__[SKey("k")] = x
            return x + 1, len(o.__dict__)

        self._check(fn, lambda n: Foo())


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
