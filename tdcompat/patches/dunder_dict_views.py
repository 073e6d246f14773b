"""Reading the whole ``__dict__`` of a user object: views, ``len``, iteration (torch 2.5-2.11).

Root cause: before 2.12 ``obj.__dict__`` of a user object is ``GetAttrVariable(obj,
"__dict__")`` (torch/_dynamo/variables/misc.py), whose ``call_method`` knows only
single-key reads; ``keys()``, ``values()``, ``items()``, ``len()`` and ``for k in
obj.__dict__`` graph-break (``call_method GetAttrVariable(...) values``; from 2.8
``Unsupported method call``). TorchRL 0.6's value estimators do ``for val in
self.__dict__.values()`` (``vmap_randomness``) on the estimator the loss builds in its
first call (issue 14). 2.12 models the instance dict as a dictionary
(``DunderDictVariable``, pytorch/pytorch#174570, #174941).

The fix answers them in CPython's order: for an object made in the frame, the keys of
Dynamo's placeholder (a module's ``nn.Module.__init__`` bookkeeping, which the traced
``__init__`` stores again in the same order) then the other stored keys in the order of
their first store; for an object passed in, its own keys (guarded with their order:
``DICT_KEYS``/``DICT_KEYS_MATCH`` with the dict in ``guard_on_key_order``) then the keys the
frame added. The views are live, as CPython's are: ``len``, ``in`` and each step of an
iteration read the attributes as they are then; a change of size during an iteration
raises ``RuntimeError`` in the trace (2.6+; a graph break on 2.5), any other change of keys
graph-breaks. A view or iterator that would outlive the graph (returned, or alive at a graph
break) graph-breaks instead of being rebuilt as a copy. Deferred to Dynamo (a graph break): an
instance dict that is not exactly a ``dict`` (a subclass's own ``keys``/``__iter__``/``copy`` would
run in CPython; an input's is guarded ``TYPE_MATCH``), a key deleted and stored again in the
frame (its place is not in Dynamo's record; deletions are noted from ``SideEffects.store_attr``),
a key that is not a ``str`` (but on an object made in the frame a plain constant one that
``instance-dict-writes`` recorded: ``instance_dict.plain_constant_key``),
a stored name that is a data descriptor of the class (a slot or property), a placeholder key the
frame did not store first, a class with its own ``__getattribute__``, objects without an instance
dict. ``set(view)`` is built from the
view's entries at once (``BuiltinVariable.call_set``; no user code runs in between, same guards as
the iteration; 2.8-2.10 raised an observed TypeError there, issue 26; so did ``set(o.__dict__)`` on 2.8-2.11,
now the set of its keys); ``frozenset(view)``, ``frozenset(o.__dict__)`` (the same TypeError) and the
comparisons and set operators of a view (``==``, ``!=``, ``|``, ``&``, ``-``, ``^``, ``isdisjoint``)
graph-break (Dynamo compared the tracker: ``keys() == {...}.keys()`` was False on 2.8-2.10). The view
keeps ``has_unpack_var_sequence`` False so that every loop iterates live. An input module's own
keys are read as dict items (``instance_dict.instance_dict_item``; its attribute reads rebuilt empty hook
``OrderedDict``s as plain dicts in ``dict(m.__dict__.items())``, and through instance-dict-writes'
``m.__dict__[k]`` in ``dict(m.__dict__)``/``MyDict(m.__dict__)``/``{**m.__dict__}`` on 2.8/2.9).
A step of a live iteration inside a generator that Dynamo runs to its end at once (every generator on
2.5/2.6, the ``enumerate`` polyfill and generator expressions included) graph-breaks: there the
generator runs ahead of its consumer, so a key the consumer adds between two steps raised no
``RuntimeError`` (``for i, kv in enumerate(o.__dict__.items()): o.new = 1``, issue 26). That costs
``enumerate(view)``, ``any(... for k in o.__dict__)``, ``sum(...)`` of a generator over a view on
2.5/2.6 (a break, as without tdcompat).
Whole consumers: ``list``, ``tuple``, ``sorted`` (of a view or of ``o.__dict__``/``vars(o)``), ``dict``
(of the items view or of the instance dict itself, keywords passed on), ``[*view]``/``l.extend(view)``
(``ListVariable.call_method("extend")``) and ``o.__dict__.copy()`` get a tuple of the entries read now
(same keys-and-order guards) and run Dynamo's own builtin on it. Sound because CPython takes every
entry before it returns and runs no user code between two entries (``list_extend`` and
``PySequence_Tuple`` step the dict's own iterator; ``sorted`` makes its list before it compares;
``dict()`` inserts ``str`` keys; ``copy`` is ``dict(o.__dict__)``), so nothing can change the dict
in between. ``dict(view)`` of a ``keys()`` or ``values()`` view defers (pairs of 2-character names
would be consumed as pairs). Lazy consumers (``enumerate``, ``zip``, ``map``, generators, loops)
stay live iterations: ``map``, ``filter`` and ``zip`` of the instance dict or a view get the live
iterator at the call, as CPython's ``iter()`` there (Dynamo kept the dict, and rebuilt ``map(f, o.__dict__)``
alive at a graph break before replaying the frame's stores: ``RuntimeError: dictionary changed size
during iteration`` in the user's program, natively on 2.5-2.11).
``sep.join(o.__dict__)`` (``vars(o)``, a keys view) joins the ``str`` keys read now (CPython lists them
first); any other entry graph-breaks where Dynamo crashed (``InternalTorchDynamoError``, 2.5-2.11).
``o.__dict__ == d`` / ``!=`` (``d`` exactly a ``dict``, or another instance dict it can list) is decided
here on the entries read now, as CPython's ``dict_equal`` decides it: lengths, keys, then values equal
by identity first; a value comparison that would run an ``__eq__`` (a tensor, a user object, a NaN not
identical to itself) graph-breaks. Dynamo's own dict ``==`` cannot be used: before 2.13 it has no
identity shortcut (``{"v": nan} == d`` with ``d["v"]`` the same NaN is False). On 2.10-2.11
``m.__dict__ == d`` of a ``MutableMapping`` compiled natively (Dynamo's snapshot dict) and broke once
mapping-dunder-dict made it live (fresh fuzz base 1025101682).
On 2.9-2.11 ``iter()`` is a polyfill that asks ``hasattr(obj.__dict__, "__iter__")`` first:
answered as ``dict`` would (``GetAttrVariable.call_obj_hasattr``, inherited, wrapped there only).
"""

