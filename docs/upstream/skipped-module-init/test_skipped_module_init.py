# Owner(s): ["module: dynamo"]
"""nn.Module.__init__(self), called explicitly through the class, is traced.

Dynamo replaces torch.nn.Module.__init__ at import with its own wrapper
(install_generation_tagging_init.<locals>.patched_init, marked as skipped) and
swaps the original back in wherever it meets the wrapper: super().__init__()
(SuperVariable.call_method) and self.__init__ (UserDefinedObjectVariable).
The spelling ``nn.Module.__init__(self)`` -- an attribute of the class, as used
by tensordict's TensorDictParams and by classes with several bases -- reached
the wrapper and failed with "Attempted to call function marked as skipped".
"""

import torch
import torch._dynamo.test_case
import torch._dynamo.testing
from torch import nn
from torch._dynamo.testing import CompileCounter


class ExplicitInit(nn.Module):
    def __init__(self, weight, scale=2.0):
        nn.Module.__init__(self)
        self.weight = weight
        self.scale = scale


class FullyQualifiedInit(nn.Module):
    def __init__(self, weight):
        torch.nn.Module.__init__(self)
        self.weight = weight


class NoInit(nn.Module):
    pass


class ViaBaseWithoutInit(NoInit):
    # NoInit.__init__ resolves to nn.Module.__init__ through the MRO
    def __init__(self, weight):
        NoInit.__init__(self)
        self.register_buffer("doubled", weight * 2)

    def forward(self, x):
        return x + self.doubled


class Mixin:
    def describe(self):
        return self.weight.sum()


class TwoBases(Mixin, nn.Module):
    # several bases: explicit per-base __init__ calls instead of super()
    def __init__(self, weight):
        nn.Module.__init__(self)
        self.inner = ExplicitInit(weight, scale=3.0)
        self.weight = weight


class ParamsLike(nn.Module):
    """The shape of tensordict 0.8-0.14 TensorDictParams: copy() builds a new
    instance through a classmethod whose __init__ calls nn.Module.__init__."""

    def __init__(self, weight, *, no_convert=False):
        nn.Module.__init__(self)
        self.no_convert = no_convert
        self.weight = weight if no_convert else nn.Parameter(weight)

    @classmethod
    def _new_unsafe(cls, weight):
        return cls(weight, no_convert=True)

    def copy(self):
        return type(self)._new_unsafe(self.weight)


def state(obj):
    """What an eager run leaves behind, comparable with assertEqual."""
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        return [state(o) for o in obj]
    if isinstance(obj, dict):
        return {k: state(v) for k, v in obj.items()}
    if isinstance(obj, nn.Module):
        return (type(obj), {k: state(v) for k, v in vars(obj).items()})
    return obj


class SkippedModuleInitTests(torch._dynamo.test_case.TestCase):
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

    def test_explicit_init_in_compiled_region(self):
        def fn(x, w):
            m = ExplicitInit(w)
            return x * m.scale + m.weight

        self.check(fn, lambda: (torch.randn(3), torch.randn(3)))

    def test_module_made_with_explicit_init_escapes(self):
        def fn(x, w, out):
            m = ExplicitInit(w, scale=3.0)
            out.append(m)
            return x + m.weight

        self.check(fn, lambda: (torch.randn(3), torch.randn(3), []))

    def test_fully_qualified_module_init(self):
        def fn(x, w):
            m = FullyQualifiedInit(w)
            return x - m.weight, m

        self.check(fn, lambda: (torch.randn(3), torch.randn(3)))

    def test_init_of_base_without_init(self):
        def fn(x, w):
            m = ViaBaseWithoutInit(w)
            return m(x), m

        self.check(fn, lambda: (torch.randn(3), torch.randn(3)))

    def test_nested_explicit_init(self):
        def fn(x, w):
            m = TwoBases(w)
            return x * m.inner.scale + m.describe(), m

        self.check(fn, lambda: (torch.randn(3), torch.randn(3)))

    def test_classmethod_constructor_copy(self):
        def fn(x, out):
            swap = out[0].copy()
            out.append(swap)
            return x * swap.weight

        self.check(fn, lambda: (torch.randn(3), [ParamsLike(torch.randn(3))]))


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
