# Owner(s): ["module: dynamo"]
"""A conditional jump on a dict view or a mappingproxy branches on its truth.

``generic_jump`` (torch/_dynamo/symbolic_convert.py), in its branch for a value
that is not a constant, a tensor, a module, a user object nor a symbolic value,
computes the truth with ``generic_is_true`` and tested ``truth_fn(result)``:
``result`` is a ``ConstantVariable``, which is always truthy, so ``if d.keys():``
took the true branch for an empty dict.
"""

import collections
import types

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


def keys_view(d, x):
    return x + (1 if d.keys() else 0)


def values_view(d, x):
    return x + (1 if d.values() else 0)


def items_view(d, x):
    if not d.items():
        return x - 1
    return x + 1


def and_or(d, x):
    return x + ((d.keys() and 2) or 3), type(d.values() or "empty").__name__


def made_in_frame(d, x):
    e = dict(d)
    r = 1 if e.items() else 0
    e["z"] = 1
    return x + r, 1 if e.items() else 0


def ordered(d, x):
    return x + (1 if collections.OrderedDict(d).keys() else 0)


def proxy(d, x):
    return x + (1 if types.MappingProxyType(d) else 0)


class ObjectTruthJumpTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for d in ({}, {"a": 1, "b": 2}, {}, {"a": 1, "b": 2}):
            x = torch.randn(3)
            self.assertEqual(compiled(dict(d), x), fn(dict(d), x))
        self.assertEqual(cnt.frame_count, 2)  # one graph for an empty dict, one for a non-empty one

    def test_keys_view(self):
        self._check(keys_view)

    def test_values_view(self):
        self._check(values_view)

    def test_items_view_not(self):
        self._check(items_view)

    def test_and_or(self):
        self._check(and_or)

    def test_made_in_frame(self):
        self._check(made_in_frame)

    def test_ordered_dict_view(self):
        self._check(ordered)

    def test_mappingproxy(self):
        self._check(proxy)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