from __future__ import annotations

import functools

from ..dynamo_api import (
    graph_break,
    guard_dict_keys_in_order,
    is_data_descriptor,
    made_in_frame,
    new_object_kwargs,
    raise_observed,
)
from ..instance_dict import (
    deleted_attr_names,
    deletion_tracker,
    instance_dict_item,
    instance_dict_receiver_types,
    pending_stores,
    plain_constant_key,
)
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate, method_name_gate, routed_gate

NAME = "dunder-dict-views"

_VIEWS = ("keys", "values", "items")
_HANDLED = frozenset(_VIEWS + ("__len__", "__iter__", "copy", "__eq__", "__ne__"))

def _current_keys(tx, obj):
    """The keys of ``obj.__dict__`` at this point of the frame, in CPython's order, or None
    where they cannot be known exactly (see the module docstring). For an object passed
    in, its own keys and their order are guarded (an effect)."""
    from torch._dynamo.variables import DeletedVariable

    value = getattr(obj, "value", None)
    real = getattr(value, "__dict__", None)
    cls = type(value)
    if type(real) is not dict or cls.__getattribute__ is not object.__getattribute__:
        return None  # (a dict subclass's own keys()/__iter__/copy() would run in CPython)
    record = pending_stores(tx.output.side_effects, obj)
    made = made_in_frame(obj)
    if made:
        keys = list(record)
        if keys[:len(real)] != list(real):
            return None  # a placeholder key the frame did not store first, in the same order
    elif obj.source is not None:
        keys = list(real) + [name for name in record if name not in real]
    else:
        return None
    keys = [name for name in keys if not (name in record and isinstance(record[name], DeletedVariable))]
    deleted = deleted_attr_names(obj)
    for name in keys:
        if not (type(name) is str or (made and plain_constant_key(name))) or name in deleted:
            return None  # deleted and stored again: its place is not in the record
        if is_data_descriptor(cls, name) and (name not in real or made):
            return None  # a stored slot or property name: perhaps not in __dict__ at all
    if not made:
        from torch._dynamo.guards import GuardBuilder, install_guard
        from torch._dynamo.source import AttrSource

        effects_begin()
        source = AttrSource(obj.source, "__dict__")
        install_guard(source.make_guard(GuardBuilder.TYPE_MATCH))  # still an exact dict
        guard_dict_keys_in_order(tx, source)
    return keys


def _in_eager_generator(tx) -> bool:
    """Is ``tx`` (or a frame it is inlined into) a generator that Dynamo runs to its end at once,
    collecting what it yields (``InliningGeneratorInstructionTranslator.generated_items``: every
    generator on 2.5/2.6, including the ``enumerate`` polyfill of 2.5 and generator expressions;
    from 2.7 only with ``enable_faithful_generator_behavior`` off, and never for a context manager's
    generator)? A live iteration stepped there runs ahead of its consumer: a key the consumer adds
    between two steps raises ``RuntimeError`` in CPython and nothing in the trace (issue 26)."""
    from torch._dynamo import config
    from torch._dynamo.symbolic_convert import InliningGeneratorInstructionTranslator

    if getattr(config, "enable_faithful_generator_behavior", False):
        faithful = True
    else:
        faithful = False
    while tx is not None:
        if isinstance(tx, InliningGeneratorInstructionTranslator):
            if not (faithful or getattr(tx, "is_generator_from_ctx_manager", False)):
                return True
        tx = getattr(tx, "parent", None)
    return False


def _keys_or_break(tx, obj, what: str):
    keys = _current_keys(tx, obj)
    if keys is None:
        graph_break("__dict__ view", f"{obj}.__dict__.{what}",
                    "tdcompat cannot list this instance dict exactly any more (an attribute was deleted)")
    return keys


