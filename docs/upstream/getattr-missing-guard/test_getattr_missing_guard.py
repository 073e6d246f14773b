# Owner(s): ["module: dynamo"]
"""Reading an attribute the input object does not have is guarded.

``UserDefinedObjectVariable.generic_getattr`` (torch/_dynamo/variables/
user_defined.py; ``var_getattr`` before 2.15) raises ``AttributeError`` inside
the trace when the object passed in has no such attribute, and installed no
guard saying so: only the type was guarded. Code compiled for an object without
``b`` ran the ``except AttributeError:`` branch for a later object that has it
(``o.b``, ``getattr(o, "b")``; plain objects, modules, classes whose
``__getattr__`` raises).
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


class Module(torch.nn.Module):
    def __init__(self, with_b):
        super().__init__()
        self.a = torch.ones(3)
        if with_b:
            self.b = torch.full((3,), 2.0)


class WithGetattr(Obj):
    def __getattr__(self, name):
        raise AttributeError(name)


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


def read(o, x):
    try:
        return o.b * x
    except AttributeError:
        return x - 1


def read_builtin(o, x):
    try:
        return getattr(o, "b") * x  # noqa: B009 - the builtin is what this traces
    except AttributeError:
        return x - 1


class GetattrMissingGuardTests(torch._dynamo.test_case.TestCase):
    def _check(self, fn, cls, order=(False, True), frames=2):
        cnt = CompileCounter()
        compiled = torch.compile(fn, backend=cnt, fullgraph=True)
        for with_b in order:
            x = torch.randn(3)
            expected_obj, obj = cls(with_b), cls(with_b)
            self.assertEqual(compiled(obj, x), fn(expected_obj, x))
            self.assertEqual(sorted(vars(obj)), sorted(vars(expected_obj)))
        self.assertEqual(cnt.frame_count, frames)

    def test_plain_object(self):
        self._check(read, Obj)

    def test_getattr_builtin(self):
        self._check(read_builtin, Obj)

    def test_module(self):
        self._check(read, Module)

    def test_class_getattr_raises(self):
        self._check(read, WithGetattr)

    def test_mapping(self):
        self._check(read, Mapping)

    def test_stored_in_frame_needs_no_guard(self):
        def fn(o, x):
            o.b = x
            del o.b
            try:
                return o.b * x
            except AttributeError:
                return x - 1

        self._check(fn, Obj, order=(False, False), frames=1)


class Base:
    pass


class Sub(Base):
    pass


def read_class_attr(o, cls, x):
    try:
        got = o.b * x
    except AttributeError:
        got = x - 1
    made = cls()
    return got, getattr(made, "b", "default"), hasattr(made, "b")


class ClassAttributeMissingGuardTests(torch._dynamo.test_case.TestCase):
    def test_base_class_gains_the_attribute(self):
        """The first call's objects find `b` nowhere; before the second, a base class gains it: an
        input's read and an object made in the frame must see it (the type guard alone did not)."""
        cnt = CompileCounter()
        compiled = torch.compile(read_class_attr, backend=cnt, fullgraph=True)
        try:
            for gains in (False, True):
                if gains:
                    Base.b = 3.0
                x = torch.randn(3)
                self.assertEqual(compiled(Sub(), Sub, x), read_class_attr(Sub(), Sub, x))
        finally:
            if "b" in vars(Base):
                del Base.b
        self.assertEqual(cnt.frame_count, 2)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
