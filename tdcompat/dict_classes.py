"""What a ``dict`` subclass changes of its builtin base, read statically (no user code runs).

A patch that computes a merge or a copy of a ``dict``/``OrderedDict``/``defaultdict`` subclass the way
CPython's C code does is sound only for a class whose instances run that C code alone: none of the
methods the C code calls is the class's own, its metaclass is ``type`` (so ``type(o)()`` is the builtin's
constructor), and the instance itself shadows none of them. Shared by ``dict-subclass-merge`` and
``dict-subclass-copy``.
"""

from __future__ import annotations

import collections
from typing import Iterable, Optional

from .dynamo_api import static_lookup

#: The descriptor CPython gives a class whose instances have a ``__dict__``.
_GETSET = type(vars(type)["__dict__"])


#: The route of a class call that is a strict ``OrderedDict`` subclass (any metaclass).
ORDERED_SUBCLASS = "OrderedDict subclass"


def class_call_gate(original, handle, route):
    """The gate on ``UserDefinedClassVariable.call_function(tx, args, kwargs)`` (every class called in the
    frame), for :func:`tdcompat.wrappers.routed_gate`: the patches that build or refuse a mapping class call
    share it, so a call of any other class pays one frame and a few type tests for all of them. ``route``
    holds ``collections.OrderedDict`` / ``collections.defaultdict`` (the class itself) or
    :data:`ORDERED_SUBCLASS`; ``issubclass`` runs ``type``'s checks, no user code."""
    ordered, default = collections.OrderedDict, collections.defaultdict

    def call_function(self, *args, **kwargs):
        try:
            value = self.value
            if value is ordered or value is default:
                kind = value
            elif issubclass(type(value), type) and issubclass(value, ordered):
                kind = ORDERED_SUBCLASS
            else:
                kind = None
        except Exception:  # noqa: BLE001 - let the handlers meet it under their fail-safe
            return handle(self, *args, **kwargs)
        if kind not in route:
            return original(self, *args, **kwargs)
        return handle(self, *args, **kwargs)

    return call_function


def builtin_base(cls: type) -> type:
    """The builtin mapping ``cls`` derives from: ``OrderedDict``, ``defaultdict`` or ``dict``."""
    for base in (collections.OrderedDict, collections.defaultdict):
        if issubclass(cls, base):
            return base
    return dict


def overrides(cls: type, base: type, name: str) -> bool:
    """Does ``cls`` define ``name`` other than ``base`` does (on its MRO, read without running anything)?"""
    return static_lookup(cls, name) is not static_lookup(base, name)


def overrides_any(cls: type, base: type, names: Iterable[str]) -> bool:
    """Does ``cls`` define any of ``names`` other than ``base``, or have another metaclass than ``type``
    (whose ``__call__`` would run on ``type(o)()``)?"""
    return type(cls) is not type or any(overrides(cls, base, name) for name in names)


def instance_attribute(value, name: str) -> bool:
    """Does the instance's own ``__dict__`` hold ``name`` (shadowing the class's method of that name)?"""
    if type(static_lookup(type(value), "__dict__")) is not _GETSET:
        return False  # no instance dict (slots, or None), or a class's own __dict__ we do not run
    try:
        own = object.__getattribute__(value, "__dict__")
    except Exception:  # noqa: BLE001 - no instance dict after all: nothing shadows the class
        return False
    return isinstance(own, dict) and name in own


def python_type(tracker) -> Optional[type]:
    """The tracker's Python type, or None (no Python type: not a dict)."""
    try:
        kind = tracker.python_type()
    except Exception:  # noqa: BLE001
        return None
    return kind if isinstance(kind, type) else None
