"""Iterating ``obj.__dict__`` in CPython's order and with CPython's errors (torch 2.12 on).

Root cause: ``SideEffectsProxyDict.__iter__`` (torch/_dynamo/variables/dicts.py,
the storage of ``DunderDictVariable`` from pytorch/pytorch#174570) yields the
keys stored in the frame first and the object's own keys after them. CPython
keeps insertion order: the keys the object had, then the ones added. So
``list(o.__dict__)``, ``list(vars(o))``, ``dict(vars(o))`` and anything that
iterates them after ``o.z = 1`` come out in another order than eager
(silently wrong, measured on 2.12.1, 2.13.0 and 2.15.0, plain objects and
modules). Found later by the fuzzer's whole-dict ops (2026-11-24), also silently wrong
natively: a key added while iterating does not raise ``RuntimeError`` (the proxy's
iterator is a copy; 2.12 iterates a copy of the keys, ``ListIteratorVariable``), and a
key deleted and stored again keeps its old place (Dynamo's record keeps it).

The fix yields the object's keys that are still there in their own order, then the added
keys in the order they were first stored (an object made in the frame whose placeholder
keys the frame stored too: the order of those stores, as eager may set attributes before
``super().__init__()``); between two steps a change of size raises ``RuntimeError`` as
CPython does, any other change of keys graph-breaks. On 2.12 ``for k in o.__dict__`` and
the views' ``__iter__`` return an iterator that does the same (and guards an input's keys
and their order, as Dynamo's own ``__iter__`` does). A key deleted and stored again in the
frame, or (2.12, which records a slot store like a dict write) a stored slot name: a graph
break.

Consumers that take a copy before user code runs between the steps (issue 26 follow-up, measured
2026-11-24): on 2.12 ``o.__dict__.items()`` answers ``__iter__`` in ``DictItemsVariable``'s own
``call_method`` (a copy: ``for k, v in o.__dict__.items(): o.new = 1`` raised nothing), and
``map(f, o.__dict__)``/``filter(...)`` unpack a copy: they get the live iterator (which answers
``has_unpack_var_sequence`` False so that they step it). ``reversed(o.__dict__)`` (2.12+, a reversed
copy) gets the live iterator over the reversed keys (of ``.values()``/``.items()``: a graph break), and,
where Dynamo takes it (2.15), ``min``/``max`` with a ``key`` (the key runs after the copy) graph-breaks
where the key function changed the object's attributes (else Dynamo's answer is CPython's).

Guards (issue 26, measured 2026-11-24): Dynamo's consumers that read the tracker's keys directly
(``dict_vt.items.keys()``: 2.14+ ``set()``, ``frozenset()``, set operators, ``dict.fromkeys``; 2.13+
``[*o.__dict__]``, ``o.__dict__.copy()``) install no guard, so code compiled for an input answered for a
later input with other keys (silently wrong natively on 2.13.0 and 2.15.0). Listing the keys of an
object passed in now guards its real ``__dict__``'s keys and their order (``DICT_KEYS_MATCH``), which is
what the listed keys were computed from.

Deleted and stored again on an object passed in (2.14+): Dynamo drops the recorded deletion in
``SideEffects.store_instance_dict_attr`` and the replay then only sets the key, which keeps its old place
(``del o.a; o.a = v``: silently wrong natively on 2.15.0; the fuzzer's CI program #107, where a graph break
at a later ``list(o.__dict__)`` replayed the same record). ``instance_dict.readd_instance_dict_tracker()`` is
declared there: the shared re-store rules (a name the input lacked: moved last under a guard; its last
key with nothing added before: kept; any other: a graph break).
"""

from __future__ import annotations

import functools

from ..dynamo_api import graph_break, guard_dict_keys_in_order, made_in_frame, new_object_kwargs, raise_observed
from ..instance_dict import (
    deleted_attr_names,
    deletion_tracker,
    pending_stores,
    readd_instance_dict_tracker,
    readd_tracker,
)
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dunder-dict-order"


