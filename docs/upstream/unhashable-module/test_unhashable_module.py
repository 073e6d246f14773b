# Owner(s): ["module: dynamo"]
"""Modules that are unhashable can be used in compiled code.

A class deriving from nn.Module and collections.abc.Mapping (or one defining
__eq__) without __hash__ is unhashable: Mapping defines __eq__ and sets
__hash__ = None. Eager code that does not walk the module tree works. Dynamo
walked it while wrapping any module from a source (VariableBuilder.wrap_module
marks every parameter and buffer as a static input;
OutputGraph.add_fqn_info_for_inlined_modules records their names), through
named_parameters()/named_buffers(), whose named_modules() hashes every module:
"Observed exception ... TypeError: unhashable type".
"""

import collections.abc

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch import nn
from torch._dynamo.testing import CompileCounter


class MappingModule(nn.Module, collections.abc.MutableMapping):
    # no __hash__: Mapping sets __hash__ = None
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(()))
        self.register_buffer("shift", torch.zeros(3))
        self._store = {"a": torch.randn(3), "b": torch.randn(3)}

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

    def forward(self, x):
        return x * self.scale + self["a"] + self.shift


class EqModule(nn.Module):
    # defining __eq__ without __hash__ makes a class unhashable too
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def __eq__(self, other):
        return isinstance(other, EqModule) and other.lin is self.lin

    def forward(self, x):
        return self.lin(x)


class Parent(nn.Module):
    # hashable, with an unhashable submodule, a shared submodule and a tied weight
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.maps = MappingModule()
        self.same_lin = self.lin
        self.other = nn.Linear(3, 3)
        self.other.weight = self.lin.weight

    def forward(self, x):
        return self.other(self.lin(x)) * self.maps.scale + self.maps["a"]


def state(obj):
    """What an eager run leaves behind, comparable with assertEqual."""
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        return [state(o) for o in obj]
    if isinstance(obj, dict):
        return {k: state(v) for k, v in obj.items()}
    if hasattr(obj, "__dict__"):
        return (type(obj), {k: state(v) for k, v in vars(obj).items()})
    return obj


class UnhashableModuleTests(torch._dynamo.test_case.TestCase):
    def check(self, fn, make_inputs):
        """fn compiled with fullgraph=True equals eager on two calls with
        different inputs (return value and the state of every input object),
        without recompiling."""
        cnt = CompileCounter()
        opt_fn = torch.compile(fn, backend=cnt, fullgraph=True)
        for seed in (0, 1):
            torch.manual_seed(seed)
            eager_inputs = make_inputs()
            torch.manual_seed(seed)
            compiled_inputs = make_inputs()
            self.assertEqual(state(opt_fn(*compiled_inputs)), state(fn(*eager_inputs)))
            self.assertEqual(state(compiled_inputs), state(eager_inputs))
        self.assertEqual(cnt.frame_count, 1)

    def test_unhashable_mapping_module_input(self):
        def fn(m, x):
            return m["a"] * m.scale + m["b"] + m.shift + x

        self.assertIsNone(type(MappingModule()).__hash__)
        self.check(fn, lambda: (MappingModule(), torch.randn(3)))

    def test_dict_of_unhashable_mapping_module(self):
        def fn(m, x):
            d = dict(m)
            return d["a"] * m.scale + d["b"] + x, list(d)

        self.check(fn, lambda: (MappingModule(), torch.randn(3)))

    def test_call_unhashable_module(self):
        def fn(m, x):
            return m(x)

        self.check(fn, lambda: (MappingModule(), torch.randn(3)))

    def test_module_defining_eq_without_hash(self):
        def fn(m, x):
            return m(x).relu()

        self.assertIsNone(EqModule.__hash__)
        self.check(fn, lambda: (EqModule(), torch.randn(3)))

    def test_unhashable_submodule_of_hashable_module(self):
        def fn(p, x):
            return p(x)

        self.check(fn, lambda: (Parent(), torch.randn(3)))

    def test_mutations_of_unhashable_module(self):
        def fn(m, x):
            m["c"] = m["a"] + x
            del m["b"]
            m.calls = len(m)
            return m["c"] * m.scale

        self.check(fn, lambda: (MappingModule(), torch.randn(3)))

    def test_parameters_and_buffers_marked_static(self):
        m = MappingModule()
        torch.compile(lambda m, x: m(x), backend="eager", fullgraph=True)(
            m, torch.randn(3)
        )
        self.assertEqual(m.scale._dynamo_static_input_type, "unguarded")
        self.assertEqual(m.shift._dynamo_static_input_type, "unguarded")


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
