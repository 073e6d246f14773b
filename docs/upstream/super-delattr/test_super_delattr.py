# Owner(s): ["module: dynamo"]
"""``super().__delattr__(name)`` behaves like ``object.__delattr__``.

``SuperVariable.call_method`` (torch/_dynamo/variables/misc.py), branch
``inner_fn is object.__delattr__``, recorded a ``DeletedVariable`` attribute
store and nothing else. That branch is the end of every ``del module.name``
(``nn.Module.__delattr__`` calls ``super().__delattr__(name)``) and of any
``__delattr__`` that defers to ``super()``: a missing attribute did not raise,
the deletion was replayed (or not) for the first call's object under no guard,
and ``module.__dict__`` / ``vars(module)`` still showed the deleted attribute
for the rest of the frame.
"""

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Module(torch.nn.Module):
    def __init__(self, with_b):
        super().__init__()
        self.a = torch.ones(3)
        self.w = torch.nn.Parameter(torch.ones(3))
        if with_b:
            self.b = torch.full((3,), 2.0)


class CountingDelattr:
    """Its own ``__delattr__`` counts, then defers to ``object.__delattr__``."""

    def __init__(self, with_b):
        self.a = torch.ones(3)
        self.deletes = 0
        if with_b:
            self.b = torch.full((3,), 2.0)

    def __delattr__(self, name):
        object.__setattr__(self, "deletes", self.deletes + 1)
        super().__delattr__(name)


def delete(o, x):
    try:
        del o.b
        return x + 1
    except AttributeError:
        return x - 1


def delete_then_read_dict(o, x):
    del o.a
    return "a" in o.__dict__, o.__dict__.get("a", -1), "a" in vars(o), x * 2


class SuperDelattrTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls, order, frames):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for with_b in order:
            x = torch.randn(3)
            expected_obj, obj = cls(with_b), cls(with_b)
            self.assertEqual(compiled(obj, x), fn(expected_obj, x))
            self.assertEqual(sorted(vars(obj)), sorted(vars(expected_obj)))
            self.assertEqual(getattr(obj, "b", None), getattr(expected_obj, "b", None))
            self.assertEqual(
                getattr(obj, "deletes", None), getattr(expected_obj, "deletes", None)
            )
        self.assertEqual(cnt.frame_count, frames)

    def test_module_missing_then_present(self):
        self._check(delete, Module, (False, True), frames=2)

    def test_module_present_then_missing(self):
        self._check(delete, Module, (True, False), frames=2)

    def test_custom_delattr_missing_then_present(self):
        self._check(delete, CountingDelattr, (False, True), frames=2)

    def test_module_dict_after_delete(self):
        self._check(delete_then_read_dict, Module, (True, True), frames=1)

    def test_module_made_in_frame_missing(self):
        # The placeholder Dynamo makes for a new module holds what nn.Module.__init__
        # put there; every other name is a store of the frame.
        class Made(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = 2

        def fn(x):
            m = Made()
            try:
                del m.b
                missing = False
            except AttributeError:
                missing = True
            del m.a
            return missing, hasattr(m, "a"), x + 1

        x = torch.randn(3)
        self.assertEqual(torch.compile(fn, backend="eager", fullgraph=True)(x), fn(x))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