def _keys_now(instance):
    """The object's keys that are still there in their own order, then the added ones in the
    order they were first stored. An object made in the frame whose own keys (Dynamo's
    placeholder: for a module, ``nn.Module.__init__``'s bookkeeping) were all stored by the
    frame too has them in the order of those stores: eager may have set other attributes
    before ``super().__init__()``."""
    from torch._dynamo.variables import DeletedVariable

    own = instance.item_dict
    table = instance.side_effects_table()
    if getattr(instance.item, "source", None) is None and own.keys() <= table.keys():
        return [k for k, v in table.items() if not isinstance(v, DeletedVariable)]
    keys = [k for k in own if not isinstance(table.get(k), DeletedVariable)]
    return keys + [k for k, v in table.items() if k not in own and not isinstance(v, DeletedVariable)]


def _refuse_slots(proxy, keys) -> None:
    """2.12 records a slot store like an instance-dict write (2.13 tells them apart): a stored
    name that is a slot of the class may not be in ``__dict__`` at all, so listing it is a guess."""
    import inspect
    import types

    cls = type(getattr(proxy.item, "value", None))
    own = proxy.item_dict
    for key in keys:
        if key not in own and isinstance(key, str) and isinstance(inspect.getattr_static(cls, key, None),
                                                                  types.MemberDescriptorType):
            graph_break("__dict__ iteration", f"{proxy.item}.__dict__",
                        f"{key!r} is a slot of {cls.__name__}: a store to it and a write to __dict__ look alike here")


@functools.lru_cache(maxsize=None)
def _function_slots() -> frozenset:
    """The names a function stores through its type's data descriptors (``__name__``, ``__qualname__``,
    ``__doc__``, ``__module__``, ``__annotations__``, ``__defaults__``, ...), never in its ``__dict__``."""
    import types

    return frozenset(k for k, v in vars(types.FunctionType).items() if hasattr(type(v), "__set__"))


def _is_function(item) -> bool:
    import types

    try:
        return item.python_type() is types.FunctionType
    except Exception:  # noqa: BLE001 - a tracker with no type: not a function
        return False


def _refuse_function_slots(proxy, keys) -> None:
    """A function's record lists ``f.__name__ = v`` (through the descriptor, not into ``__dict__``) and
    ``f.__dict__["__name__"] = v`` (a key) alike (both ``INSTANCE_DICT`` on 2.13+), so a listed key that is a
    function slot is a guess: ``functools.wraps`` put ``__name__``, ``__qualname__``, ``__doc__``,
    ``__module__``, ``__annotations__`` into ``vars(wrapper)`` (silently wrong natively, 2.12.1-2.15.0).
    Listing only: Dynamo itself reads a function's slots through the same proxy by key (``fn_dict.contains``
    in ``var_getattr``, e.g. for ``__annotations__`` while inlining ``nn.Module.__setattr__``), so a key read
    cannot be refused here without breaking Dynamo's own reads (``'__name__' in f.__dict__`` stays wrong
    natively; a fresh fuzz seed on 2.13.0 found the key-read refusal breaking ``m.sub = nn.ReLU()``)."""
    slots = _function_slots().intersection(keys)
    if slots and _is_function(proxy.item):
        graph_break("__dict__ iteration", f"{proxy.item}.__dict__",
                    f"{sorted(slots)} stored on a function: through its type's descriptors or into its __dict__, "
                    "Dynamo's record does not tell")


def _listable_keys(proxy):
    """:func:`_keys_now`, or a graph break where that order is a guess: a stored slot name (2.12),
    a key deleted and stored again whose place Dynamo's record does not show, a function slot."""
    keys = _keys_now(proxy)
    _refuse_slots(proxy, keys)
    _refuse_function_slots(proxy, keys)
    if set(keys) & deleted_attr_names(proxy.item):
        graph_break("__dict__ iteration", f"{proxy.item}.__dict__",
                    "a key deleted and stored again in the frame moves to the end in CPython, "
                    "but keeps its place in Dynamo's record")
    return keys


