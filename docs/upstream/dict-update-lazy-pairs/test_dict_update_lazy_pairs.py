# Owner(s): ["module: dynamo"]
"""``d.update(iterable)`` and ``d |= iterable`` store each pair before the next is drawn.

``ConstDictVariable.dict_update`` (torch/_dynamo/variables/dicts.py) unpacked
the whole iterable with ``unpack_iterable`` before storing the first pair.
CPython's ``PyDict_MergeFromSeq2`` draws an item, stores it, then draws the
next, so a generator (or a ``map``/``zip`` over one) that reads the dict it
fills saw it grow in eager and unchanged in compiled code: silently wrong
values under ``fullgraph=True``.
"""

import collections

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


def update_from_generator(d, x):
    d.update((k, len(d) + x) for k in ("p", "r"))
    return list(d), d["r"]


def ior_from_generator(d, x):
    d |= ((k, x * len(d)) for k in ("p", "r", "s"))
    return list(d.items())


def update_from_map_then_keywords(d, x):
    d.update(map(lambda k: (k, len(d)), ("p", "r")), q=len(d))
    return list(d.items()), x + 1


def ordered_dict_update_from_generator(d, x):
    od = collections.OrderedDict(d)
    od.update((k, len(od) + x) for k in ("p", "r"))
    return list(od.items())


def defaultdict_built_in_frame_update_from_generator(d, x):
    # 2.15: a UserDefinedDefaultDictVariable, whose update reaches dict_update through tp_methods
    dd = collections.defaultdict(list, d)
    dd.update((k, len(dd) + x) for k in ("p", "r"))
    dd["m"].append(len(dd))
    return list(dd.items())


def update_from_list_still_drained(d, x):
    # a list is already built: its pairs are the same whichever way it is read
    d.update([(k, len(d) + x) for k in ("p", "r")])
    return list(d.items())


class DictUpdateLazyPairsTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for n in range(2):
            x = torch.randn(3)
            expected, actual = {"a": x + n, "b": x}, {"a": x + n, "b": x}
            self.assertEqual(compiled(actual, x), fn(expected, x))
            self.assertEqual(list(actual.items()), list(expected.items()))
        self.assertEqual(cnt.frame_count, 1)

    def test_update_from_generator(self):
        self._check(update_from_generator)

    def test_ior_from_generator(self):
        self._check(ior_from_generator)

    def test_update_from_map_then_keywords(self):
        self._check(update_from_map_then_keywords)

    def test_ordered_dict_update_from_generator(self):
        self._check(ordered_dict_update_from_generator)

    def test_defaultdict_built_in_frame_update_from_generator(self):
        self._check(defaultdict_built_in_frame_update_from_generator)

    def test_update_from_list(self):
        self._check(update_from_list_still_drained)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
