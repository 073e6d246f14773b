# Owner(s): ["module: dynamo"]
"""A weak reference read from an input is written back as itself.

``WeakRefVariable.build`` (torch/_dynamo/variables/misc.py) gave the tracker of a
weak reference read from a source the source of its *referent*
(``WeakRefCallSource``), so Dynamo rebuilt the weak reference by calling it:
returning it, storing a new list that holds it, or keeping it live across a graph
break handed back the referent instead.
"""

import weakref

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Node:
    def __init__(self, value):
        self.value = value


def on_death(ref):
    pass


class Holder:
    def __init__(self, node):
        self.node = node
        self.ref = weakref.ref(node, on_death)
        self.refs = [weakref.ref(node), weakref.ref(self)]


def returned(x, h):
    return x + 1, h.ref


def list_stored(x, h):
    h.refs = [r for r in h.refs if r is not None] + [x * 2]
    return x - 1


def across_break(x, h):
    out = [r for r in (h.ref,) if r is not None]  # looked at: a tracker, not a lazy one
    torch._dynamo.graph_break()
    return out, x + 1


def called(x, h):
    return x + h.ref().value, h.ref() is h.node


class WeakRefInputSourceTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, fullgraph=True, frames=1):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=fullgraph)
        for value in (1.0, 2.0):
            node = Node(torch.full((3,), value))
            expected_h, h = Holder(node), Holder(node)
            x = torch.randn(3)
            expected, got = fn(x, expected_h), compiled(x, h)
            self.assertEqual(
                torch.utils._pytree.tree_map(type, got),
                torch.utils._pytree.tree_map(type, expected),
            )
            for e, g in zip(torch.utils._pytree.tree_leaves(expected), torch.utils._pytree.tree_leaves(got)):
                if isinstance(e, weakref.ref):
                    self.assertIs(g(), e())
                    self.assertIs(g.__callback__, e.__callback__)
                elif isinstance(e, torch.Tensor):
                    self.assertEqual(g, e)
            self.assertEqual([type(r) for r in h.refs], [type(r) for r in expected_h.refs])
            self.assertEqual([r() if isinstance(r, weakref.ref) else None for r in h.refs][:1], [node])
        self.assertEqual(cnt.frame_count, frames)

    def test_returned(self):
        self._check(returned)

    def test_list_stored(self):
        self._check(list_stored)

    def test_across_graph_break(self):
        self._check(across_break, fullgraph=False)  # the part before the break has no graph

    def test_called_control(self):
        self._check(called)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
