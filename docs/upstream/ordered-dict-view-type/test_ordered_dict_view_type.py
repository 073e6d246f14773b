# Owner(s): ["module: dynamo"]
"""The views of an OrderedDict are odict_keys / odict_values / odict_items.

``DictKeysVariable.python_type`` (and the values/items views') returned the
plain dict's view type whatever dict the view is over, so ``type(od.keys())``
was ``dict_keys`` under ``torch.compile``.
"""

import collections

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter

ODICT_KEYS = type(collections.OrderedDict().keys())


class MyOD(collections.OrderedDict):
    pass


def names(od, x):
    return x + 1, type(od.keys()).__name__, type(od.values()).__name__, type(od.items()).__name__


def isinstance_odict_keys(od, x):
    return x + 1, isinstance(od.keys(), ODICT_KEYS), isinstance(od.keys(), type({}.keys()))


def made_in_frame(od, x):
    e = collections.OrderedDict(od)
    e["z"] = 1
    return x + 1, type(e.keys()).__name__, type(e.items()).__name__


def plain_dict(od, x):
    d = dict(od)
    return x + 1, type(d.keys()).__name__, type(d.items()).__name__


class OrderedDictViewTypeTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls=collections.OrderedDict):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for keys in (("a", "b"), ("a", "c")):
            x = torch.randn(3)
            self.assertEqual(compiled(cls((k, 1) for k in keys), x), fn(cls((k, 1) for k in keys), x))
        self.assertGreaterEqual(cnt.frame_count, 1)

    def test_names(self):
        self._check(names)

    def test_subclass(self):
        self._check(names, MyOD)

    def test_isinstance(self):
        self._check(isinstance_odict_keys)

    def test_made_in_frame(self):
        self._check(made_in_frame)

    def test_plain_dict_unchanged(self):
        self._check(plain_dict)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
