# Owner(s): ["module: dynamo"]
"""dict(x) and friends over a non-dict mapping read it the way CPython does.

CPython's dict_merge (Objects/dictobject.c) reads any mapping that is not a
dict with PyMapping_Keys + PyObject_GetItem: ``for k in x.keys(): d[k] = x[k]``.
Neither ``x.__iter__`` nor ``x.items()`` is consulted. Dynamo's polyfill
``mutable_mapping_update`` read ``x.items()`` instead, which differs as soon as
a mapping overrides ``keys()`` or ``items()``, or iterates over something other
than its keys (tensordict's TensorDict and TensorDictParams iterate over the
batch dimension).
"""

import collections
import collections.abc

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch._dynamo.testing import CompileCounter


class Store(collections.abc.MutableMapping):
    """Only the five abstract methods; keys(), items(), values() are Mapping's."""

    def __init__(self, items):
        self._store = dict(items)

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


class KeysSubset(Store):
    """keys() hides the private entries that __iter__ yields."""

    def keys(self):
        return [k for k in self._store if not k.startswith("_")]


class ItemsScaled(Store):
    """items() disagrees with keys() + __getitem__."""

    def items(self):
        return [(k, v * 10) for k, v in self._store.items()]


class BatchIter(Store):
    """Like tensordict's TensorDict: iteration walks the leading (batch)
    dimension, keys() are the mapping's keys."""

    def __iter__(self):
        first = next(iter(self._store.values()))
        for i in range(first.shape[0]):
            yield {k: v[i] for k, v in self._store.items()}

    def keys(self):
        return self._store.keys()


class ModuleMapping(torch.nn.Module, BatchIter):
    """Like tensordict's TensorDictParams: an nn.Module that is a mapping
    (tracked as UnspecializedNNModuleVariable)."""

    def __init__(self, items):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(()))
        self._store = dict(items)

    def __hash__(self):
        # Mapping sets __hash__ = None; see test_unhashable_module.py for that case
        return id(self)


def make_items():
    return {"a": torch.randn(2, 3), "b": torch.randn(2, 3), "_c": torch.randn(2, 3)}


def summary(d):
    """The keys in order, and the values through a graph op."""
    return list(d), {k: v * 2 for k, v in d.items()}


class ModuleMappingDictTests(torch._dynamo.test_case.TestCase):
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
            self.assertEqual(opt_fn(*compiled_inputs), fn(*eager_inputs))
            for compiled, eager in zip(compiled_inputs, eager_inputs):
                self.assertEqual(vars(compiled), vars(eager))
        self.assertEqual(cnt.frame_count, 1)

    def test_dict_reads_keys_not_iter(self):
        def fn(m):
            return summary(dict(m))

        self.check(fn, lambda: (KeysSubset(make_items()),))

    def test_dict_ignores_overridden_items(self):
        def fn(m):
            return summary(dict(m))

        self.check(fn, lambda: (ItemsScaled(make_items()),))

    def test_dict_of_mapping_iterating_batch_dim(self):
        def fn(m):
            d = dict(m)
            return list(d), d["a"] + d["b"]

        self.check(fn, lambda: (BatchIter(make_items()),))

    def test_dict_with_kwargs_over_mapping(self):
        def fn(m, x):
            return summary(dict(m, extra=x, a=x * 2))

        self.check(fn, lambda: (KeysSubset(make_items()), torch.randn(3)))

    def test_dict_of_module_mapping(self):
        def fn(m, x):
            d = dict(m)
            return list(d), d["a"] * m.scale + x

        self.check(fn, lambda: (ModuleMapping(make_items()), torch.randn(3)))

    def test_ordered_dict_reads_keys(self):
        def fn(m):
            return summary(collections.OrderedDict(m))

        self.check(fn, lambda: (KeysSubset(make_items()),))

    def test_dict_is_a_copy(self):
        # writes to the new dict do not reach the mapping, and the reverse
        def fn(m, x):
            d = dict(m)
            d["a"] = d["a"] + x
            del d["b"]
            m["new"] = x
            return summary(d), len(m)

        self.check(fn, lambda: (KeysSubset(make_items()), torch.randn(3)))

    # {**m}, f(**m) and d.update(m) go through ConstDictVariable's dict_update,
    # which already reads keys() + __getitem__; dict(m) must agree with them.
    def test_dict_display_unpack_reads_keys(self):
        def fn(m):
            return summary({"first": 1, **m, "last": 2})

        self.check(fn, lambda: (KeysSubset(make_items()),))

    def test_call_unpack_reads_keys(self):
        def g(**kwargs):
            return summary(kwargs)

        def fn(m):
            return g(**m)

        self.check(fn, lambda: (KeysSubset(make_items()),))

    def test_dict_update_reads_keys(self):
        def fn(m, x):
            d = {"x": x}
            d.update(m)
            return summary(d)

        self.check(fn, lambda: (ItemsScaled(make_items()), torch.randn(3)))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
