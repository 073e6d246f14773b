# Owner(s): ["module: dynamo"]
"""A class attribute stored in the frame is seen by ``hasattr`` through a subclass and by
``cls.__dict__``.

Classes are tracked for attribute mutation, but ``UserDefinedClassVariable.call_obj_hasattr``
consulted only the class's own pending stores and ``resolve_meta_data_descriptor`` built
``cls.__dict__`` from the real class: ``Base.w = 1; hasattr(Sub, "w")`` and
``K.z = 1; "z" in K.__dict__`` were False.
"""

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


class Base:
    v = 0


class Sub(Base):
    pass


def _reset():
    for cls, keys in ((Base, ("w", "z")), (Sub, ("w", "z", "v"))):
        for key in keys:
            if key in vars(cls):
                delattr(cls, key)


def store_base_hasattr_sub(x):
    Base.w = "stored"
    return x + 1, hasattr(Sub, "w"), hasattr(Sub, "z"), hasattr(Base, "w")


def store_then_class_dict(x):
    Sub.z = "new"
    Sub.v = 3
    d = Sub.__dict__
    return x * Sub.v, "z" in d, d.get("z", "D"), [k for k in d if k in ("v", "z")], d["v"]


def store_then_base_dict(x):
    Sub.z = "new"
    return x + 1, "z" in Sub.__dict__, "z" in Base.__dict__, Sub.__dict__.get("z", "D")


class ClassStoredAttrsTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for _ in range(2):
            x = torch.randn(3)
            _reset()
            expected = fn(x)
            expected_state = (dict(vars(Base)), dict(vars(Sub)))
            _reset()
            self.assertEqual(compiled(x), expected)
            self.assertEqual((dict(vars(Base)), dict(vars(Sub))), expected_state)
        _reset()

    def test_hasattr_through_subclass(self):
        self._check(store_base_hasattr_sub)

    def test_class_dict_after_store(self):
        self._check(store_then_class_dict)

    def test_class_dict_membership_after_store(self):
        self._check(store_then_base_dict)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
