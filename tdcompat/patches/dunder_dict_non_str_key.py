"""``o.__dict__[1] = v`` (a key that is not a ``str``) of an object made in the frame, as 2.15 (torch 2.13-2.14).

Symptom: ``f.__dict__[1] = 1``, ``d = vars(f); d[2.5] = v``, ``f.__dict__.update({(3, 4): v})`` in compiled
code: ``AssertionError`` (2.12: bare; 2.13: ``Expected str key, got <class 'int'>``), also without
``fullgraph``: the user's program stops. CPython's instance dict takes any hashable key through the
mapping API (only ``setattr`` wants a ``str``). Measured on 2.12.1 and 2.13.0 (upstream's
``DunderDictVariableTests::test_dunder_dict_non_str_key_setitem`` / ``_roundtrip``); 2.14 takes them.

Root cause: ``SideEffectsProxyDict.__setitem__`` (torch/_dynamo/variables/dicts.py, the storage of
``DunderDictVariable``) asserts a ``str`` key, because every entry is recorded as an attribute store
(``SideEffects.store_attr``), which also names the attribute in a source (``AttrSource(obj, name)``, which
fails on a non-str name) and, on 2.12, is replayed as ``STORE_ATTR``.

What the handlers accept (``__setitem__`` and ``__delitem__`` of the proxy), where the key is not a
``str`` (``instance_dict.replayable_non_str_key``): a plain user object made in the frame (exact
``UserDefinedObjectVariable``, no source: no ``AttrSource`` is built, nothing to guard) and a key whose
hash and ``==`` are pure functions of its value (``int``, ``bool``, non-NaN ``float``, ``bytes``,
``None``; not a tuple, which 2.13's replay cannot load as ``ConstantVariable``). Recorded as 2.14 records
it, an instance-dict store (``SideEffects.store_instance_dict_attr``), replayed by
``object_setattr_ignore_descriptor``/``object_delattr_ignore_descriptor``: a plain ``d[k] = v`` /
``del d[k]`` on the real ``__dict__``. The record is a Python dict keyed like CPython's instance dict, so
``1``/``True``/``1.0`` share one entry as there, and the replay writes the same keys in the same order.
Everything else defers (``str`` keys to Dynamo's own path; other keys, objects passed in:
``non-str-attr-store`` graph-breaks them).

Once such a key is recorded, 2.13's ``getattr(o, 1)`` / ``hasattr(o, 1)`` find it in the record and answer
the item / ``True`` (measured: a wrong result this patch would introduce). CPython's ``getattr``/``hasattr``
raise ``TypeError`` for any name that is not a ``str``, whatever the object: so do the handlers on
``GetAttrBuiltinVariable._call_getattr`` and ``HasAttrBuiltinVariable.call_function`` for a constant
non-str name (2.15 does the same); every other call defers. 2.14 records such keys natively and has the same
wrong answer (measured on 2.14.1: ``getattr(o, (3, 4))`` is the item, ``hasattr`` ``True``; a name not in the
dict, ``getattr(o, 2.5)``, crashes the compile with ``InternalTorchDynamoError: TypeError``): there only the
``getattr``/``hasattr`` handlers are installed (``when=``).
"""

from __future__ import annotations

from ..instance_dict import replayable_non_str_key
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dunder-dict-non-str-key"


def _asserts_str_keys() -> bool:
    """2.13's ``SideEffectsProxyDict.__setitem__`` asserts a ``str`` key (2.14 records any constant key itself:
    the same method, its body changed, so the release decides)."""
    from ..dynamo_api import torch_release

    return torch_release() < (2, 14)


_NO_VALUE = object()


def _key(proxy, key_vt):
    try:
        return proxy._maybe_unwrap_key(key_vt)
    except NotImplementedError:  # no value at trace time: non-str-attr-store breaks there
        return _NO_VALUE


