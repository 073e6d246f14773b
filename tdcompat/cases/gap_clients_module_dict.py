"""Real clients (issue 14): ``nn.Module.__setattr__`` over an existing instance attribute.

TorchRL's losses build their value estimator inside the compiled call:
``self._value_estimator = TD0Estimator(...)`` where ``__init__`` had set
``self._value_estimator = None``. ``nn.Module.__setattr__`` then runs
``remove_from(self.__dict__, ...)``: ``isinstance(self.__dict__, dict)`` (no type for
Dynamo's ``GetAttrVariable`` before 2.12: ``dunder-dict-type``), ``del
self.__dict__[name]`` and ``self._modules[name] = value`` (or ``register_parameter``).
The deletion must replay before the bookkeeping dict's update and later reads of
``m.name`` go through ``nn.Module.__getattr__`` (``instance-dict-writes``). The cases
use modules without parameters where one is made in the frame (2.5 cannot build an
``nn.Parameter`` in the frame under ``fullgraph=True``).
"""

from __future__ import annotations

import torch
from torch import nn

from .harness import GRAPH_BREAK, Case, CaseList, Expect

BOTH = ("dunder-dict-type", "instance-dict-writes", "module-deleted-attr")

#: Measured without tdcompat on 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0: a graph
#: break (``isinstance(GetAttrVariable(..., __dict__), BuiltinVariable(dict))``, ``builtin
#: isinstance() cannot determine type of argument``); 2.12.1, 2.13.0, 2.15.0: ok.
_BREAK = (Expect("<2.12", GRAPH_BREAK),)
#: The cases that read the attribute back after the deletion also break on 2.12.1 (``Attempted
#: to read a deleted variable``, with ``dunder-dict-replay`` too): ``module-deleted-attr``.
_BREAK_READ = (Expect("<2.13", GRAPH_BREAK),)



class Scale(nn.Module):
    """A module without parameters (a buffer only): buildable in the frame on 2.5."""

    def __init__(self, n):
        super().__init__()
        self.register_buffer("s", torch.full((n,), 2.0))

    def forward(self, x):
        return x * self.s


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.est = None
        self.w = torch.ones(3)
        self.lin = Scale(3)


def _holder():
    return Holder(), torch.randn(3)


def module_isinstance_dict(m, x):
    return isinstance(m.__dict__, dict), type(m.__dict__) is dict, x + 1


def submodule_over_attribute(m, x):
    """``m.est = Scale(3)`` where ``est`` is an instance attribute (None)."""
    m.est = Scale(3)
    return m.est(x), hasattr(m, "est"), "est" in m.__dict__, getattr(m, "est") is m.est  # noqa: B009 - both ways


def _holder_parameter():
    return Holder(), nn.Parameter(torch.randn(3)), torch.randn(3)


def parameter_over_attribute(m, p, x):
    """``m.w = p`` (an ``nn.Parameter`` passed in) where ``w`` is a plain tensor attribute."""
    m.w = p
    return m.w * x, "w" in m.__dict__, hasattr(m, "w")


class Lazy(nn.Module):
    """The estimator's shape: an attribute set to None, then to a submodule."""

    def __init__(self, n):
        super().__init__()
        self.net = None
        self.n = n
        self.net = Scale(n)

    def forward(self, x):
        return self.net(x) + self.n


def made_in_frame(x):
    lazy = Lazy(3)
    return lazy(x), "net" in lazy.__dict__, hasattr(lazy, "net"), isinstance(lazy.__dict__, dict)


class Loss(nn.Module):
    """TorchRL's ``LossModule`` shape: its own ``__setattr__``/``__getattr__`` and a value
    estimator made by the first read of a property."""

    def __init__(self):
        super().__init__()
        self.scale = 3
        self._value_estimator = None

    def __setattr__(self, name, value):
        super().__setattr__(name, value)

    def __getattr__(self, item):
        if item.startswith("target_") and item.endswith("_params"):
            return None
        return super().__getattr__(item)

    @property
    def value_estimator(self):
        out = self._value_estimator
        if out is None:
            self._value_estimator = Lazy(3)
            return self._value_estimator
        return out

    def forward(self, x):
        return self.value_estimator(x) * self.scale


def _loss():
    return Loss(), torch.randn(3)


def lazy_estimator(loss, x):
    return loss(x), loss(x * 2), sorted(loss._modules)


CASES = CaseList()
CASES.add(
    Case("module_dict_isinstance", ("dunder-dict-type",), module_isinstance_dict, _holder, unpatched=_BREAK,
         doc="isinstance(m.__dict__, dict) / type(m.__dict__) on an nn.Module passed in"),
    Case("module_setattr_submodule_over_attr", BOTH, submodule_over_attribute, _holder, unpatched=_BREAK_READ,
         doc="m.est = Module() over an instance attribute: remove_from deletes it from __dict__, _modules gets it"),
    Case("module_setattr_parameter_over_attr", BOTH, parameter_over_attribute, _holder_parameter, unpatched=_BREAK_READ,
         doc="m.w = nn.Parameter over a plain tensor attribute (register_parameter after remove_from)"),
    Case("module_setattr_made_in_frame", BOTH, made_in_frame, lambda: (torch.randn(3),), unpatched=_BREAK_READ,
         doc="a module made in the frame whose __init__ sets self.net = None, then self.net = Module()"),
    Case("module_setattr_lazy_estimator", BOTH, lazy_estimator, _loss, unpatched=_BREAK_READ,
         doc="TorchRL: the loss's value estimator made by the first call (own __setattr__/__getattr__, property)"),
)


# -- reads after the deletion alone (module-deleted-attr) -------------------------------------
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2


def deleted_then_registered(x):
    """``del m.scale`` then a submodule under that name, on a module made in the frame: ``m.scale``
    is found by ``nn.Module.__getattr__`` in ``_modules`` (Dynamo reads the deletion record)."""
    m = Scaled()
    del m.scale
    m._modules["scale"] = Scale(3)
    return hasattr(m, "scale"), m.scale(x), "scale" in m.__dict__


CASES.add(
    Case("module_deleted_then_registered", ("module-deleted-attr",), deleted_then_registered,
         lambda: (torch.randn(3),), unpatched=_BREAK_READ, torch="!=2.8.*",  # 2.8: `del m.x` breaks natively
         doc="del m.x then m._modules['x'] = submodule on a module made in the frame: m.x is the submodule"),
)
