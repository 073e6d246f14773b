"""Iterating an ``Enum`` class is ``Unsupported`` (torch 2.5-2.11).

Symptom: ``for m in SomeEnum:``, ``list(SomeEnum)``, ``tuple(SomeEnum)``,
``[... for m in SomeEnum]`` or ``all(... for m in SomeEnum)`` in compiled code
graph-breaks (``fullgraph=True`` fails). TorchRL hits it on every loss's first
call (``torchrl/objectives/utils.py: _ensure_builtin_value_estimators_registered``
iterates ``ValueEstimators``).

Root cause: Dynamo models an ``Enum`` class as ``UserDefinedClassVariable``
(torch/_dynamo/variables/user_defined.py), which has no
``unpack_var_sequence``; ``BuiltinVariable.call_iter`` (variables/builtin.py)
then falls back to ``call_method(__iter__)`` on 2.5-2.9 ("call_method
UserDefinedClassVariable(<enum ...>) __iter__", "Unsupported method call") or to
the ``polyfills.builtins.iter_`` polyfill on 2.10-2.11 ("Observed exception",
"failed to bind arguments"), and ``list()``/``tuple()`` fail in
``_call_iter_tuple_list`` ("builtin: list", "Failed to trace builtin
operator"). ``len(SomeEnum)`` works on every release.

The fix, as torch 2.12 does it (``UserDefinedClassVariable.unpack_var_sequence``
builds ``VariableTracker.build(tx, item) for item in self.value`` for an Enum class), but
guarded on what it reads. It accepts an ``Enum`` class (``Enum``, ``IntEnum``, ``Flag``,
``IntFlag``, any subclass) with a source whose metaclass leaves the container protocol
(``__iter__``, ``__reversed__``, ``__len__``, ``__contains__``, ``__bool__``,
``__getitem__``) to ``enum.EnumMeta`` and defines no ``_member_names_``/``_member_map_``.
Its members are then exactly what ``EnumMeta.__iter__`` yields, ``cls._member_map_[name]
for name in cls._member_names_`` (aliases, and on 3.11+ a ``Flag``'s composite members,
are not in ``_member_names_``), read from the class's own ``__dict__`` without running
anything, and each becomes a sourceless ``EnumVariable``. Guards: the class's type
(``TYPE_MATCH``: the metaclass), the metaclass's ``__iter__`` and ``__reversed__``
(``ID_MATCH``), ``cls._member_names_`` (``EQUALS_MATCH``: members added or removed between
calls, as ``aenum.extend_enum`` does, recompile) and each ``cls._member_map_[name]``
(``ID_MATCH``). ``unpack_var_sequence`` serves ``list(E)``, ``tuple(E)``, ``[*E]``,
``sorted(E)``, unpacking (a new list or tuple in CPython too); ``iter(E)`` and
``reversed(E)`` are list iterators over the members (reversed for ``reversed``) that
graph-break where they would be rebuilt outside the frame (returned, stored, alive at a
graph break): CPython's are generators. 2.11 models the class as
``UserDefinedEnumClassVariable`` (``__contains__`` only; its docstring lists ``__iter__``
as not yet supported): handled the same. Any other class, a sourceless one, a metaclass
with its own protocol, or ``iter(cls, sentinel)``: Dynamo's own method.
"""

from __future__ import annotations

from ..dynamo_api import MISSING, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "enum-class-iter"


_kinds: tuple = ()  # the trackers of a class, once loaded

#: The protocol a metaclass must leave to ``enum.EnumMeta`` for the members this patch builds to be
#: what CPython's iteration, ``reversed``, ``len``, ``in`` and truth test would see.
_PROTOCOL = ("__iter__", "__reversed__", "__len__", "__contains__", "__bool__", "__getitem__")


def _load_kinds() -> tuple:
    global _kinds
    from torch._dynamo.variables import user_defined

    # 2.11 models Enum classes as UserDefinedEnumClassVariable (still without __iter__)
    _kinds = (user_defined.UserDefinedClassVariable, getattr(user_defined, "UserDefinedEnumClassVariable", None))
    return _kinds


