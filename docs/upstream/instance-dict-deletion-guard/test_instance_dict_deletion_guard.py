# Owner(s): ["module: dynamo"]
"""A deletion through an input's ``__dict__`` is replayed for the object it runs on.

``SideEffects.codegen_update_mutated`` (torch/_dynamo/side_effects.py) replays an
instance-dict deletion recorded by ``store_instance_dict_attr`` only ``if name in
original_dict``, the ``__dict__`` of the object compiled for, and nothing guarded
that. After ``o.b = v; o.__dict__.pop("b", d)``, code compiled for an object
without ``b`` left ``b`` on a later object that had it, and code compiled for an
object with ``b`` raised ``KeyError`` for one without.
"""

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Obj:
    def __init__(self, with_b):
        self.a = 1
        if with_b:
            self.b = "old"


def set_then_pop(o, x):
    o.b = x + 1
    return o.__dict__.pop("b", "absent"), x * 2


def set_then_del(o, x):
    o.b = x + 1
    del o.__dict__["b"]
    return x * 2


def pop_only(o, x):
    return o.__dict__.pop("b", "absent"), x * 2


class InstanceDictDeletionGuardTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, order, frames=2):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for with_b in order:
            x = torch.randn(3)
            expected_obj, obj = Obj(with_b), Obj(with_b)
            self.assertEqual(compiled(obj, x), fn(expected_obj, x))
            self.assertEqual(vars(obj), vars(expected_obj))
        self.assertEqual(cnt.frame_count, frames)

    def test_pop_compiled_without_then_with(self):
        self._check(set_then_pop, (False, True))

    def test_pop_compiled_with_then_without(self):
        self._check(set_then_pop, (True, False))

    def test_del_compiled_without_then_with(self):
        self._check(set_then_del, (False, True))

    def test_del_compiled_with_then_without(self):
        self._check(set_then_del, (True, False))

    def test_pop_without_store(self):
        self._check(pop_only, (True, False))

    def test_same_object_shape_compiles_once(self):
        self._check(set_then_pop, (False, False), frames=1)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