@fail_safe(NAME)
def _setitem(wrapped, instance, args, kwargs):
    """``SideEffectsProxyDict.__setitem__(key, value)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    name = _key(instance, args[0])
    if type(name) is str or name is _NO_VALUE or not replayable_non_str_key(instance.item, name):
        return DEFER
    effects_begin()
    instance.side_effects.store_instance_dict_attr(instance.item, name, args[1])
    return None


@fail_safe(NAME)
def _delitem(wrapped, instance, args, kwargs):
    """``SideEffectsProxyDict.__delitem__(key)``."""
    if len(args) != 1 or kwargs:
        return DEFER
    name = _key(instance, args[0])
    if type(name) is str or name is _NO_VALUE or not replayable_non_str_key(instance.item, name):
        return DEFER
    from torch._dynamo.variables import DeletedVariable

    effects_begin()
    instance.side_effects.store_instance_dict_attr(instance.item, name, DeletedVariable())
    return None


def _refuse_non_str_name(tx, obj, name_var, builtin: str) -> None:
    try:
        if not name_var.is_python_constant():
            return
        name = name_var.as_python_constant()
    except Exception:  # noqa: BLE001 - not a constant after all: Dynamo's own path
        return
    if isinstance(name, str):
        return
    from ..dynamo_api import raise_observed

    effects_begin()
    raise_observed(TypeError, tx, f"{builtin}({obj}, {name!r})",
                   f"attribute name must be string, not '{type(name).__name__}'")


@fail_safe(NAME)
def _getattr(wrapped, instance, args, kwargs):
    """``GetAttrBuiltinVariable._call_getattr(tx, args, kwargs)``: see :func:`_refuse_non_str_name`."""
    if len(args) != 3 or kwargs or len(args[1]) not in (2, 3):
        return DEFER
    tx, call_args, _ = args
    _refuse_non_str_name(tx, call_args[0], call_args[1], "getattr")
    return DEFER


@fail_safe(NAME)
def _hasattr(wrapped, instance, args, kwargs):
    """``HasAttrBuiltinVariable.call_function(tx, args, kwargs)``: see :func:`_refuse_non_str_name`."""
    if len(args) != 3 or kwargs or len(args[1]) != 2 or args[2]:
        return DEFER
    tx, call_args, _ = args
    _refuse_non_str_name(tx, call_args[0], call_args[1], "hasattr")
    return DEFER


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`o.__dict__[1] = v` / `vars(o)[2.5] = v` (a key that is not a `str`): **the compile crashes** "
         "(`AssertionError`), also without `fullgraph`",
         "2.13",
         "(`>=2.13,<2.15`: an object made in the frame; elsewhere `non-str-attr-store` breaks)"),
        ("`getattr(o, 1)` / `hasattr(o, (3, 4))` after `o.__dict__[1] = v`: the item / `True` instead of "
         "`TypeError` (**silently wrong**); `getattr(o, 2.5)`: `InternalTorchDynamoError: TypeError`",
         "2.14", "(`>=2.13,<2.15`)"),
    ),
    fixes="`o.__dict__[1] = v` (a non-str key) of an object made in the frame crashes the compile with "
    "AssertionError, also without fullgraph (torch 2.13)",
    upstream="torch/_dynamo/variables/dicts.py: SideEffectsProxyDict.__setitem__, SideEffectsProxyDict.__delitem__",
    mirrors="torch 2.14: SideEffectsProxyDict.__setitem__ records any constant key as an instance-dict store "
    "(upstream test_dicts.py DunderDictVariableTests::test_dunder_dict_non_str_key_setitem/_roundtrip)",
    torch=">=2.13,<2.15",
    fixed_upstream="2.15: getattr/hasattr of a non-str name raise TypeError (2.14: non-str keys recorded as "
    "instance-dict stores)",
    targets=(
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__setitem__", _setitem,
               params=("key", "value"), when=_asserts_str_keys),
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__delitem__", _delitem,
               params=("key",), when=_asserts_str_keys),
        # getattr(o, 1) / hasattr(o, 1): TypeError, as CPython (else 2.13 answers from the record above).
        Target("torch._dynamo.variables.builtin", "GetAttrBuiltinVariable", "_call_getattr", _getattr,
               params=("tx", "args", "kwargs")),
        Target("torch._dynamo.variables.builtin", "HasAttrBuiltinVariable", "call_function", _hasattr,
               params=("tx", "args", "kwargs")),
    ),
    requires=(
        "torch._dynamo.variables.dicts:SideEffectsProxyDict._maybe_unwrap_key",
        "torch._dynamo.side_effects:SideEffects.store_instance_dict_attr",
        "torch._dynamo.variables:UserDefinedObjectVariable",
        "torch._dynamo.variables:DeletedVariable",
    ),
    summary="a non-str key written into o.__dict__ of an object made in the frame is recorded as 2.14 records it",
    history=(
        ("2.5-2.12", "not this gap: no instance-dict store kind whose replay writes a non-str key "
         "(`non-str-attr-store` turns the crash into a graph break there)"),
        ("2.13", "`AssertionError: Expected str key, got <class 'int'>`, also without fullgraph"),
        ("2.14", "recorded; `getattr`/`hasattr` of such a key answer from the record (no `TypeError`)"),
        ("2.15+", "right"),
    ),
)