def _checked(instance, keys):
    """Yield ``keys`` as CPython's dict iterator would: a change of size between two steps
    raises ``RuntimeError`` (Dynamo's dict iterators turn it into the user's exception); other
    changes of the key set graph-break (CPython's answer depends on its table layout)."""
    from torch._dynamo.variables import ConstantVariable
    from torch._dynamo.variables.dicts import HashableTracker

    for i in range(len(keys) + 1):
        if i:
            now = _keys_now(instance)
            if len(now) != len(keys):
                raise RuntimeError("dictionary changed size during iteration")
            if now != keys:
                graph_break("__dict__ iteration", f"{instance.item}.__dict__",
                            "its keys changed during the iteration")
        if i == len(keys):
            return
        yield HashableTracker(ConstantVariable.create(keys[i]))


def _guard_input_keys(proxy) -> None:
    """For an object passed in, guard its real ``__dict__``'s keys and their order: what the
    listed keys were computed from. Dynamo's consumers that read ``dict_vt.items.keys()`` directly
    (2.14+ ``set()``/``frozenset()``/set operators/``dict.fromkeys``, 2.13+ ``[*o.__dict__]``) guard
    nothing, so code compiled for an input without ``b`` answered ``set(o.__dict__)`` without it for
    one that has it (silently wrong natively, measured on 2.13.0 and 2.15.0; the fuzzer's
    ``set(a0.__dict__)``)."""
    source = getattr(proxy.item, "source", None)
    if source is None or made_in_frame(proxy.item):
        return  # (made in the frame: no guard; its source, if any, is the replay's TempLocalSource)
    from torch._dynamo.source import AttrSource
    from torch._dynamo.symbolic_convert import InstructionTranslator

    tx = InstructionTranslator.current_tx()
    if tx is None:
        return
    guard_dict_keys_in_order(tx, AttrSource(source, "__dict__"))


@fail_safe(NAME)
def _iter(wrapped, instance, args, kwargs):
    """``SideEffectsProxyDict.__iter__()``."""
    if args or kwargs:
        return DEFER
    own = getattr(instance, "item_dict", None)
    if not isinstance(own, dict):
        return DEFER
    keys = _listable_keys(instance)
    effects_begin()
    _guard_input_keys(instance)
    return _checked(instance, keys)


@functools.lru_cache(maxsize=None)
def _live_iterator_type():
    """2.12's ``for k in o.__dict__`` / ``.keys()``/``.values()``/``.items()`` iterate a copy
    (``ListIteratorVariable``; 2.13 iterates the proxy itself, ``DictViewIterator``): this
    iterator holds the keys it started with and reads each entry when it is reached."""
    from torch._dynamo.variables import ConstantVariable, TupleVariable
    from torch._dynamo.variables.lists import ListIteratorVariable

    class LiveDunderDictIterator(ListIteratorVariable):
        _nonvar_fields = {"kind", "keys", *ListIteratorVariable._nonvar_fields}

        def __init__(self, items, proxy=None, kind="keys", keys=(), **kwargs):
            super().__init__(items, **kwargs)
            self.proxy = proxy
            self.kind = kind
            self.keys = tuple(keys)

        def _check(self, tx):
            now = _keys_now(self.proxy)
            if len(now) != len(self.keys):
                raise_observed(RuntimeError, tx, f"{self.proxy.item}.__dict__ changed size during iteration")
            if tuple(now) != self.keys:
                graph_break("__dict__ iteration", f"{self.proxy.item}.__dict__",
                            "its keys changed during the iteration")

        def _entry(self, key_vt):
            if self.kind == "keys":
                return key_vt
            value = self.proxy[key_vt.as_python_constant()]
            return value if self.kind == "values" else TupleVariable([key_vt, value])

        def has_unpack_var_sequence(self, tx) -> bool:
            # False: map()/filter()/zip() step it live instead of taking a copy at once (a key
            # added by map's function raised no RuntimeError); list()/tuple() force-unpack it
            return False

        def next_variable(self, tx):
            self._check(tx)
            return self._entry(super().next_variable(tx))

        def unpack_var_sequence(self, tx):
            self._check(tx)
            return [self._entry(k) for k in super().unpack_var_sequence(tx)]

        def force_unpack_var_sequence(self, tx):
            self._check(tx)
            return [self._entry(k) for k in super().force_unpack_var_sequence(tx)]

        def as_python_constant(self):
            raise NotImplementedError

        def reconstruct(self, codegen):
            graph_break("__dict__ iteration", f"iter({self.proxy.item}.__dict__)",
                        "an iterator over an instance dict cannot outlive the graph (it would be a copy)")

    def make(proxy, kind, reverse=False):
        keys = _listable_keys(proxy)
        order = keys[::-1] if reverse else keys
        return LiveDunderDictIterator([ConstantVariable.create(k) for k in order], proxy=proxy, kind=kind,
                                      keys=keys, **new_object_kwargs())

    return make


