# Owner(s): ["module: dynamo"]
"""Whether a key is in a dict passed in is guarded when ``d[k]`` decides it.

``ConstDictVariable.getitem_const_raise_exception_if_absent`` (torch/_dynamo/
variables/dicts.py) raised ``KeyError`` inside the trace for a missing key and
installed no guard saying it was missing; from 2.7 an input dict is guarded key
by key, so code compiled for a dict without ``k`` ran the ``except KeyError:``
branch for a later dict with ``k``. ``Mapping.__contains__`` and ``Mapping.get``
are built on that ``try``, so ``k in m`` on a user ``MutableMapping`` was wrong
the same way. A present key whose value is never used was not guarded either.
"""

import collections.abc

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Store(collections.abc.MutableMapping):
    def __init__(self, **items):
        self._store = dict(items)

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


def lookup_in_try(d, x):
    try:
        d["h"]  # only whether it is there matters
        return x + 1, True
    except KeyError:
        return x - 1, False


def lookup_used_in_try(d, x):
    try:
        return x + d["h"], True
    except KeyError:
        return x - 1, False


def contains(m, x):
    return "h" in m, x * 2


def get_default(m, x):
    return m.get("h", -1), x * 2


class DictMissingKeyGuardTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, make, first_has_h, frames=2):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for has_h in (first_has_h, not first_has_h):
            x = torch.randn(3)
            expected_d, d = make(has_h), make(has_h)
            self.assertEqual(compiled(d, x), fn(expected_d, x))
            self.assertEqual(dict(d), dict(expected_d))
        self.assertEqual(cnt.frame_count, frames)

    @staticmethod
    def _dict(has_h):
        return {"k0": 1, "h": 2.0} if has_h else {"k0": 1}

    @staticmethod
    def _store(has_h):
        return Store(k0=1, h=2.0) if has_h else Store(k0=1)

    def test_missing_key_then_present(self):
        self._check(lookup_in_try, self._dict, first_has_h=False)

    def test_missing_key_value_used(self):
        self._check(lookup_used_in_try, self._dict, first_has_h=False)

    def test_present_key_unused_then_missing(self):
        self._check(lookup_in_try, self._dict, first_has_h=True)

    def test_mapping_contains(self):
        self._check(contains, self._store, first_has_h=False)

    def test_mapping_get(self):
        self._check(get_default, self._store, first_has_h=False)

    def test_same_keys_compile_once(self):
        cnt = CompileCounter()
        compiled = torch.compile(lookup_in_try, backend=cnt, fullgraph=True)
        for _ in range(2):
            x = torch.randn(3)
            self.assertEqual(compiled({"k0": 1}, x), lookup_in_try({"k0": 1}, x))
        self.assertEqual(cnt.frame_count, 1)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
