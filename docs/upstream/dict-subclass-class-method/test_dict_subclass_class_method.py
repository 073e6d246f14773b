# Owner(s): ["module: dynamo"]
"""``Sub.get(d, k)`` for a dict subclass is guarded on ``Sub.get``.

A dict method read from a dict subclass that does not define it (``Sub.get`` is ``dict.get``)
compiles to ``dict.get`` with no guard on the class attribute: once the class gains its own
``get``, the compiled code still calls ``dict.get`` where eager calls the new method.
"""

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Sub(dict):
    pass


class Child(Sub):
    pass


def own_get(self, key, default=None):
    return ("own", key)


def read(cls, d, x):
    return cls.get(d, "a"), cls.get(d, "z", 0), x + 1


class DictSubclassClassMethodTests(torch._dynamo.test_case.TestCase):
    def tearDown(self):
        for cls in (Sub, Child):
            if "get" in cls.__dict__:
                delattr(cls, "get")
        super().tearDown()

    def _check(self, cls, gains):
        cnt = CompileCounter()

        def fn(d, x):
            return read(cls, d, x)

        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        d, x = cls(a=1), torch.ones(2)
        self.assertEqual(compiled(d, x), fn(d, x))
        gains.get = own_get
        self.assertEqual(fn(d, x)[0], ("own", "a"))
        self.assertEqual(compiled(d, x), fn(d, x))
        del gains.get
        self.assertEqual(compiled(d, x), fn(d, x))
        self.assertEqual(cnt.frame_count, 2)

    def test_class_gains_the_method(self):
        self._check(Sub, Sub)

    def test_base_gains_the_method(self):
        self._check(Child, Sub)

    def test_methods_through_the_subclass(self):
        def fn(d, x):
            Sub.__setitem__(d, "c", x)
            return Sub.get(d, "a"), list(Sub.keys(d)), Sub.pop(d, "a"), Sub.setdefault(d, "e", 2)

        d1, d2 = Sub(a=1, b=2), Sub(a=1, b=2)
        x = torch.ones(2)
        self.assertEqual(torch.compile(fn, backend="eager", fullgraph=True)(d1, x), fn(d2, x))
        self.assertEqual(list(d1), list(d2))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
