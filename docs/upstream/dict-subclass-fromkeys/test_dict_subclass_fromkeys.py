# Owner(s): ["module: dynamo"]
"""``Sub.fromkeys(keys, v)`` of a dict subclass is a ``Sub`` (upstream kit for tdcompat's dict-subclass-fromkeys).

For test/dynamo/test_dicts.py.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing


class Plain(dict):
    pass


class PlainOrdered(collections.OrderedDict):
    pass


class Tenfold(dict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value * 10)


class Tagged(dict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tag = "made"


class DictSubclassFromKeysTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls):
        cnt = torch._dynamo.testing.CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for n in (1, 2):
            x = torch.randn(3)
            keys = {"a": n, "b": 2, **({"c": 3} if n > 1 else {})}
            self.assertEqual(fn(x, cls, keys), opt_fn(x, cls, keys))

    def _fromkeys(self, cls):
        def fn(x, cls, keys):
            r = cls.fromkeys(keys, len(keys))
            r["z"] = 1
            return x + 1, type(r).__name__, list(r.items()), getattr(r, "tag", None)

        self._check(fn, cls)

    def test_fromkeys_of_a_dict_subclass_is_its_type(self):
        self._fromkeys(Plain)

    def test_fromkeys_of_an_ordered_dict_subclass_is_its_type(self):
        self._fromkeys(PlainOrdered)

    def test_fromkeys_stores_through_the_subclass_setitem(self):
        self._fromkeys(Tenfold)

    def test_fromkeys_runs_the_subclass_init(self):
        self._fromkeys(Tagged)

    def test_fromkeys_value_keyword_of_an_ordered_dict_subclass(self):
        def fn(x, cls, keys):
            r = cls.fromkeys(keys, value=3)
            return x - 1, type(r).__name__, list(r.items())

        self._check(fn, PlainOrdered)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
