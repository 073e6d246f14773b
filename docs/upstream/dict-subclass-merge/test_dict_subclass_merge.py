# Owner(s): ["module: dynamo"]
"""A dict subclass merged into a dict or an OrderedDict is read as CPython reads it.

``dict_merge`` (``dict(m)``, ``d.update(m)``, ``{**m}``, ``d | m``) reads the storage of a dict whose type
keeps ``dict.__iter__`` and otherwise calls ``m.keys()`` then ``m[key]``; ``OrderedDict``'s update
(``OrderedDict(m)``, ``od.update(m)``, ``od |= m``) calls them for anything but an exact dict. Dynamo read the
storage, or the class's own ``items()``, whatever the class defines. (Compiled without ``fullgraph``: tdcompat
graph-breaks where the PR merges in the graph; both equal eager.)
"""

import collections

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


class OwnKeys(dict):
    def keys(self):
        return [k for k in ("b", "a") if k in self]


class OwnGetitem(dict):
    def __getitem__(self, key):
        return len(key)


class OwnIterAndKeys(dict):
    def keys(self):
        return ["a"]

    def __iter__(self):
        return iter(["a"])


class OwnItems(dict):
    def items(self):
        return [("a", 5)]


class OrderedOwnKeys(collections.OrderedDict):
    def keys(self):
        return ["a"]


def dict_of(x, m):
    out = dict(m)
    return list(out.items()), x + len(out)


def dict_update(x, m):
    d = {"z": x}
    d.update(m)
    return list(d.items()), x + 1


def ordered_of(x, m):
    out = collections.OrderedDict(m)
    return list(out.items()), x + len(out)


def ordered_update(x, m):
    od = collections.OrderedDict(z=0)
    od.update(m)
    return list(od.items()), x - 1


def ordered_ior(x, m):
    od = collections.OrderedDict(z=0)
    od |= m
    return list(od.items()), x * 2


class DictSubclassMergeTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls):
        compiled = torch.compile(fn, backend=CompileCounter())
        for n in (1, 2):
            x = torch.randn(3) * n
            m = cls(a=n, b=n + 10)
            expected = (fn(x, m), dict(m))
            got = (compiled(x, cls(a=n, b=n + 10)), dict(m))
            self.assertEqual(got, expected)

    def test_ordered_merges_call_keys_and_getitem(self):
        for fn in (ordered_of, ordered_update, ordered_ior):
            for cls in (OwnKeys, OwnGetitem, OrderedOwnKeys):
                with self.subTest(fn=fn.__name__, cls=cls.__name__):
                    torch._dynamo.reset()
                    self._check(fn, cls)

    def test_dict_merges_read_the_storage_or_keys(self):
        for fn in (dict_of, dict_update):
            for cls in (OwnKeys, OwnGetitem, OwnIterAndKeys, OwnItems, OrderedOwnKeys):
                with self.subTest(fn=fn.__name__, cls=cls.__name__):
                    torch._dynamo.reset()
                    self._check(fn, cls)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
