# Owner(s): ["module: dynamo"]
"""An OrderedDict's own ``pop``/``setdefault`` bind ``key`` and ``default`` by keyword.

CPython's ``OrderedDict.pop(key, default=<unrepresentable>)`` and ``OrderedDict.setdefault(key, default=None)``
are Argument Clinic methods that take both by keyword. Dynamo's ``dict_pop``/``dict_setdefault`` read the
positional arguments only: ``od.pop("z", default=3)`` raised ``KeyError``, ``od.setdefault("z", default=3)``
stored ``None``, ``od.pop(key="a")`` raised ``TypeError``.
"""

import collections

import torch
import torch._dynamo.test_case
from torch._dynamo.testing import CompileCounter


class ODSub(collections.OrderedDict):
    pass


def keyword_calls(x, od):
    out = []
    for call in (
        lambda: od.setdefault("q", default=len(od) * 10),
        lambda: od.setdefault(key="r"),
        lambda: od.pop("z", default=-1),
        lambda: od.pop(key="a"),
        lambda: od.pop("b", fallback=1),
    ):
        try:
            out.append(call())
        except (TypeError, KeyError) as error:
            out.append(type(error).__name__)
    return x + len(od), out, list(od.items())


def make(cls, n):
    od = cls(a=n, b=2)
    if n == 2:
        od["z"] = "present"
    return torch.arange(3.0) * n, od


class DictMethodKeywordsTests(torch._dynamo.test_case.TestCase):
    def _same(self, cls):
        counter = CompileCounter()
        compiled = torch.compile(keyword_calls, backend=counter, fullgraph=True)
        for n in (1, 2, 3):
            x, od = make(cls, n)
            ex, eod = make(cls, n)
            self.assertEqual(repr(compiled(x, od)), repr(keyword_calls(ex, eod)))
            self.assertEqual(list(od.items()), list(eod.items()))
        self.assertGreaterEqual(counter.frame_count, 1)

    def test_ordered_dict_keywords(self):
        self._same(collections.OrderedDict)

    def test_ordered_dict_subclass_keywords(self):
        self._same(ODSub)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
