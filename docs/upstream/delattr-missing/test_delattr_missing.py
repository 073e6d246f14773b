# Owner(s): ["module: dynamo"]
"""``del obj.name`` is guarded on whether the input object has ``name``.

``UserDefinedObjectVariable.method_setattr_standard`` decides between deleting
the attribute and raising ``AttributeError`` with ``dict_vt.contains(name)``,
which installs no guard: code compiled for an object without ``name`` raised for
a later object that has it (and the other way round).
"""

import collections.abc

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Obj:
    def __init__(self, with_b):
        self.a = torch.ones(3)
        if with_b:
            self.b = torch.full((3,), 2.0)


class Mapping(collections.abc.MutableMapping):
    def __init__(self, with_b):
        self._store = {}
        self.a = torch.ones(3)
        if with_b:
            self.b = torch.full((3,), 2.0)

    def __getitem__(self, key):
        return self._store[key]

    def __setitem__(self, key, value):
        self._store[key] = value

    def __delitem__(self, key):
        del self._store[key]

    def __iter__(self):
        return iter(self._store)

    def __len__(self):
        return len(self._store)


def delete(o, x):
    try:
        del o.b
        return x + 1
    except AttributeError:
        return x - 1


def delete_then_set(o, x):
    try:
        del o.b
    except AttributeError:
        pass
    o.b = x
    return o.b * 2


class DelattrMissingTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls, order):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for with_b in order:
            x = torch.randn(3)
            expected_obj, obj = cls(with_b), cls(with_b)
            self.assertEqual(compiled(obj, x), fn(expected_obj, x))
            self.assertEqual(sorted(vars(obj)), sorted(vars(expected_obj)))
        self.assertEqual(cnt.frame_count, 2)

    def test_missing_then_present(self):
        self._check(delete, Obj, (False, True))

    def test_present_then_missing(self):
        self._check(delete, Obj, (True, False))

    def test_mapping(self):
        self._check(delete, Mapping, (False, True))

    def test_delete_then_set(self):
        self._check(delete_then_set, Obj, (False, True))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