def _entry(tx, obj, kind: str, name: str):
    from torch._dynamo.variables import ConstantVariable, TupleVariable

    key = ConstantVariable.create(name)
    if kind == "keys":
        return key
    record = pending_stores(tx.output.side_effects, obj)
    value = record[name] if name in record else _own_value(tx, obj, name)
    return value if kind == "values" else TupleVariable([key, value])


def _own_value(tx, obj, name: str):
    """``obj.__dict__[name]`` of an object passed in, for a key the frame has not stored: the
    attribute read, unless a data descriptor of the class (a property) hides the item or the
    object is a module (:func:`tdcompat.instance_dict.instance_dict_item`)."""
    return instance_dict_item(tx, obj, name)


#: Comparisons and set operators of a view: Dynamo would compare the tracker, not the view
#: (``o.__dict__.keys() == {...}.keys()`` was False on 2.8-2.10 where eager says True).
_OPERATORS = frozenset((
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__or__", "__ror__", "__and__",
    "__rand__", "__sub__", "__rsub__", "__xor__", "__rxor__", "isdisjoint", "__hash__", "__reversed__",
    "mapping"))


def _refuse_operator(view, name):
    graph_break("__dict__ view", f"{view.obj}.__dict__.{view.kind}().{name}",
                "tdcompat's instance-dict views support iteration, len and `in` only")


@functools.lru_cache(maxsize=None)
def _view_types():
    """(view tracker, iterator tracker), defined once Dynamo is imported."""
    from torch._dynamo.variables import ConstantVariable, VariableTracker
    from torch._dynamo.variables.lists import ListIteratorVariable

    python_types = {kind: type(getattr({}, kind)()) for kind in _VIEWS}
    iterator_types = {kind: type(iter(getattr({}, kind)())) for kind in _VIEWS}

    class InstanceDictView(VariableTracker):
        """``obj.__dict__.keys()``/``values()``/``items()``: every use reads ``obj``'s attributes
        as they are then."""

        _nonvar_fields = {"kind", *VariableTracker._nonvar_fields}

        def __init__(self, obj, kind: str, **kwargs) -> None:
            super().__init__(**kwargs)
            self.obj = obj
            self.kind = kind

        def python_type(self):
            return python_types[self.kind]

        def as_python_constant(self):
            raise NotImplementedError

        def has_unpack_var_sequence(self, tx) -> bool:
            # False: iteration (GET_ITER, enumerate, zip...) goes through __iter__, a live iterator,
            # not a copy (on 2.5-2.8 a True here would make every loop iterate a copy)
            return False

        def has_force_unpack_var_sequence(self, tx) -> bool:
            return False  # (2.5's enumerate() would take a copy: a key added in the loop raised nothing)

        def entries_now(self, tx):
            """The entries now, read as the iteration reads them (same keys-and-order guards), for a
            consumer that takes them all at once with no user code in between (``set(view)``)."""
            keys = _keys_or_break(tx, self.obj, f"{self.kind}()")
            return [_entry(tx, self.obj, self.kind, name) for name in keys]

        def reconstruct(self, codegen):
            graph_break("__dict__ view", f"{self.obj}.__dict__.{self.kind}()",
                        "a view of an instance dict cannot outlive the graph (it would be a copy)")

        def call_obj_hasattr(self, tx, name):
            # 2.9+ trace iter() as a polyfill that asks hasattr(view, "__iter__") first
            return ConstantVariable.create(hasattr(python_types[self.kind], name))

        def var_getattr(self, tx, name):
            if name in _OPERATORS:
                _refuse_operator(self, name)
            if name in ("__iter__", "__len__", "__contains__"):
                from torch._dynamo.variables import GetAttrVariable

                return GetAttrVariable(self, name)  # calling it is self.call_method(name)
            return super().var_getattr(tx, name)

        def call_method(self, tx, name, args, kwargs):
            if name in _OPERATORS:
                _refuse_operator(self, name)
            if not args and not kwargs and name in ("__iter__", "__len__"):
                keys = _keys_or_break(tx, self.obj, f"{self.kind}()")
                if name == "__len__":
                    return ConstantVariable.create(len(keys))
                return make_iterator(self.obj, self.kind, keys)
            if name == "__contains__" and self.kind == "keys" and len(args) == 1 and not kwargs:
                if args[0].is_python_constant():
                    keys = _keys_or_break(tx, self.obj, "keys()")
                    return ConstantVariable.create(args[0].as_python_constant() in keys)
            return super().call_method(tx, name, args, kwargs)

        def __repr__(self) -> str:
            return f"InstanceDictView({self.obj}.__dict__.{self.kind}())"

    class InstanceDictIterator(ListIteratorVariable):
        """An iterator over such a view: the keys it started with, each entry read when it is
        reached; a change of keys graph-breaks (CPython raises)."""

        _nonvar_fields = {"kind", "keys", *ListIteratorVariable._nonvar_fields}

        def __init__(self, items, obj=None, kind: str = "keys", keys=(), **kwargs) -> None:
            super().__init__(items, **kwargs)
            self.obj = obj
            self.kind = kind
            self.keys = tuple(keys)

        def _check(self, tx):
            now = tuple(_keys_or_break(tx, self.obj, f"{self.kind}() iteration"))
            if len(now) != len(self.keys):
                raise_observed(RuntimeError, tx, f"{self.obj}.__dict__ changed size during iteration")
            if now != self.keys:
                graph_break("__dict__ view", f"{self.obj}.__dict__ iteration",
                            "its keys changed during the iteration (CPython's answer depends on its table)")

        def next_variable(self, tx):
            if self.__dict__.get("_raw"):  # stepped by ListIteratorVariable's own unpacking: the key itself
                return super().next_variable(tx)
            if _in_eager_generator(tx):
                graph_break("__dict__ view", f"{self.obj}.__dict__ iteration inside a generator",
                            "this Dynamo runs the generator to its end before its consumer's first step "
                            "(a key added by the consumer would raise nothing)")
            self._check(tx)
            name = super().next_variable(tx).as_python_constant()
            return _entry(tx, self.obj, self.kind, name)

        def _rest(self, tx, unpack):
            """The entries of the keys ``unpack`` (ListIteratorVariable's own) takes. That may call back into
            this iterator (``force_unpack_var_sequence`` calls ``unpack_var_sequence``; iterator-consumption
            steps ``next_variable`` so that unpacking consumes it): those calls must give keys, not entries,
            or an entry is looked up as a key (``list(iter(o.__dict__.values()))`` crashed, 2.5-2.11)."""
            self._check(tx)
            self.__dict__["_raw"] = True
            try:
                keys = unpack(tx)
            finally:
                self.__dict__["_raw"] = False
            return [_entry(tx, self.obj, self.kind, k.as_python_constant()) for k in keys]

        def unpack_var_sequence(self, tx):
            if self.__dict__.get("_raw"):  # (force_unpack_var_sequence's own call)
                return super().unpack_var_sequence(tx)
            return self._rest(tx, super().unpack_var_sequence)

        def force_unpack_var_sequence(self, tx):
            if self.__dict__.get("_raw"):
                return super().force_unpack_var_sequence(tx)
            return self._rest(tx, super().force_unpack_var_sequence)

        def python_type(self):
            return iterator_types[self.kind]

        def as_python_constant(self):
            raise NotImplementedError

        def reconstruct(self, codegen):
            graph_break("__dict__ view", f"iter({self.obj}.__dict__.{self.kind}())",
                        "an iterator over an instance dict cannot outlive the graph (it would be a copy)")

        def __repr__(self) -> str:
            return f"InstanceDictIterator({self.obj}.__dict__.{self.kind}())"

    class InstanceDictLazyIterator(InstanceDictIterator):
        """The iterator a lazy consumer (``map``, ``filter``, ``zip``) holds: never unpacked whole (Dynamo's
        ``call_zip``/``call_map`` would take the rest where they are called: a copy that misses a change of
        keys), only stepped, item by item, as CPython's consumers step it."""

        def has_unpack_var_sequence(self, tx) -> bool:
            return False

        def has_force_unpack_var_sequence(self, tx) -> bool:
            return False

    def make_iterator(obj, kind, keys, lazy=False):
        cls = InstanceDictLazyIterator if lazy else InstanceDictIterator
        return cls([ConstantVariable.create(k) for k in keys], obj=obj, kind=kind, keys=keys, **new_object_kwargs())

    global _CONSUMED
    _CONSUMED = ()  # the whole consumers' gates reload their types, this view among them
    return InstanceDictView, make_iterator


