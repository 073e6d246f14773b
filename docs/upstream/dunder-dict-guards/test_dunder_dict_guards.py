# Owner(s): ["module: dynamo"]
"""Reads of an input object's ``__dict__`` are guarded on its keys.

``DunderDictVariable`` (torch/_dynamo/variables/dicts.py) made
``install_dict_contains_guard`` and ``install_dict_keys_match_guard`` no-ops,
so code compiled for an object without instance key ``b`` was reused for an
object with it: ``"b" in o.__dict__``, ``o.__dict__.get("b")``,
``o.__dict__.setdefault("b", d)`` and ``list(o.__dict__)`` answered for the
first call's object.
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


def contains(o, x):
    return "b" in o.__dict__, x + 1


def get(o, x):
    return o.__dict__.get("b", x) * 2


def setdefault(o, x):
    value = o.__dict__.setdefault("b", x)
    return value * 2, o.b


def keys(o, x):
    return sorted(o.__dict__), x + 1


class DunderDictGuardTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for with_b in (False, True, False):
            x = torch.randn(3)
            expected_obj, obj = cls(with_b), cls(with_b)
            expected = fn(expected_obj, x)
            got = compiled(obj, x)
            self.assertEqual(got, expected)
            self.assertEqual(sorted(vars(obj)), sorted(vars(expected_obj)))
            self.assertEqual(getattr(obj, "b", None), getattr(expected_obj, "b", None))
        self.assertGreaterEqual(cnt.frame_count, 2)  # one graph per key set

    def test_contains_plain_object(self):
        self._check(contains, Obj)

    def test_contains_mapping(self):
        self._check(contains, Mapping)

    def test_get_with_default(self):
        self._check(get, Obj)

    def test_setdefault(self):
        self._check(setdefault, Obj)

    def test_keys(self):
        self._check(keys, Obj)

    def test_new_object_needs_no_guard(self):
        def fn(x):
            o = Obj(False)
            o.b = x
            return "b" in o.__dict__, o.__dict__.get("b") * 2

        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for _ in range(2):
            x = torch.randn(3)
            self.assertEqual(compiled(x), fn(x))
        self.assertEqual(cnt.frame_count, 1)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
