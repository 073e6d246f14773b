"""Plain-Python patterns on real clients' paths (issue 14: TorchRL losses).

* ``enum-class-iter``: iterating an ``Enum`` class. TorchRL checks on every
  loss's first call that each member of ``ValueEstimators`` is registered:
  ``all(value_type in _VALUE_ESTIMATOR_REGISTRY for value_type in ValueEstimators)``
  (``torchrl/objectives/utils.py: _ensure_builtin_value_estimators_registered``).
* ``deepcopy-constant``: ``copy.deepcopy`` of a str, number, None or a tuple of
  them, which ``dataclasses.asdict`` runs on every field (TorchRL ``set_keys``).
"""

from __future__ import annotations

import abc
import dataclasses
import enum

import torch

from .harness import GRAPH_BREAK, Case, CaseList, Expect

ENUM_ITER = ("enum-class-iter",)

#: Measured without tdcompat on 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0: a
#: graph break (``call_method UserDefinedClassVariable(<enum ...>) __iter__``, ``Unsupported
#: method call``, ``Observed exception``, ``failed to bind arguments``, ``Failed to trace
#: builtin operator``); 2.12.1, 2.13.0, 2.15.0: ok.
ENUM_ITER_BREAKS = (Expect("<2.12", GRAPH_BREAK),)


class Estimator(enum.Enum):
    TD0 = "td0"
    TD1 = "td1"
    GAE = "gae"
    TDLAMBDA = "td_lambda"
    GAE_ALIAS = "gae"  # an alias: not iterated


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 5


class Mode(enum.Enum):
    A = 10
    B = 20


#: TorchRL's registry shape: a dict keyed by the members.
REGISTRY = {Estimator.TD0: 0, Estimator.TD1: 1, Estimator.GAE: 2, Estimator.TDLAMBDA: 3}


def _x():
    return (torch.randn(3),)


def enum_for_loop(x):
    out = x
    for level in Level:
        out = out * level.value
    return out


def enum_all_registered(x):
    # torchrl/objectives/utils.py: _ensure_builtin_value_estimators_registered
    if all(value_type in REGISTRY for value_type in Estimator):
        return x + 1
    return x - 1


def enum_list_members(x):
    members = list(Estimator)
    return x + len(members), members, tuple(Level), [m.name.lower() for m in Estimator]


class Holder:
    def __init__(self, kind):
        self.kind = kind


def _holder():
    return torch.randn(3), Holder(Level)


def _other_enum(args):
    """The second call iterates another Enum class: the class must be guarded."""
    args[1].kind = Mode


def enum_from_input(x, holder):
    return x + sum(m.value for m in holder.kind), [m.name for m in holder.kind]


CASES = CaseList()
CASES.add(
    Case("clients_enum_for_loop", ENUM_ITER, enum_for_loop, _x, unpatched=ENUM_ITER_BREAKS,
         doc="`for m in SomeEnum:` (Unsupported: call_method UserDefinedClassVariable(<enum>) __iter__)"),
    Case("clients_enum_all_registered", ENUM_ITER, enum_all_registered, _x, unpatched=ENUM_ITER_BREAKS,
         doc="TorchRL: all(v in REGISTRY for v in ValueEstimators) on every loss's first call"),
    Case("clients_enum_list_members", ENUM_ITER, enum_list_members, _x, unpatched=ENUM_ITER_BREAKS,
         doc="list(E) / tuple(E) / a comprehension over E, members returned (aliases not iterated)"),
    Case("clients_enum_from_input", ENUM_ITER, enum_from_input, _holder, unpatched=ENUM_ITER_BREAKS,
         vary=_other_enum, doc="an Enum class read from an input; the second call passes another class"),
)


# -- copy.deepcopy of an immutable constant (deepcopy-constant); dataclasses.asdict ends in it --
DEEPCOPY = ("deepcopy-constant",)


def deepcopy_constants(x):
    import copy

    return x + 1, copy.deepcopy("advantage"), copy.deepcopy((1, 2.5, None, ("a", True))), copy.deepcopy(7)


@dataclasses.dataclass
class _Keys:
    """The shape of TorchRL's ``ValueEstimatorBase._AcceptedKeys``."""

    advantage: str = "advantage"
    value_target: str = "value_target"
    done: str = "done"


def _keys():
    return torch.randn(3), _Keys()


def dataclass_asdict(x, keys):
    # torchrl/objectives/value/advantages.py: set_keys -> dataclasses.asdict(self._AcceptedKeys())
    return x + 1, dataclasses.asdict(keys)