@fail_safe(NAME)
def _dict_call_method(wrapped, instance, args, kwargs):
    """``GetAttrVariable(obj, "__dict__").call_method(tx, name, args, kwargs)``."""
    if getattr(instance, "name", None) != "__dict__" or len(args) != 4 or kwargs:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if name in ("__eq__", "__ne__"):
        return _compare(tx, instance, name, call_args, call_kwargs)
    if name not in _HANDLED or call_args or call_kwargs:
        return DEFER
    obj = instance.obj
    if type(obj) not in instance_dict_receiver_types():
        return DEFER
    keys = _current_keys(tx, obj)
    if keys is None:
        return DEFER
    from torch._dynamo.variables import ConstantVariable

    view, make_iterator = _view_types()
    effects_begin()
    if name == "__len__":
        return ConstantVariable.create(len(keys))
    if name == "__iter__":
        return make_iterator(obj, "keys", keys)
    if name == "copy":  # a new dict of the entries now: dict(o.__dict__) in CPython too
        return _copy_now(tx, instance)
    return view(obj, name)


def _copy_now(tx, getattr_vt):
    """``dict(o.__dict__)`` built from the entries read now, or None where this patch cannot list them."""
    from torch._dynamo.variables import BuiltinVariable, TupleVariable

    if type(getattr_vt.obj) not in instance_dict_receiver_types():
        return None
    keys = _current_keys(tx, getattr_vt.obj)
    if keys is None:
        return None
    pairs = TupleVariable([_entry(tx, getattr_vt.obj, "items", key) for key in keys])
    return BuiltinVariable(dict).call_function(tx, [pairs], {})


