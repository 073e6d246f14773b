"""Structural snapshots of objects, to compare eager and compiled side effects.

Eager and compiled runs work on separate, equal, fresh inputs, so object
identity means nothing across them: a snapshot records structure and values
(tensors by value, modules with ``named_parameters()``, any object by its
``__dict__`` and slots, weak references by their referent) and ``diff`` names
the first path where two snapshots differ.
"""

from __future__ import annotations

import collections.abc
import types
import weakref
from typing import Any, Optional

import torch

MAX_DEPTH = 8
_ATOMS = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.Size)


def snapshot(obj: Any, _depth: int = 0, _seen: Optional[dict] = None) -> Any:
    """``_seen`` holds the objects on the current path only: a shared reference
    is snapshotted in full each time (aliasing across runs cannot be compared
    by identity), a reference back to an ancestor becomes ``("cycle", level)``."""
    seen = {} if _seen is None else _seen
    if isinstance(obj, _ATOMS):
        return obj
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)):
        return ("ref", getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj))))
    if isinstance(obj, types.MethodType):
        return ("method", obj.__func__.__qualname__, snapshot(obj.__self__, _depth + 1, seen))
    if id(obj) in seen:
        return ("cycle", seen[id(obj)])
    if _depth > MAX_DEPTH:
        return ("deep", type(obj).__qualname__)
    seen[id(obj)] = _depth
    try:
        return _snapshot_new(obj, _depth + 1, seen)
    finally:
        del seen[id(obj)]


def _snapshot_new(obj: Any, d: int, seen: dict) -> Any:
    if isinstance(obj, torch.Tensor):
        value = obj.detach()
        return ("tensor", type(obj).__name__, value.dtype, tuple(value.shape), obj.requires_grad, value.clone())
    if isinstance(obj, weakref.ref):
        return ("weakref", snapshot(obj(), d, seen), snapshot(obj.__callback__, d, seen))
    if isinstance(obj, dict):
        keys = _comparable_keys(obj)
        return (type(obj).__qualname__, {keys(k): snapshot(v, d, seen) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return (type(obj).__qualname__, [snapshot(v, d, seen) for v in obj])
    if isinstance(obj, (collections.abc.KeysView, collections.abc.ValuesView, collections.abc.ItemsView)):
        # dict_keys/dict_values/dict_items and Mapping views: what they show, in order.
        return (type(obj).__qualname__, [snapshot(v, d, seen) for v in obj])
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__qualname__, sorted(map(repr, obj)))
    if _is_tensordict(obj):
        return _tensordict_snapshot(obj, d, seen)
    state = {}
    if isinstance(obj, torch.nn.Module):
        state["<named_parameters>"] = [(n, snapshot(p, d, seen)) for n, p in _named(obj, "_parameters")]
        state["<named_buffers>"] = [(n, snapshot(b, d, seen)) for n, b in _named(obj, "_buffers")]
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                state[f"<slot {slot}>"] = snapshot(getattr(obj, slot), d, seen)
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        # Attribute order is not behaviour; dict order (below) is.
        keys = _comparable_keys(attrs)
        state.update({keys(k): snapshot(attrs[k], d, seen) for k in sorted(attrs, key=str)})
    return ("object", type(obj).__qualname__, state)


class NanKey:
    """A float NaN dict key, comparable across runs: each run makes its own NaN object, and
    NaN keys match only by identity, so the n-th NaN key of a dict stands for its n-th one."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NanKey) and other.index == self.index

    def __hash__(self) -> int:
        return hash((NanKey, self.index))

    def __repr__(self) -> str:
        return "nan" if self.index == 0 else f"nan#{self.index}"


def _comparable_keys(mapping: dict) -> Any:
    """A function mapping each key of ``mapping`` to itself, or a NaN key to its ``NanKey``."""
    nans = {id(k): NanKey(i) for i, k in enumerate(k for k in mapping if isinstance(k, float) and k != k)}
    return (lambda k: nans.get(id(k), k)) if nans else (lambda k: k)


def _named(module: torch.nn.Module, kind: str):
    """``named_parameters()``/``named_buffers()``, falling back to an ``id()`` walk
    for modules that cannot be hashed (nn.Module + Mapping without ``__hash__``),
    where torch's own memo set raises even in eager."""
    try:
        return list(module.named_parameters() if kind == "_parameters" else module.named_buffers())
    except TypeError:
        out, seen_ids = [], set()

        def walk(mod, prefix):
            for name, value in vars(mod).get(kind, {}).items():
                if value is not None and id(value) not in seen_ids:
                    seen_ids.add(id(value))
                    out.append((prefix + name, value))
            for name, child in vars(mod).get("_modules", {}).items():
                if child is not None:
                    walk(child, f"{prefix}{name}.")

        walk(module, "")
        return out


def _is_tensordict(obj: Any) -> bool:
    return type(obj).__module__.startswith("tensordict.") and hasattr(obj, "batch_size") and hasattr(obj, "items")


def _tensordict_snapshot(td: Any, depth: int, seen: dict) -> Any:
    """A tensordict by what it holds, not by its private bookkeeping.

    tensordict keeps ``_last_op``, ``_last_op_queue`` and ``_cache`` differently
    under compile on purpose (``is_compiling()`` branches), so those are not
    side effects a user can observe; a lost write still shows, because the
    ``with td.to_module(m)`` exit then fails to restore ``m``.
    """
    state = {
        "batch_size": tuple(td.batch_size),
        "device": td.device,
        "is_locked": bool(getattr(td, "is_locked", False)),
        "items": {k: snapshot(v, depth, seen) for k, v in td.items()},
    }
    if isinstance(td, torch.nn.Module):
        state["<named_parameters>"] = [(n, snapshot(p, depth, seen)) for n, p in _named(td, "_parameters")]
    return ("tensordict", type(td).__qualname__, state)


def diff(a: Any, b: Any, path: str = "", rtol: float = 1e-5, atol: float = 1e-6) -> Optional[str]:
    """First difference between two snapshots, as ``path: a != b``; None when equal."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return f"{path}: {_short(a)} != {_short(b)}"
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: tensor {a.dtype}{tuple(a.shape)} != {b.dtype}{tuple(b.shape)}"
        if a.is_floating_point() or a.is_complex():
            same = torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = torch.equal(a, b)
        return None if same else f"{path}: {_short(a)} != {_short(b)}"
    if type(a) is not type(b):
        return f"{path}: {_short(a)} != {_short(b)}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} != {list(b)}"
        for key in a:
            found = diff(a[key], b[key], f"{path}[{key!r}]", rtol, atol)
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = diff(x, y, f"{path}[{i}]" if not isinstance(x, str) else path, rtol, atol)
            if found:
                return found
        return None
    if isinstance(a, float) and a != a and b != b:
        return None
    return None if a == b else f"{path}: {_short(a)} != {_short(b)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."
