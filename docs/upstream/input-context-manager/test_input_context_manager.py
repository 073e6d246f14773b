# Owner(s): ["module: dynamo"]
"""`with m:` for a MutableMapping that reaches the compiled region from a source.

VariableBuilder wraps an object from a source (an input, an attribute of one,
what one of its methods returns) whose class has plain-Python __enter__ and
__exit__ as a GenericContextWrappingVariable (wrap_user_defined), so `with obj:`
traces. A MutableMapping takes the earlier MutableMapping branch of
VariableBuilder._wrap and became a MutableMappingVariable, which `with` cannot
enter: "Unsupported context manager". tensordict's TensorDict is such a
mapping (`with td.unlock_(): ...`).
"""

import collections.abc

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class LockedStore(collections.abc.MutableMapping):
    """tensordict-like: unlock_() returns self, leaving the `with` relocks."""

    def __init__(self, items):
        self._store = dict(items)
        self.locked = True
        self.depth = 0

    def __getitem__(self, key):
        return self._store[key]

    def __setitem__(self, key, value):
        if self.locked:
            raise RuntimeError("locked")
        self._store[key] = value

    def __delitem__(self, key):
        del self._store[key]

    def __iter__(self):
        return iter(self._store)

    def __len__(self):
        return len(self._store)

    def unlock_(self):
        self.locked = False
        return self

    def __enter__(self):
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        self.locked = True
        return False

    @property
    def scale(self):
        return self._store["a"]

    @scale.setter
    def scale(self, value):
        self.__dict__["_store"] = {**self._store, "a": value}


class Holder:
    def __init__(self, m):
        self.m = m


def make_store():
    return LockedStore({"a": torch.randn(3), "b": torch.randn(3)})


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


class InputContextManagerTests(torch._dynamo.test_case.TestCase):
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

    def test_with_mapping_passed_in(self):
        def fn(x, m):
            with m:
                inside = x * m.depth
            return inside, m.depth

        self.check(fn, lambda: (torch.randn(3), make_store()))

    def test_with_as_binds_the_mapping(self):
        def fn(x, m):
            with m.unlock_() as v:
                v["c"] = x + v["a"]
            return m["c"] * 2, v is m

        self.check(fn, lambda: (torch.randn(3), make_store()))

    def test_with_method_returning_self(self):
        # tensordict 0.6: `with self._param_td.unlock_(): ...`
        def fn(x, m):
            with m.unlock_():
                m["k"] = x + 1
                unlocked = not m.locked
            return m["k"] * 2, unlocked, m.locked

        self.check(fn, lambda: (torch.randn(3), make_store()))

    def test_with_mapping_attribute_of_input(self):
        def fn(x, h):
            with h.m.unlock_():
                del h.m["b"]
                h.m["a"] = x
            return x + len(h.m)

        self.check(fn, lambda: (torch.randn(3), Holder(make_store())))

    def test_nested_with_on_two_mappings(self):
        def fn(x, m1, m2):
            with m1.unlock_(), m2.unlock_():
                m1["k"] = x
                m2["k"] = m1["k"] * 2
            return m1["k"] + m2["k"], m1.locked, m2.locked

        self.check(fn, lambda: (torch.randn(3), make_store(), make_store()))

    def test_mapping_behavior_kept(self):
        # still a MutableMapping: get(), len(), `in`, a property setter
        def fn(x, m):
            with m:
                m.scale = x
                got = m.get("a"), m.get("zz", None), len(m), "b" in m
            return got, m.scale * 2

        self.check(fn, lambda: (torch.randn(3), make_store()))

    def test_mapping_made_in_region(self):
        # control: a context-manager mapping created inside the compiled region
        def fn(x):
            m = LockedStore({"a": x})
            with m.unlock_():
                m["b"] = x * 2
            return m["a"] + m["b"], m.locked

        self.check(fn, lambda: (torch.randn(3),))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