CASES.add(
    Case("clients_deepcopy_constant", DEEPCOPY, deepcopy_constants, _x, unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="copy.deepcopy of a str / tuple of constants / int "
             "(Unsupported: copy.deepcopy ConstantVariable(str: ...))"),
    # 2.5 skips dataclasses.asdict as a stdlib function: a break with tdcompat too.
    Case("clients_dataclass_asdict", DEEPCOPY, dataclass_asdict, _keys, unpatched=(Expect("<2.12", GRAPH_BREAK),),
         torch=">=2.6", doc="dataclasses.asdict of str fields (TorchRL set_keys): ends in copy.deepcopy(field)"),
)


# -- dataclasses functions on 2.5 (dataclasses-inline) and hasattr(type(new object)) (class-hasattr) --
DATACLASSES = ("dataclasses-inline",)
CLASS_HASATTR = ("class-hasattr",)


def dataclass_fields(x, keys):
    """dataclasses.fields / is_dataclass / replace of an input dataclass (no deepcopy)."""
    names = [f.name for f in dataclasses.fields(keys)]
    return x + len(names), names, dataclasses.is_dataclass(keys), dataclasses.is_dataclass(x)


def _other_keys(args):
    args[1].done = "terminated"


def hasattr_type_of_new_object(x):
    keys = _Keys()
    return x + 1, hasattr(type(keys), "__dataclass_fields__"), hasattr(type(keys), "missing"), hasattr(_Keys, "done")


class Estimator_:
    """TorchRL's ``ValueEstimatorBase`` keys: ``_tensor_keys`` is None until ``set_keys``."""

    def __init__(self):
        self._tensor_keys = None


def _estimator():
    return torch.randn(3), Estimator_()


def _estimator_with_keys(args):
    """The second call's estimator already has keys (the ``else`` branch, asdict of an input)."""
    args[1]._tensor_keys = _Keys(done="terminated")


def set_keys(x, est):
    # torchrl/objectives/value/advantages.py: ValueEstimatorBase.set_keys
    conf = dataclasses.asdict(_Keys()) if est._tensor_keys is None else dataclasses.asdict(est._tensor_keys)
    conf.update({"value_target": "target"})  # TorchRL: conf.update(kwargs)
    est._tensor_keys = _Keys(**conf)
    return x + len(est._tensor_keys.done), conf


CASES.add(
    Case("clients_dataclass_fields", DATACLASSES, dataclass_fields, _keys, vary=_other_keys,
         unpatched=(Expect("<2.6", GRAPH_BREAK, detail=r"skip function \w+ in file .*dataclasses\.py"),),
         doc="dataclasses.fields / is_dataclass on 2.5 (Unsupported: skip function fields in file dataclasses.py)"),
    Case("clients_hasattr_type_of_new_object", CLASS_HASATTR, hasattr_type_of_new_object, _x,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail="hasattr UserDefinedClassVariable"),),
         doc="hasattr(type(o), name) for o made in the frame (Unsupported: hasattr UserDefinedClassVariable ...)"),
    Case("clients_dataclass_set_keys", DEEPCOPY + DATACLASSES + CLASS_HASATTR, set_keys, _estimator,
         vary=_estimator_with_keys, unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="TorchRL set_keys: asdict of a new or stored keys dataclass, update, a new one stored"),
)


# -- hash() of a constant (hash-constant-fold; TensorDictParams.__hash__ on 2.10) --------------
class Token:
    """An object only its identity matters for."""


class IdHashed(torch.nn.Module):
    """tensordict 0.14's ``TensorDictParams.__hash__``: the ids of itself and of an object
    its instance dict holds."""

    def __init__(self):
        super().__init__()
        self.__dict__["_param_td"] = Token()
        self.w = torch.nn.Parameter(torch.ones(3))

    def __hash__(self):
        return hash((id(self), id(self.__dict__.get("_param_td"))))


def hash_constant_tuple(m, x):
    return hash((3, "a", 2.5, None)), x + 1


def call_id_hash(m, x):
    """The hash is the same expression computed in the frame: True in eager."""
    return m.__hash__() == hash((id(m), id(m.__dict__.get("_param_td")))), x * m.w


class WalksIdHashed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = IdHashed()


def walk_parameters(m, x):
    """``parameters()`` walks ``named_modules()``, whose ``memo`` set hashes each submodule."""
    for p in m.parameters():
        x = x + p
    return x


def module_in_set(m, x):
    """``nn.Module.named_modules()``' memo: a module (tracked, its attributes read) whose class
    defines ``__hash__`` goes into a set, and membership is asked of it and of another module."""
    inner = m.inner
    y = x * inner.w
    memo = set()
    memo.add(inner)
    seen = {inner: "inner"}
    return y, inner in memo, m in memo, len(memo), seen.get(inner), seen.get(m, "absent")