def _pairs_now(tx, getattr_vt):
    """``[(name, value tracker)]`` of ``o.__dict__`` read now, in its order, or None where this patch cannot
    list it."""
    if type(getattr_vt.obj) not in instance_dict_receiver_types():
        return None
    keys = _current_keys(tx, getattr_vt.obj)
    if keys is None:
        return None
    return [(key, _entry(tx, getattr_vt.obj, "values", key)) for key in keys]


#: Constants whose ``==`` is a pure function of their values, runs no user code and is reflexive
#: (a NaN is not: CPython finds it equal to itself only by identity).
_PLAIN_CONSTANTS = (str, bytes, int, bool, type(None))


def _plain(vt):
    if not vt.is_python_constant():
        return False
    value = vt.as_python_constant()
    if type(value) is float:
        return value == value
    return type(value) in _PLAIN_CONSTANTS


def _dict_equal(mine, other):
    """CPython's ``dict_equal``: lengths, then each of ``mine``'s entries in order looked up in ``other``,
    values equal by identity first (``PyObject_RichCompareBool``), stopping at the first difference.
    True/False where every comparison it reaches is an identity or between plain constants; None where
    one would run an ``__eq__`` (a tensor's, a user object's, a NaN's)."""
    if len(mine) != len(other):
        return False
    for key, value in mine:
        if key not in other:
            return False
        theirs = other[key]
        if theirs is value:
            continue
        if not (_plain(value) and _plain(theirs)):
            return None
        if value.as_python_constant() != theirs.as_python_constant():
            return False
    return True


def _compare(tx, instance, name, call_args, call_kwargs):
    """``o.__dict__ == d`` / ``!=`` against exactly a ``dict`` tracker or another instance dict this patch
    can list (both plain ``dict``s: no reflected operand comes first). Decided here as CPython's
    ``dict_richcompare`` decides it (:func:`_dict_equal`) on the entries read now (no user code runs while
    they are read), because Dynamo's own dict ``==`` has no identity shortcut before 2.13 (a NaN value
    would compare unequal to itself); a comparison that would run an ``__eq__`` graph-breaks, anything else
    defers."""
    from torch._dynamo.variables import ConstantVariable, ConstDictVariable, GetAttrVariable

    if len(call_args) != 1 or call_kwargs:
        return DEFER
    other = call_args[0]
    if type(other) is GetAttrVariable and getattr(other, "name", None) == "__dict__":
        theirs = _pairs_now(tx, other)
        if theirs is None:
            return DEFER
        other_items = dict(theirs)
    elif type(other) is ConstDictVariable and other.user_cls is dict:
        other_items = {}
        for key, value in other.items.items():
            key_vt = getattr(key, "vt", None)
            if key_vt is None or not key_vt.is_python_constant():
                return DEFER
            other_items[key_vt.as_python_constant()] = value
    else:
        return DEFER
    mine = _pairs_now(tx, instance)
    if mine is None:
        return DEFER
    effects_begin()
    equal = _dict_equal(mine, other_items)
    if equal is None:
        graph_break("__dict__ comparison", f"{instance} {name} {other}",
                    "comparing these values would run their __eq__")
    return ConstantVariable.create(equal if name == "__eq__" else not equal)


@fail_safe(NAME)
def _dict_hasattr(wrapped, instance, args, kwargs):
    """``GetAttrVariable(obj, "__dict__").call_obj_hasattr(tx, name)``: 2.9+ trace ``iter(x)`` as a
    polyfill that asks ``hasattr(x, "__iter__")`` first (``for k in obj.__dict__``); answered for the
    instance dicts this patch can list, as ``dict`` would."""
    if getattr(instance, "name", None) != "__dict__" or len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    obj = instance.obj
    if type(obj) not in instance_dict_receiver_types() or not isinstance(name, str):
        return DEFER
    if _current_keys(tx, obj) is None:
        return DEFER
    from torch._dynamo.variables import ConstantVariable

    effects_begin()
    return ConstantVariable.create(hasattr(dict, name))


