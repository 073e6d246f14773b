# Owner(s): ["module: dynamo"]
"""dict's own ``__getitem__`` reached by name from a dict subclass with ``__missing__``.

``super().__getitem__(key)`` in the subclass's ``__getitem__`` (and ``dict.__getitem__(self, key)``) is
CPython's ``dict_subscript``: an absent key calls ``type(self).__missing__``. Dynamo sent both to the plain
dict storage, which raised ``KeyError`` in the trace: the ``except KeyError`` branch ran instead.
"""

import collections

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


class SuperAnswers(dict):
    def __missing__(self, key):
        return ("missing", key, len(self))

    def __getitem__(self, key):
        return super().__getitem__(key)


class SuperStores(collections.OrderedDict):
    def __missing__(self, key):
        self[key] = len(self) * 10
        return self[key]

    def __getitem__(self, key):
        return super().__getitem__(key)


class ExplicitAnswers(dict):
    def __missing__(self, key):
        return -len(self)

    def __getitem__(self, key):
        return dict.__getitem__(self, key)


def caught(x, d):
    try:
        v = d["z"]
    except KeyError:
        v = "KeyError"
    return x + 1, v, d["a"]


def make(cls, n):
    d = cls(a=n, b=2)
    if n == 2:
        d["z"] = "present"
    return torch.arange(3.0) * n, d


class DictSubclassBaseGetitemTests(torch._dynamo.test_case.TestCase):
    def _same(self, cls):
        counter = CompileCounter()
        compiled = torch.compile(caught, backend=counter, fullgraph=True)
        for n in (1, 2, 3):
            x, d = make(cls, n)
            ex, ed = make(cls, n)
            got = compiled(x, d)
            expected = caught(ex, ed)
            self.assertEqual(repr(got), repr(expected))
            self.assertEqual(list(d.items()), list(ed.items()))
        self.assertGreaterEqual(counter.frame_count, 1)

    def test_super_getitem_calls_missing(self):
        self._same(SuperAnswers)

    def test_super_getitem_calls_missing_that_stores(self):
        self._same(SuperStores)

    def test_dict_getitem_by_name_calls_missing(self):
        self._same(ExplicitAnswers)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
