# Owner(s): ["module: dynamo"]
"""An OrderedDict's values view passed to a compiled function.

``VariableBuilder.wrap_listlike`` wraps an ``odict_values`` input as a list whose
items have the source ``GetItemSource(view, i)``; an ``odict_values`` cannot be
indexed, so building a guard on an item raised ``TypeError`` (reported as
``InternalTorchDynamoError``, also without ``fullgraph``).
"""

import collections

import torch
import torch._dynamo.test_case
from torch._dynamo.exc import Unsupported


def loop(x, vals):
    for v in vals:
        x = x * v
    return x


def as_list(x, vals):
    return x + 1, list(vals)


def only_len(x, vals):
    return x * len(vals)


def make(n):
    od = collections.OrderedDict(a=n + 1, b=n + 2)
    if n % 2:
        od["c"] = 3
    return torch.arange(3.0) + n, od.values()


class OrderedDictValuesInputTests(torch._dynamo.test_case.TestCase):
    def _same(self, fn, fullgraph):
        compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
        for n in (1, 2):
            self.assertEqual(repr(compiled(*make(n))), repr(fn(*make(n))))

    def test_item_read_without_fullgraph_runs(self):
        self._same(loop, fullgraph=False)

    def test_list_without_fullgraph_runs(self):
        self._same(as_list, fullgraph=False)

    def test_item_read_with_fullgraph_is_a_graph_break(self):
        with self.assertRaises(Unsupported):
            torch.compile(loop, backend="eager", fullgraph=True)(*make(1))

    def test_len_still_compiles(self):
        self._same(only_len, fullgraph=True)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