@fail_safe(NAME)
def _frozenset(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_frozenset(tx, view)``: Dynamo asks ``has_unpack_var_sequence``, which a
    view answers False (its iteration stays live), and then raises an observed TypeError (2.6+) where
    eager builds the frozenset. A graph break instead (a ``FrozensetVariable`` of the entries came
    back empty or failed to rebuild on 2.8: measured)."""
    if kwargs or len(args) != 2:
        return DEFER
    tx, arg = args
    view_type = _view_types()[0]
    if type(arg) is not view_type:
        if _is_instance_dict(arg):  # frozenset(o.__dict__): 2.8-2.11 raise an observed TypeError
            graph_break("__dict__ view", f"frozenset({arg.obj}.__dict__)",
                        "tdcompat's instance-dict views support iteration, set(), len and `in` only")
        return DEFER
    graph_break("__dict__ view", f"frozenset({arg.obj}.__dict__.{arg.kind}())",
                "tdcompat's instance-dict views support iteration, set(), len and `in` only")


@fail_safe(NAME)
def _set(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_set(tx, view)``: Dynamo would raise an observed TypeError (2.8-2.10: it
    cannot unpack the view; ``try: set(o.__dict__.keys()) except TypeError`` took the except branch)
    or break; eager builds the set at once from the view's entries, no user code in between."""
    if kwargs or len(args) != 2:
        return DEFER
    tx, arg = args
    if type(arg) is not _view_types()[0]:
        if not _is_instance_dict(arg):
            return DEFER
        arg = _view_types()[0](arg.obj, "keys")  # set(o.__dict__) is the set of its keys
    from torch._dynamo.variables import SetVariable

    from ..dynamo_api import new_object_kwargs

    effects_begin()
    return SetVariable(arg.entries_now(tx), **new_object_kwargs())


def _is_instance_dict(vt) -> bool:
    """``GetAttrVariable(obj, "__dict__")`` of an object whose instance dict this patch lists."""
    from torch._dynamo.variables.misc import GetAttrVariable

    return (type(vt) is GetAttrVariable and getattr(vt, "name", None) == "__dict__"
            and type(vt.obj) in instance_dict_receiver_types())


def _set_gate(wrapped, instance, args, kwargs):
    """What is installed on ``BuiltinVariable.call_set``: anything but one of this patch's views goes
    straight on after one type test (no view exists before ``_view_types`` ran)."""
    try:
        other = type(args[1]) is not _view_types()[0] and not _is_instance_dict(args[1])
    except Exception:  # noqa: BLE001
        other = False
    if other:
        return wrapped(*args, **kwargs)
    return _set(wrapped, instance, args, kwargs)


def _frozenset_gate(wrapped, instance, args, kwargs):
    """What is installed on ``BuiltinVariable.call_frozenset``: anything but one of this patch's
    views goes straight on after one type test (no view exists before ``_view_types`` ran)."""
    try:
        other = type(args[1]) is not _view_types()[0] and not _is_instance_dict(args[1])
    except Exception:  # noqa: BLE001
        other = False
    if other:
        return wrapped(*args, **kwargs)
    return _frozenset(wrapped, instance, args, kwargs)


#: The trackers a whole-consumer builtin hands to this patch (its views and ``GetAttrVariable``), once
#: loaded; until then every call reaches the handler, which loads them.
_CONSUMED: tuple = ()

#: What each builtin accepts as its one positional argument: ``dict()`` builds from pairs, so only the
#: items view and the instance dict itself (a ``keys()`` view of 2-character names would be pairs too).
_WHOLE_KINDS = {"list": ("keys", "values", "items", "dict"), "tuple": ("keys", "values", "items", "dict"),
                "sorted": ("keys", "values", "items", "dict"), "dict": ("items", "dict")}


def _consumed_types() -> tuple:
    """``(GetAttrVariable,)``, plus the view tracker once it exists (``_view_types`` empties
    ``_CONSUMED`` when it makes it): a builtin called before any view was made does not make one."""
    global _CONSUMED
    from torch._dynamo.variables import GetAttrVariable

    views = (_view_types()[0],) if _view_types.cache_info().currsize else ()
    _CONSUMED = (GetAttrVariable, *views)
    return _CONSUMED


def _whole_entries(tx, arg, builtin: str):
    """The entries ``builtin(arg)`` takes, read now, for one of this patch's views or an instance dict
    it can list (``o.__dict__``, ``vars(o)``: its keys, or its items for ``dict``); else None."""
    getattr_type, *views = _CONSUMED or _consumed_types()
    if views and type(arg) is views[0]:
        if arg.kind not in _WHOLE_KINDS[builtin]:
            return None
        return arg.entries_now(tx)
    if type(arg) is not getattr_type or getattr(arg, "name", None) != "__dict__":
        return None
    if type(arg.obj) not in instance_dict_receiver_types():
        return None
    keys = _current_keys(tx, arg.obj)
    if keys is None:
        return None
    return [_entry(tx, arg.obj, "items" if builtin == "dict" else "keys", name) for name in keys]


def _whole(builtin: str):
    """The handler for ``BuiltinVariable.call_<builtin>(tx, arg, **kwargs)``."""

    @fail_safe(NAME)
    def handler(wrapped, instance, args, kwargs):
        if len(args) != 2 or (kwargs and builtin in ("list", "tuple")):
            return DEFER
        tx, arg = args
        entries = _whole_entries(tx, arg, builtin)
        if entries is None:
            return DEFER
        from torch._dynamo.variables import TupleVariable

        effects_begin()
        return wrapped(tx, TupleVariable(entries), **kwargs)

    handler.__name__ = handler.__qualname__ = f"_whole_{builtin}"
    handler.__doc__ = (
        f"``{builtin}(view)``, ``{builtin}(o.__dict__)``: CPython takes every entry at once (``list`` and "
        "``tuple`` extend from the iterator, ``sorted`` lists before it compares, ``dict`` inserts str keys), "
        "running no user code between two entries, so a tuple of the entries read now is what it sees.")
    return handler


def _whole_gate(builtin: str):
    """What is installed on ``BuiltinVariable.call_<builtin>``: an argument that is neither a view nor a
    ``GetAttrVariable`` goes straight to Dynamo after one type test."""

    @gate(_whole(builtin))
    def factory(original, handle):
        def consume(self, *args, **kwargs):  # any call: the methods' parameters differ
            if _CONSUMED and (len(args) != 2 or type(args[1]) not in _CONSUMED):
                return original(self, *args, **kwargs)
            return handle(self, *args, **kwargs)

        return consume

    return factory


_WHOLE_GATES = {builtin: _whole_gate(builtin) for builtin in _WHOLE_KINDS}


#: Lazy consumers and the index (after ``tx``) of their first iterable: CPython calls ``iter()`` on each at once.
_LAZY = {"map": 1, "filter": 1, "zip": 0}


def _iterator_now(tx, arg):
    """``iter(arg)`` for one of this patch's views or an instance dict it can list (the live iterator
    ``iter(o.__dict__)`` gives), else None."""
    getattr_type, *views = _CONSUMED or _consumed_types()
    if views and type(arg) is views[0]:
        obj, kind = arg.obj, arg.kind
    elif (type(arg) is getattr_type and getattr(arg, "name", None) == "__dict__"
          and type(arg.obj) in instance_dict_receiver_types()):
        obj, kind = arg.obj, "keys"
    else:
        return None
    keys = _current_keys(tx, obj)
    if keys is None:
        return None
    return _view_types()[1](obj, kind, keys, lazy=True)


def _lazy(builtin: str):
    """The handler for ``BuiltinVariable.call_<builtin>(tx, ...)``."""
    first = _LAZY[builtin] + 1

    @fail_safe(NAME)
    def handler(wrapped, instance, args, kwargs):
        if len(args) <= first:
            return DEFER
        call_args = list(args)
        for i in range(first, len(call_args)):
            it = _iterator_now(args[0], call_args[i])
            if it is not None:
                call_args[i] = it
        if all(new is old for new, old in zip(call_args, args)):
            return DEFER
        effects_begin()
        return wrapped(*call_args, **kwargs)

    handler.__name__ = handler.__qualname__ = f"_lazy_{builtin}"
    handler.__doc__ = (
        f"``{builtin}(..., o.__dict__)`` / ``{builtin}(..., view)``: CPython calls ``iter()`` on the iterable at "
        "once, so it gets the live iterator ``iter(o.__dict__)`` gives. Dynamo kept the instance dict itself, "
        "and where the lazy object outlived a graph break rebuilt it before replaying the frame's attribute "
        "stores: ``RuntimeError: dictionary changed size during iteration`` in the user's program (native on "
        "2.5-2.11; also ``map(f, vars(o))`` with instance-dict-vars).")
    return handler


def _lazy_gate(builtin: str):
    """What is installed on ``BuiltinVariable.call_<builtin>``: no argument a view or a ``GetAttrVariable``:
    straight to Dynamo after a type test per argument."""

    @gate(_lazy(builtin))
    def factory(original, handle):
        def consume(self, *args, **kwargs):  # any call: the methods' parameters differ
            if _CONSUMED and not any(type(arg) in _CONSUMED for arg in args):
                return original(self, *args, **kwargs)
            return handle(self, *args, **kwargs)

        return consume

    return factory


_LAZY_GATES = {builtin: _lazy_gate(builtin) for builtin in _LAZY}


@fail_safe(NAME)
def _list_extend(wrapped, instance, args, kwargs):
    """``ListVariable.call_method(tx, "extend", [arg], {})``: ``l.extend(view)``, ``[*view]``,
    ``[*o.__dict__]`` (``LIST_EXTEND``). CPython extends from the iterator, no user code between two
    entries; Dynamo cannot unpack a view and raised an observed TypeError (2.10-2.11: ``try: [*view]
    except TypeError`` took the ``except`` branch) or broke."""
    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if name != "extend" or len(call_args) != 1 or call_kwargs:
        return DEFER
    entries = _whole_entries(tx, call_args[0], "list")
    if entries is None:
        return DEFER
    from torch._dynamo.variables import TupleVariable

    effects_begin()
    return wrapped(tx, name, [TupleVariable(entries)], {})


@gate(_list_extend)
def _list_extend_gate(original, handle):
    """What is installed on ``ListVariable.call_method``: any method but ``extend``, and ``extend`` of
    anything but a view or ``GetAttrVariable``, goes straight to Dynamo (a string and a type test)."""

    def call_method(self, *args, **kwargs):  # any call
        if len(args) != 4 or args[1] != "extend" or (
                _CONSUMED and (len(args[2]) != 1 or type(args[2][0]) not in _CONSUMED)):
            return original(self, *args, **kwargs)
        return handle(self, *args, **kwargs)

    return call_method


@fail_safe(NAME)
def _join(wrapped, instance, args, kwargs):
    """``ConstantVariable.call_method(tx, "join", [arg], {})``: ``sep.join(o.__dict__)``, ``sep.join(vars(o))``,
    ``sep.join(view)``. CPython lists the iterable first (``PySequence_Fast``: no user code between two
    entries), then joins ``str`` items. Dynamo called ``force_unpack_var_sequence`` on the tracker, which raises
    ``NotImplementedError``: an ``InternalTorchDynamoError`` that stops the user's program, also without
    ``fullgraph`` (natively for ``o.__dict__``; with this patch's views and ``vars(o)`` too, where Dynamo broke
    before). Accepted: the entries read now when every one is a ``str`` constant (the keys, the dict itself);
    anything else graph-breaks (a break instead of the crash)."""
    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if name != "join" or type(getattr(instance, "value", None)) is not str or len(call_args) != 1 or call_kwargs:
        return DEFER
    arg = call_args[0]
    getattr_type, *views = _CONSUMED or _consumed_types()
    if not ((views and type(arg) is views[0])
            or (type(arg) is getattr_type and getattr(arg, "name", None) == "__dict__")):
        return DEFER
    entries = _whole_entries(tx, arg, "list")
    if entries is None or not all(e.is_python_constant() and type(e.as_python_constant()) is str for e in entries):
        graph_break("__dict__ view", f"{instance}.join({arg})",
                    "tdcompat joins an instance dict's str keys only (Dynamo cannot unpack it: a crash)")
    from torch._dynamo.variables import TupleVariable

    effects_begin()
    return wrapped(tx, name, [TupleVariable(entries)], {})


_join_gate = routed_gate(_join, method_name_gate, frozenset({"join"}))


def _iter_is_a_polyfill() -> bool:
    """only where Dynamo traces ``iter()`` as ``polyfills.builtins.iter_``, which asks ``hasattr`` first (2.9-2.12; the patch ends at 2.11)"""  # noqa: E501 - the docs render this one line
    from torch._dynamo.polyfills import builtins

    return hasattr(builtins, "iter_")


def _dict_call_method_gate(wrapped, instance, args, kwargs):
    """What is installed on ``GetAttrVariable.call_method``: a method this patch does not
    answer goes straight on after one set test."""
    try:
        other = args[1] not in _HANDLED
    except Exception:  # noqa: BLE001
        other = False
    if other:
        return wrapped(*args, **kwargs)
    return _dict_call_method(wrapped, instance, args, kwargs)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: call_method GetAttrVariable(..., __dict__) values [] {}` (also `keys`, '
             '`items`, `copy`, `__len__`, `__iter__`; `Unsupported method call` from 2.8; `builtin: '
             "list`/`sorted`/`dict()`): `for val in self.__dict__.values()` (TorchRL 0.6's "
             '`vmap_randomness`), `len(o.__dict__)`, `list(o.__dict__)`, `sorted(o.__dict__.keys())`, '
             '`dict(o.__dict__.items())`, `[*o.__dict__.values()]`',
         '2.5–2.11',
         '(`<2.12`)'),
    ),
    fixes="call_method GetAttrVariable(..., __dict__) values/keys/items/__len__/__iter__ (2.5-2.7), "
    "Unsupported method call (2.8-2.11): reading the whole instance dict of a user object or module "
    "(TorchRL 0.6's ValueEstimatorBase.vmap_randomness: `for val in self.__dict__.values()`)",
    upstream="torch/_dynamo/variables/misc.py: GetAttrVariable.call_method",
    mirrors="torch 2.12: DunderDictVariable (pytorch/pytorch#174570, #174941)",
    torch="<2.12",
    fixed_upstream="2.12: DunderDictVariable models obj.__dict__ as a dictionary",
    targets=(
        Target("torch._dynamo.variables.misc", "GetAttrVariable", "call_method", _dict_call_method_gate,
               params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.misc", "GetAttrVariable", "call_obj_hasattr", _dict_hasattr,
               inherited=True, params=("tx", "name"), when=_iter_is_a_polyfill),
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", deletion_tracker(),
               params=("item", "name", "value")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_set", _set_gate, params=("tx",)),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_frozenset", _frozenset_gate,
               params=("tx",)),
        *(Target("torch._dynamo.variables.builtin", "BuiltinVariable", f"call_{builtin}", factory,
                 params=("tx",)) for builtin, factory in _WHOLE_GATES.items()),
        # map/filter/zip of o.__dict__ or a view: the live iterator, as CPython's iter() at the call.
        *(Target("torch._dynamo.variables.builtin", "BuiltinVariable", f"call_{builtin}", factory,
                 params=("tx",)) for builtin, factory in _LAZY_GATES.items()),
        Target("torch._dynamo.variables.lists", "ListVariable", "call_method", _list_extend_gate,
               params=("tx", "name", "args", "kwargs")),
        # sep.join(o.__dict__ / vars(o) / a view): the str keys read now (Dynamo crashed unpacking it)
        Target("torch._dynamo.variables.constant", "ConstantVariable", "call_method", _join_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=(
        "torch._dynamo.variables:DeletedVariable",
        "torch._dynamo.variables:TupleVariable",
        "torch._dynamo.variables:SetVariable",
        "torch._dynamo.variables.lists:ListIteratorVariable.next_variable",
        "torch._dynamo.variables.lists:ListIteratorVariable.force_unpack_var_sequence",
    ),
    summary="keys()/values()/items()/len()/iteration of a user object's __dict__, live, in CPython's order",
    history=(
        ("2.5-2.7", "`GetAttrVariable.call_method` knows only single-key reads: "
         "`call_method GetAttrVariable(..., __dict__) values [] {}` (TorchRL 0.6's `vmap_randomness`)"),
        ("2.8-2.11", "the same, reported as `Unsupported method call`"),
        ("2.12+", "fixed upstream: `DunderDictVariable` (pytorch/pytorch#174570, #174941)"),
    ),
)