def _copies_when_iterating() -> bool:
    """only where Dynamo iterates a dict tracker as a copy (2.12; 2.13 added ``DictViewIterator``)"""
    from torch._dynamo.variables import iter as iter_module

    return not hasattr(iter_module, "DictViewIterator")


def _proxy_of(dict_vt):
    from torch._dynamo.variables.dicts import DunderDictVariable, SideEffectsProxyDict

    if type(dict_vt) is DunderDictVariable and isinstance(dict_vt.items, SideEffectsProxyDict):
        return dict_vt.items
    return None


def _guard_keys(tx, dict_vt) -> None:
    """What Dynamo's own ``__iter__`` guards: the keys of an object passed in, and their order."""
    if dict_vt.source is not None:
        guard_dict_keys_in_order(tx, dict_vt.source)


def _iter_gate(wrapped, instance, args, kwargs):
    """What is installed on ``DunderDictVariable.call_method`` and ``DictViewVariable.call_method``
    (2.12): anything but ``__iter__`` and ``copy`` goes straight to Dynamo after two comparisons
    (``_copy_call`` defers on a view: only ``o.__dict__`` itself is its pattern)."""
    try:
        name = args[1]
        other = name != "__iter__" and name != "copy"
    except Exception:  # noqa: BLE001
        name, other = None, False
    if other:
        return wrapped(*args, **kwargs)
    if name == "copy":
        return _copy_call(wrapped, instance, args, kwargs)
    return _iter_call(wrapped, instance, args, kwargs)


@fail_safe(NAME)
def _iter_call(wrapped, instance, args, kwargs):
    """``call_method(tx, "__iter__", [], {})`` on ``o.__dict__`` (``for k in o.__dict__``) or on
    one of its views (``o.__dict__.values()``...)."""
    if len(args) != 4 or kwargs or args[1] != "__iter__" or args[2] or args[3]:
        return DEFER
    dict_vt, kind = getattr(instance, "dv_dict", instance), getattr(instance, "kv", "keys")
    proxy = _proxy_of(dict_vt)
    if proxy is None or kind not in ("keys", "values", "items"):
        return DEFER
    effects_begin()
    _guard_keys(args[0], dict_vt)
    return _live_iterator_type()(proxy, kind)


