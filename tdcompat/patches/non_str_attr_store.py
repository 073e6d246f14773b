"""An attribute store recorded under a name that is not a ``str`` crashes the compile (torch 2.7 on).

Symptom: ``o.__dict__[1] = v`` (``vars(o)[2.5] = v``, a ``str`` subclass key, ...) in compiled code:
``InternalTorchDynamoError: TypeError: name tuples must contain only strings`` (2.7-2.11, without
``fullgraph``), ``AssertionError`` (2.12-2.13, also with it), ``InternalTorchDynamoError: TypeError:
argument of type 'int' is not iterable`` for an object passed in and ``AssertionError: Cannot construct
`ConstantVariable``` for a ``str`` subclass key (2.14-2.15): the user's program stops. CPython's
instance dict takes any hashable key through the mapping API. Measured on 2.5.1-2.15.0 (2.5-2.6 break
cleanly: ``__setitem__`` on ``o.__dict__`` is not traced there).

Root cause: Dynamo records a write into an instance dict as an attribute store
(``SideEffects.store_attr``, torch/_dynamo/side_effects.py), which names the attribute in a source
(``AttrSource(obj, name)``: ``"." in name`` fails on an ``int``) and is replayed after the graph as
``STORE_ATTR name`` (a non-str name cannot be in ``co_names``) or, from 2.13, for an instance-dict
write on a user object, by ``object_setattr_ignore_descriptor(obj, ConstantVariable(name), v)``
(``ConstantVariable`` refuses a ``str`` subclass, and on 2.13 a tuple). 2.12-2.13's
``SideEffectsProxyDict.__setitem__`` asserts a ``str`` key before recording.

The fix accepts nothing: a store whose name is not exactly a ``str`` graph-breaks at the store (before
anything is recorded), except where the replay writes it as CPython would: before 2.12 a write
``instance-dict-writes`` noted and replays itself as a ``__dict__`` write (a plain constant key on a plain
user object made in the frame, :func:`tdcompat.instance_dict.item_key`), or an instance-dict store,
2.13+, on a plain user object made in the frame, with a constant key the replay loads: 2.14's own path,
``instance_dict.replayable_non_str_key``; on 2.13 ``dunder-dict-non-str-key`` records those). Eager then
runs the write.
"""

from __future__ import annotations

from ..dynamo_api import graph_break
from ..instance_dict import dict_written, proxy_asserts_str_key, replayable_non_str_key
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate

NAME = "non-str-attr-store"


@fail_safe(NAME)
def _store_attr(wrapped, instance, args, kwargs):
    """``SideEffects.store_attr(item, name, value, [mutation_kind])`` with a name that is not a ``str``
    (the gate sends no other)."""
    item = args[0] if args else kwargs.get("item")
    name = args[1] if len(args) > 1 else kwargs.get("name")
    kind = args[3] if len(args) > 3 else kwargs.get("mutation_kind")
    if type(name) is str or item is None:
        return DEFER
    if getattr(kind, "name", None) == "INSTANCE_DICT" and replayable_non_str_key(item, name):
        return DEFER
    value = args[2] if len(args) > 2 else kwargs.get("value")
    if dict_written(item, name, value):
        return DEFER  # instance-dict-writes replays it as a __dict__ write (before 2.12)
    graph_break("attribute store under a non-str name", f"{item}.__dict__[{name!r}]",
                "Dynamo records an instance-dict write as an attribute store, whose replay needs a str name")


@gate(_store_attr)
def _store_attr_gate(original, handle):
    """What is installed on ``SideEffects.store_attr``: a store under a ``str`` name (every attribute
    store Python itself can make) goes straight to Dynamo after one type test."""

    def store_attr(self, *args, **kwargs):  # any call: 2.13 added mutation_kind=
        if len(args) > 1 and type(args[1]) is str:
            return original(self, *args, **kwargs)
        return handle(self, *args, **kwargs)

    return store_attr


@fail_safe(NAME)
def _proxy_write(wrapped, instance, args, kwargs):
    """``SideEffectsProxyDict.__setitem__(key, value)`` / ``__delitem__(key)`` (2.12-2.13, which assert a
    ``str`` key): a key that is not a ``str`` graph-breaks unless ``dunder-dict-non-str-key`` records it."""
    if not args or kwargs:
        return DEFER
    try:
        name = instance._maybe_unwrap_key(args[0])
    except NotImplementedError:  # no value at trace time (a symbolic int): as_python_constant raised
        graph_break("__dict__ write", f"{instance.item}.__dict__[{args[0]}]", "a key that is not a constant")
    if type(name) is str or replayable_non_str_key(instance.item, name):
        return DEFER
    graph_break("__dict__ write", f"{instance.item}.__dict__[{name!r}]",
                "a key that is not a str: Dynamo asserts a str key here")


def _has_proxy() -> bool:
    """only where ``SideEffectsProxyDict.__setitem__`` asserts a ``str`` key (2.12-2.13)"""
    return proxy_asserts_str_key()


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`o.__dict__[1] = v` (a key that is not a `str`, or a `str` subclass): **the compile crashes** "
         "(`name tuples must contain only strings`, `AssertionError`, `argument of type 'int' is not "
         "iterable`), without `fullgraph` too (tdcompat: a graph break, where eager writes it)",
         "2.7–2.15",
         "(`>=2.7`)"),
    ),
    fixes="`o.__dict__[1] = v` (a non-str key) crashes the compile (TypeError / AssertionError), also "
    "without fullgraph (torch 2.7-2.15)",
    upstream="torch/_dynamo/side_effects.py: SideEffects.store_attr; torch/_dynamo/variables/dicts.py: "
    "SideEffectsProxyDict.__setitem__/__delitem__ (2.12-2.13)",
    mirrors="none upstream for inputs and str subclasses; 2.14 records other constant keys of an object made "
    "in the frame (upstream test_dicts.py DunderDictVariableTests::test_dunder_dict_non_str_key_*)",
    torch=">=2.7",
    targets=(
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", _store_attr_gate,
               params=("item", "name", "value")),
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__setitem__", _proxy_write,
               params=("key", "value"), when=_has_proxy),
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__delitem__", _proxy_write,
               params=("key",), when=_has_proxy),
    ),
    summary="a store under a non-str attribute name graph-breaks where Dynamo's replay cannot write it",
    proven_by="tests/test_dunder_dict_non_str_key.py::test_without_the_patch_the_compile_crashes",
    history=(
        ("2.5-2.6", "not this gap: a clean graph break (`__setitem__` on `o.__dict__` is not traced; tdcompat's "
         "`instance-dict-writes` takes str keys only)"),
        ("2.7-2.11", "recorded as an attribute store, replayed as `STORE_ATTR`: `InternalTorchDynamoError: "
         "TypeError: name tuples must contain only strings` (without fullgraph; with it a later break)"),
        ("2.12-2.13", "`SideEffectsProxyDict.__setitem__` asserts a str key: `AssertionError`, also without "
         "fullgraph"),
        ("2.14-2.15", "recorded for an object made in the frame; an object passed in crashes (`AttrSource`), "
         "a `str` subclass key crashes in the replay (`ConstantVariable`)"),
    ),
)