class OverridesParameters(torch.nn.Module):
    """TorchRL's ``LossModule``: ``named_parameters``/``parameters`` overridden as generators
    (so Dynamo inlines ``nn.Module.named_modules`` and its memo set), over a submodule whose
    class defines ``__hash__`` (tensordict's ``TensorDictParams``)."""

    def __init__(self):
        super().__init__()
        self.inner = IdHashed()
        self.lin = torch.nn.Linear(3, 3)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        for name, p in super().named_parameters(prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate):
            yield name, p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p


def default_device(m, x):
    """TorchRL's ``LossModule._default_device``, after the module's attributes were read."""
    y = x * m.inner.w
    devices = set()
    for p in m.parameters():
        devices.add(p.device)
    return y, len(devices), next(iter(devices)) if len(devices) == 1 else None


def _overrides_parameters():
    return OverridesParameters(), torch.randn(3)


def _id_hashed():
    return IdHashed(), torch.randn(3)


def _walks_id_hashed():
    return WalksIdHashed(), torch.randn(3)


CASES.add(
    Case("hash_constant_tuple", ("hash-constant-fold",), hash_constant_tuple, _id_hashed,
         unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="`hash((3, 'a', 2.5, None))`: every argument is a constant"),
    Case("hash_ids_in_dunder_hash", ("hash-constant-fold",), call_id_hash, _id_hashed,
         unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="TensorDictParams.__hash__'s `hash((id(self), id(self.__dict__.get('_param_td'))))`"),
    # 2.5-2.9 never trace the __hash__; 2.11-2.12 refuse the set membership itself ("User-defined
    # object with overridden __hash__": module-overridden-hash, cases hash_module_in_set and
    # hash_module_default_device); 2.13 on: ok.
    Case("hash_module_in_set", ("module-overridden-hash",), module_in_set, _walks_id_hashed,
         # Measured without tdcompat: ok on 2.5.1-2.9.1 and 2.13.0-2.15.0; on 2.10.0, 2.11.0, 2.12.1
         # "User-defined object with overridden __hash__" (raise_on_overridden_hash).
         unpatched=(Expect(">=2.10,<2.13", GRAPH_BREAK,
                           detail="^Unsupported: User-defined object with overridden __hash__"),),
         doc="a module whose class defines __hash__ in a set and as a dict key (named_modules' memo)"),
    Case("hash_module_default_device", ("hash-constant-fold", "module-overridden-hash"), default_device,
         _overrides_parameters, unpatched=(Expect(">=2.10,<2.13", GRAPH_BREAK),),
         doc="TorchRL's _default_device: overridden parameters() walking a submodule whose class defines __hash__"),
    Case("hash_module_walk", ("hash-constant-fold",), walk_parameters, _walks_id_hashed, torch="<2.11",
         unpatched=(Expect("==2.10.*", GRAPH_BREAK),),
         doc="`for p in self.parameters()` over a submodule with that __hash__ (TorchRL's _default_device)"),
)


# -- class-setattr: TorchRL's Composite.__new__ sets class attributes on every spec it makes -------
class Spec(abc.ABC):  # noqa: B024 - an ABC without abstract methods, as TorchRL has it
    """TorchRL's ``Composite``: ``__new__`` resets class attributes each time (an ABC, as there)."""

    def __new__(cls, *args, **kwargs):
        cls._device = None
        cls._is_locked = False
        return super().__new__(cls)

    def __init__(self, x):
        self.x = x


def _spec_made():
    Spec(None)  # eager first, as a loss module built before compiling has made its specs
    return (torch.randn(3),)


def make_spec(x):
    spec = Spec(x + 1)
    return spec.x * 2, Spec._device, spec._is_locked, type(spec)._is_locked, spec


CASES.add(
    Case("class_setattr_unchanged", ("class-setattr",), make_spec, _spec_made,
         unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="`cls._device = None` in `__new__` where the class already holds None (TorchRL's Composite)"),
)


class EqOnly:
    """Defines ``__eq__`` alone, so Python sets ``__hash__ = None``: ``hash()`` raises TypeError."""

    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, EqOnly) and other.n == self.n


def hash_unhashable_in_try(o, x):
    try:
        return x * (hash(o) == hash(o)), "hashed"
    except TypeError as error:
        return x + o.n, str(error)


def _eq_only():
    return EqOnly(2), torch.randn(3)


CASES.add(
    # Found by the fuzzer as "regressed" on 2.8-2.11 for an unhashable module (unhashable-module lets
    # Dynamo wrap it, then hash() broke); the plain-object form needs hash-constant-fold alone.
    # 2.5-2.7 cannot raise TypeError inside the trace: a graph break with and without tdcompat.
    Case("hash_unhashable_in_try", ("hash-constant-fold",), hash_unhashable_in_try, _eq_only, torch=">=2.8",
         unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="`try: hash(o) except TypeError` for an object whose class sets __hash__ = None (defines __eq__ only)"),
)