@fail_safe(NAME)
def _copy_call(wrapped, instance, args, kwargs):
    """``DunderDictVariable.call_method(tx, "copy", [], {})`` (2.12): Dynamo calls ``self.items.copy()``
    on its ``SideEffectsProxyDict``, which has none: ``InternalTorchDynamoError`` also without fullgraph.
    As 2.13 does: a new dict of the entries now, iterated with this patch's ``__iter__`` (CPython's
    order, an input's keys guarded). Sound for an exact ``dict`` that the frame did not replace, for
    which ``copy`` is ``dict(d)`` (same keys in the same order, same values, no user code); a dict
    subclass may have its own ``copy``: deferred."""
    if len(args) != 4 or kwargs or args[1] != "copy" or args[2] or args[3]:
        return DEFER
    from torch._dynamo.variables import ConstDictVariable
    from torch._dynamo.variables.dicts import SideEffectsProxyDict

    proxy = _proxy_of(instance)
    if proxy is None or "__dict__" in pending_stores(args[0].output.side_effects, proxy.item):
        return DEFER  # not an instance dict, or the frame replaced it
    if type(SideEffectsProxyDict.get_example_value_dict(proxy.item)) is not dict:
        return DEFER  # a dict subclass: its own copy() may run
    effects_begin()
    return ConstDictVariable(dict(proxy), **new_object_kwargs())


def _proxy_and_kind(vt):
    """(proxy, "keys"/"values"/"items") for ``o.__dict__`` or one of its views, else (None, None)."""
    from torch._dynamo.variables.dicts import DictViewVariable

    proxy = _proxy_of(vt)
    if proxy is not None:
        return proxy, "keys"
    if isinstance(vt, DictViewVariable):
        proxy = _proxy_of(getattr(vt, "dv_dict", None))
        if proxy is not None and vt.kv in ("keys", "values", "items"):
            return proxy, vt.kv
    return None, None