def _enum_members(obj):
    """``(names, members)`` of the Enum class ``obj`` tracks, in iteration order, or None.

    Exactly what ``EnumMeta.__iter__`` yields: ``cls._member_map_[name] for name in
    cls._member_names_`` (CPython 3.9-3.13; aliases and, for a ``Flag`` on 3.11+, composite
    members are not in ``_member_names_``), read from the class's own ``__dict__`` without
    running anything. Only for a class with a source (its reads are guarded) whose metaclass
    leaves the whole container protocol to ``EnumMeta``."""
    import enum

    kinds = _kinds or _load_kinds()
    if type(obj) not in kinds or obj.source is None:
        return None
    cls = obj.value
    if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
        return None
    meta = type(cls)
    if any(static_lookup(meta, name) is not static_lookup(enum.EnumMeta, name) for name in _PROTOCOL):
        return None  # a metaclass that iterates (or counts, or reverses) its own way
    own = type.__dict__["__dict__"].__get__(cls)
    names, members = own.get("_member_names_"), own.get("_member_map_")
    if type(names) is not list or type(members) is not dict:
        return None
    if not all(type(name) is str and name in members for name in names):
        return None
    if static_lookup(meta, "_member_names_") is not MISSING or static_lookup(meta, "_member_map_") is not MISSING:
        return None  # a metaclass attribute of that name would be what `cls._member_names_` reads
    return list(names), [members[name] for name in names]


def _guard_members(obj, names) -> None:
    """Guard what the members were read from: the metaclass (its identity and the slots this
    patch stands in for), ``cls._member_names_`` (its contents: members added or removed, as
    ``aenum.extend_enum`` does, fail it) and each ``cls._member_map_[name]`` (its identity)."""
    from torch._dynamo import source as sources
    from torch._dynamo.guards import GuardBuilder, install_guard

    effects_begin()
    install_guard(obj.source.make_guard(GuardBuilder.TYPE_MATCH))
    meta_source = sources.TypeSource(obj.source)
    for slot in ("__iter__", "__reversed__"):
        install_guard(sources.AttrSource(meta_source, slot).make_guard(GuardBuilder.ID_MATCH))
    install_guard(sources.AttrSource(obj.source, "_member_names_").make_guard(GuardBuilder.EQUALS_MATCH))
    item = getattr(sources, "DictGetItemSource", None) or sources.GetItemSource  # 2.5: GetItemSource on a dict
    member_map = sources.AttrSource(obj.source, "_member_map_")
    for name in names:
        install_guard(item(member_map, name).make_guard(GuardBuilder.ID_MATCH))


_ITERATOR: list = []


def _iterator_type():
    """A list iterator over the members that graph-breaks where it would be rebuilt outside
    the frame (returned, stored, alive at a graph break): CPython's is a generator (its type,
    ``close``/``send``, and its lazy reads of ``_member_names_`` differ from a tuple iterator)."""
    if not _ITERATOR:
        from torch._dynamo.variables import ListIteratorVariable

        from ..dynamo_api import graph_break

        class EnumMembersIterator(ListIteratorVariable):
            def reconstruct(self, codegen):
                graph_break("iterator over an Enum class outlives the frame", repr(self.items),
                            "CPython's is a generator over the class; tdcompat only iterates it within the frame")

        _ITERATOR.append(EnumMembersIterator)
    return _ITERATOR[0]


def _members_iterator(tx, obj, reverse: bool):
    found = _enum_members(obj)
    if found is None:
        return DEFER
    names, members = found
    _guard_members(obj, names)
    from ..dynamo_api import build_sourceless, new_object_kwargs

    items = [build_sourceless(tx, m) for m in members]
    return _iterator_type()(items[::-1] if reverse else items, **new_object_kwargs())


