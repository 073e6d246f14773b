# Owner(s): ["module: dynamo"]
"""``obj.__dict__`` of an object made in the frame leaves the frame as that object's dict.

``DunderDictVariable`` (torch/_dynamo/variables/dicts.py) of an object made in the
frame has no source, so returning it (or a ``keys()``/``values()``/``items()`` view
of it), or holding it across a graph break, rebuilt it with
``ConstDictVariable.reconstruct``, which writes only the items it counts as new:
``{}`` when the object itself does not leave the frame, and a copy, not
``vars(obj)``, when it does.
"""

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Obj:
    def __init__(self, x):
        self.a = x
        self.b = 2


def dict_alone(x):
    o = Obj(x)
    o.c = x * 2
    return o.__dict__, x + 1


def values_alone(x):
    o = Obj(x)
    o.b = x + 1
    return list(o.__dict__.values())[:1], o.__dict__.values()


def dict_and_object(x):
    o = Obj(x)
    d = o.__dict__
    o.c = x - 1
    return d, o


class DunderDictEscapeTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, same):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for call in range(2):
            x = torch.randn(3) * (call + 1)
            same(compiled(x), fn(x))
        self.assertEqual(cnt.frame_count, 1)

    def test_dict_alone(self):
        def same(got, expected):
            self.assertEqual(list(got[0].items()), list(expected[0].items()))
            self.assertEqual(list(got[0]), ["a", "b", "c"])
            self.assertEqual(got[1], expected[1])

        self._check(dict_alone, same)

    def test_view_alone(self):
        def same(got, expected):
            self.assertEqual(got[0], expected[0])
            self.assertEqual(list(got[1]), list(expected[1]))
            self.assertEqual(len(got[1]), 2)

        self._check(values_alone, same)

    def test_dict_is_the_objects_own(self):
        def same(got, expected):
            (d, o), (ed, _) = got, expected
            self.assertIs(d, vars(o))
            self.assertEqual(list(d.items()), list(ed.items()))

        self._check(dict_and_object, same)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