@fail_safe(NAME)
def _reversed(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_reversed(tx, obj)``: Dynamo reverses a copy (``unpack_var_sequence``), so
    a key the consumer adds raised no ``RuntimeError`` (CPython's reverse dict iterators raise it;
    silently wrong on 2.12.1 and 2.13.0, measured). ``o.__dict__`` and ``.keys()`` get the live iterator
    over the keys in reverse order (``.values()``/``.items()``: a graph break); each step checks the
    keys as the forward one does, the input's keys and their order guarded. It was a graph break,
    where ``list(reversed(o.__dict__))`` compiled without tdcompat (fresh-seed program
    284352047053990, 2.15.0)."""
    if kwargs or len(args) != 2:
        return DEFER
    proxy, kind = _proxy_and_kind(args[1])
    if proxy is None:
        return DEFER
    if kind != "keys":  # (list() of the live iterator reads its items as keys: values/items stay a break)
        graph_break("__dict__ iteration", f"reversed({proxy.item}.__dict__.{kind}())",
                    "tdcompat iterates an instance dict's values and items live forwards only")
    effects_begin()
    _guard_input_keys(proxy)
    return _live_iterator_type()(proxy, kind, reverse=True)


@fail_safe(NAME)
def _map_filter(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_map(tx, fn, *seqs)`` / ``call_filter(tx, fn, seq)`` (2.12): Dynamo takes a
    copy of each sequence it can unpack, so a key ``fn`` (or the loop over the result) adds raised no
    ``RuntimeError`` (measured on 2.12.1). ``o.__dict__`` and its views are handed over as the live
    iterator ``for k in o.__dict__`` gets instead (same guards)."""
    if len(args) < 3:
        return DEFER
    tx = args[0]
    new = list(args)
    found = False
    for i in range(2, len(args)):
        proxy, kind = _proxy_and_kind(args[i])
        if proxy is None:
            continue
        if not found:
            effects_begin()
            found = True
        dict_vt = args[i] if _proxy_of(args[i]) is not None else args[i].dv_dict
        _guard_keys(tx, dict_vt)
        new[i] = _live_iterator_type()(proxy, kind)
    if not found:
        return DEFER
    return wrapped(*new, **kwargs)


@fail_safe(NAME)
def _min_max(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_min``/``call_max(tx, iterable, key=f)`` (2.15 takes ``key`` here; 2.13 does not,
    2.14 not measured): Dynamo unpacks a copy first and calls ``f`` on it afterwards; CPython calls ``f``
    between the steps, so a key ``f`` adds raises ``RuntimeError`` there and a value ``f`` stores is seen
    by a later step of a values/items view (silently wrong on 2.15.0, measured). Dynamo's answer is
    CPython's where ``f`` changed nothing of the instance dict: the handler lets Dynamo compute it and
    compares the object's recorded attribute stores (name -> tracker) before and after; any change
    graph-breaks. Without a ``key`` no user code runs between the steps and Dynamo's answer stands."""
    key = kwargs.get("key")
    if len(args) != 2 or key is None or key.is_constant_none():
        return DEFER
    proxy, kind = _proxy_and_kind(args[1])
    if proxy is None:
        return DEFER
    def stores():  # every recorded store of the object, whatever its kind (name -> tracker)
        return [(k, id(v)) for k, v in pending_stores(proxy.side_effects, proxy.item).items()]

    before = stores()
    effects_begin()
    result = wrapped(*args, **kwargs)
    if stores() != before:
        graph_break("__dict__ iteration", f"min/max({proxy.item}.__dict__, key=...)",
                    "the key function changed the instance dict: CPython calls it between the steps of a "
                    "live iteration, Dynamo after taking a copy")
    return result


def _has_store_instance_dict_attr() -> bool:
    """only where Dynamo has ``SideEffects.store_instance_dict_attr`` (2.13+; 2.14+ drop a recorded deletion there)"""
    from torch._dynamo.side_effects import SideEffects

    return hasattr(SideEffects, "store_instance_dict_attr")


def _min_max_take_key() -> bool:
    """only where ``BuiltinVariable._call_min_max`` takes ``key`` (2.15.0; 2.13 uses a live polyfill)"""
    import inspect

    from torch._dynamo.variables.builtin import BuiltinVariable

    method = getattr(BuiltinVariable, "_call_min_max", None)
    return method is not None and "key" in inspect.signature(method).parameters


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`vars(f)` / `list(f.__dict__)` of a function made in the frame after `functools.wraps` (or '
             '`f.__name__ = ...`) **lists `__name__`, `__qualname__`, `__doc__`, `__module__`** as keys '
             '(tdcompat: a graph break)',
         '2.12–2.15',
         '(`>=2.12`)'),
        ('`list(o.__dict__)` / `list(vars(o))` after `o.z = v` in the same frame **put the new key '
             'first**; a key added while iterating `o.__dict__` **raises no `RuntimeError`**; a key '
             'deleted and set again **keeps its old place**',
         '2.12–2.15',
         '(`>=2.12`)'),
        ('`o.__dict__.copy()` / `vars(o).copy()` **crashes the compile** (`InternalTorchDynamoError: '
             "AttributeError: 'SideEffectsProxyDict' object has no attribute 'copy'`, also without "
             '`fullgraph`)',
         '2.12',
         '(`>=2.12`)'),
    ),
    fixes="`list(obj.__dict__)` / `vars(obj)` iterated after adding an attribute put the new key first; "
    "a key added while iterating raises no RuntimeError; a key deleted and set again keeps its place "
    "(silently wrong, torch 2.12+)",
    upstream="torch/_dynamo/variables/dicts.py: SideEffectsProxyDict.__iter__; (2.12) DunderDictVariable.call_method, "
    "DictViewVariable.call_method; torch/_dynamo/side_effects.py: SideEffects.store_attr (deletions noted)",
    mirrors="CPython dict insertion order; open upstream; SideEffectsProxyDict from pytorch/pytorch#174570",
    torch=">=2.12",
    targets=(
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__iter__", _iter),
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", deletion_tracker(),
               params=("item", "name", "value")),
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", readd_tracker(),
               params=("item", "name", "value")),
        # 2.14+ drop a recorded deletion there before store_attr: the re-store of an input's own key
        # (`del o.a; o.a = v`) is asked there (wrong natively on 2.15.0: the key kept its old place)
        Target("torch._dynamo.side_effects", "SideEffects", "store_instance_dict_attr",
               readd_instance_dict_tracker(), params=("item", "name", "value"),
               when=_has_store_instance_dict_attr),
        # (2.12 also `o.__dict__.copy()`, which crashed the compile: no SideEffectsProxyDict.copy, also
        # without fullgraph; 2.13, the release that added DictViewIterator, answers copy itself)
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "call_method", _iter_gate,
               params=("tx", "name", "args", "kwargs"), when=_copies_when_iterating),
        Target("torch._dynamo.variables.dicts", "DictViewVariable", "call_method", _iter_gate,
               params=("tx", "name", "args", "kwargs"), when=_copies_when_iterating),
        # 2.12's DictItemsVariable answers __iter__ in its own call_method (a copy): `for k, v in
        # o.__dict__.items(): o.new = 1` raised no RuntimeError (measured on 2.12.1)
        Target("torch._dynamo.variables.dicts", "DictItemsVariable", "call_method", _iter_gate,
               params=("tx", "name", "args", "kwargs"), when=_copies_when_iterating),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_map", _map_filter,
               params=("tx",), when=_copies_when_iterating),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_filter", _map_filter,
               params=("tx",), when=_copies_when_iterating),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_reversed", _reversed,
               params=("tx",)),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_min", _min_max,
               params=("tx",), when=_min_max_take_key),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_max", _min_max,
               params=("tx",), when=_min_max_take_key),
    ),
    requires=(
        "torch._dynamo.variables.dicts:SideEffectsProxyDict.side_effects_table",
        "torch._dynamo.variables.dicts:HashableTracker",
        "torch._dynamo.variables:DeletedVariable",
        "torch._dynamo.source:AttrSource",
        "torch._dynamo.symbolic_convert:InstructionTranslator.current_tx",
    ),
    summary="obj.__dict__ iterates in CPython's order and live: the object's keys, then the added ones",
    history=(
        ("2.5-2.11",
         "not this gap: `SideEffectsProxyDict` comes with `DunderDictVariable` in 2.12 (pytorch/pytorch#174570)"),
        ("2.12+",
         "`SideEffectsProxyDict.__iter__` yields the keys stored in the frame first: `list(o.__dict__)`, "
         "`list(vars(o))`, `dict(vars(o))` after `o.z = v` put the new key first (silently wrong; measured on "
         "2.12.1, 2.13.0 and 2.15.0, plain objects and modules). A key added while iterating `o.__dict__` "
         "raises no `RuntimeError`, and a key deleted and set again keeps its old place (silently wrong on "
         "2.12.1-2.15.0; 2.12 iterates a copy of the keys, 2.13+ a copy made by the proxy). Consumers that copy "
         "first raise no `RuntimeError` for a key added meanwhile: `.items()` iteration, `map`, `filter` (2.12.1), "
         "`reversed` (2.12.1, 2.13.0, 2.15.0), `min`/`max` with a `key` (2.15.0). Consumers that read the tracker's "
         "keys directly guard nothing: `set(o.__dict__)`, `frozenset`, set operators, `dict.fromkeys` (2.15.0), "
         "`[*o.__dict__]`, `o.__dict__.copy()` (2.13.0, 2.15.0) answer a later input with other keys with the first "
         "one's (silently wrong). 2.14+ drop a recorded deletion in `store_instance_dict_attr`: `del o.a; o.a = v` "
         "on an input leaves `a` in its old place (silently wrong, 2.15.0). 2.12 only: `o.__dict__.copy()` / "
         "`vars(o).copy()` crash the compile (`InternalTorchDynamoError: AttributeError: 'SideEffectsProxyDict' "
         "object has no attribute 'copy'`, also without fullgraph; 2.13 answers `copy` in "
         "`DunderDictVariable.call_method`). Open upstream"),
    ),
)