@fail_safe(NAME)
def _unpack_var_sequence(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.unpack_var_sequence(tx)`` (inherited from VariableTracker):
    ``list(E)``, ``tuple(E)``, ``[*E]``, ``sorted(E)``, ``a, b = E`` (each a new list or tuple
    in CPython too)."""
    if len(args) != 1 or kwargs:
        return DEFER
    found = _enum_members(instance)
    if found is None:
        return DEFER
    names, members = found
    _guard_members(instance, names)
    from ..dynamo_api import build_sourceless

    (tx,) = args
    return [build_sourceless(tx, m) for m in members]


@fail_safe(NAME)
def _call_iter(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_iter(tx, obj, *args)``: ``iter(EnumClass)``, ``for m in EnumClass``."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, obj = args
    return _members_iterator(tx, obj, reverse=False)


@fail_safe(NAME)
def _call_reversed(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_reversed(tx, obj)``: ``reversed(EnumClass)`` (Dynamo's own answer
    from ``unpack_var_sequence`` would be a tuple, CPython's is a generator)."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, obj = args
    return _members_iterator(tx, obj, reverse=True)


@gate(_call_iter)
def _call_iter_gate(original, handle):
    """What is installed on ``BuiltinVariable.call_iter``: ``iter(x)`` of a tracker that
    is not a class goes straight to Dynamo (one type test, once the kinds are loaded)."""

    def call_iter(self, tx, obj, *args, **kwargs):
        if _kinds and not args and not kwargs and type(obj) not in _kinds:
            return original(self, tx, obj)
        return handle(self, tx, obj, *args, **kwargs)

    return call_iter


@gate(_call_reversed)
def _call_reversed_gate(original, handle):
    """What is installed on ``BuiltinVariable.call_reversed``: as ``_call_iter_gate``."""

    def call_reversed(self, *args, **kwargs):  # any call: Dynamo's takes (tx, obj) only
        if _kinds and len(args) == 2 and not kwargs and type(args[1]) not in _kinds:
            return original(self, *args)
        return handle(self, *args, **kwargs)

    return call_reversed


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: call_method UserDefinedClassVariable(<enum ...>) __iter__` / `Dynamo does '
             'not know how to trace method __iter__ of class EnumType` (`for m in SomeEnum`, '
             "`list(SomeEnum)`; TorchRL's `_ensure_builtin_value_estimators_registered`)",
         '2.5–2.11',
         '(`<2.12`)'),
    ),
    fixes="Unsupported: call_method UserDefinedClassVariable(<enum ...>) __iter__ / "
    "Dynamo does not know how to trace method `__iter__` of class `EnumType` / builtin: list "
    "[UserDefinedClassVariable] (iterating an Enum class: for m in E, list(E), tuple(E))",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.unpack_var_sequence; "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_iter, BuiltinVariable.call_reversed",
    mirrors="torch 2.12 UserDefinedClassVariable.unpack_var_sequence for Enum classes",
    torch="<2.12",
    fixed_upstream="2.12: UserDefinedClassVariable.unpack_var_sequence builds the members of an Enum class",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "unpack_var_sequence",
               _unpack_var_sequence, inherited=True, params=("tx",)),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_iter", _call_iter_gate,
               params=("tx", "obj")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_reversed", _call_reversed_gate,
               params=("tx", "obj")),
    ),
    requires=(
        "torch._dynamo.variables:ListIteratorVariable",
        "torch._dynamo.variables.builder:SourcelessBuilder.create",
        "torch._dynamo.guards:GuardBuilder.EQUALS_MATCH",
        "torch._dynamo.source:TypeSource",
    ),
    summary="iterating an Enum class yields its members, guarded on _member_names_/_member_map_ and the metaclass",
    history=(
        ("2.5-2.9",
         "an `Enum` class (`UserDefinedClassVariable`) has no `unpack_var_sequence`: `for m in E` is "
         "`Unsupported: call_method UserDefinedClassVariable(<enum ...>) __iter__` / `Unsupported method call`; "
         "`list(E)`, `tuple(E)`: `builtin: list`, `Failed to trace builtin operator` (TorchRL's "
         "`_ensure_builtin_value_estimators_registered` on every loss's first call). `len(E)` works"),
        ("2.10-2.11",
         "`iter(E)` falls to the `polyfills.builtins.iter_` polyfill: `Observed exception`, `failed to bind "
         "arguments`; `list(E)`/`tuple(E)` break as before; 2.11's `UserDefinedEnumClassVariable` supports "
         "`__contains__` only"),
        ("2.12+",
         "fixed upstream: `UserDefinedClassVariable.unpack_var_sequence` builds the members of an Enum class"),
    ),
)
