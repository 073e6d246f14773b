# Owner(s): ["module: dynamo"]
"""``obj.__dict__`` iterates in CPython's order after the frame writes to it.

``SideEffectsProxyDict.__iter__`` (torch/_dynamo/variables/dicts.py), the
storage of ``DunderDictVariable``, yielded the keys stored in the frame first
and the object's own keys after them. CPython keeps insertion order: the keys
the object had (an updated key keeps its place), then the added ones. So
``list(o.__dict__)`` and ``list(vars(o))`` after ``o.z = v`` or after updating
an existing key differed from eager.
"""

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Obj:
    def __init__(self):
        self.a = torch.ones(3)
        self.b = torch.full((3,), 2.0)


class Module(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.ones(3)
        self.w = torch.nn.Parameter(torch.ones(3))


def list_dict_after_add(o, x):
    o.z = x + 1
    return list(o.__dict__), x * 2


def list_vars_after_add_and_delete(o, x):
    o.z = x + 1
    o.y = x + 2
    del o.a
    return list(vars(o)), [k for k in o.__dict__], x * 2


def list_dict_after_update(o, x):
    o.b = x + 1
    return list(o.__dict__), list(vars(o).items())[0][0], x * 2


class DunderDictOrderTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for _ in range(2):
            x = torch.randn(3)
            expected_obj, obj = cls(), cls()
            self.assertEqual(compiled(obj, x), fn(expected_obj, x))
            self.assertEqual(list(vars(obj)), list(vars(expected_obj)))
        self.assertEqual(cnt.frame_count, 1)

    def test_add_plain_object(self):
        self._check(list_dict_after_add, Obj)

    def test_add_module(self):
        self._check(list_dict_after_add, Module)

    def test_add_and_delete(self):
        self._check(list_vars_after_add_and_delete, Obj)

    def test_update_keeps_position(self):
        self._check(list_dict_after_update, Obj)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
