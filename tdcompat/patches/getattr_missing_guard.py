"""Reading a missing attribute (``AttributeError``) is not guarded (torch 2.5 on).

Root cause: ``UserDefinedObjectVariable.var_getattr`` (``generic_getattr``
from 2.13; torch/_dynamo/variables/user_defined.py) raises ``AttributeError`` inside the
trace (``raise_observed_exception``) when the object passed in has no such
attribute, and installs no guard that says so: only the type is guarded. Code
compiled for an object without ``b`` runs the ``except AttributeError:``
branch for a later object that has it. ``try: o.b / except AttributeError``
and ``getattr(o, "b")`` in a ``try`` are silently wrong (measured on 2.5.1, 2.6.0, 2.8.0,
2.10.0, 2.11.0, 2.12.1, 2.13.0, 2.15.0). ``hasattr`` and
``getattr(o, k, default)`` take another path and are guarded.

The fix adds the missing guard where the exception leaves ``var_getattr``: the
key is not in the input's ``__dict__`` (``DICT_NOT_CONTAINS``, true at trace
time, so it can only cost a recompile), and no class of its MRO has it
(``hasattr(type(o), name)`` False: the type guard Dynamo has names the class, not what it
holds; a class that gains ``name`` between calls reused the ``except`` branch on every release,
fuzzer 2.7.1 seed 1641029811). For an object made in the frame only the class guard applies,
on the class it was made from (``getattr(K(), "u", d)`` and ``hasattr`` reused the default).
The class guard only where nothing runs in it (a metaclass with ``type``'s lookup and no
``__getattr__``, the name on neither MRO) and no class of the MRO was stored on in the frame.
Keys stored or deleted in the frame need no guard.

The same two gaps on a class read directly (``try: type(o).u / except AttributeError``),
2.12-2.15 (before 2.12 ``class-attr-guard`` answers these reads): the ``AttributeError`` of a
class with a source is guarded as ``hasattr(cls, name)`` False (``HASATTR``) where no code can
run in that guard (standard metaclass, the name nowhere on either MRO), and a lazy class
attribute read inside a ``try`` is realized (fuzzer seed-0 program 444 on 2.13.0 and 2.15.0).
"""

from __future__ import annotations

from ..dynamo_api import LAZY_MODULE, inside_try, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate, replay, replay_error

NAME = "getattr-missing-guard"

_TYPE_GETATTRIBUTE = type.__dict__["__getattribute__"]


@fail_safe(NAME)
def _lazy_in_try(wrapped, instance, args, kwargs):
    """An attribute read inside a ``try`` whose value Dynamo only passes on (appended,
    returned) stays a lazy tracker: no guard says the attribute exists, and the code after
    the graph reads it again from its source, outside the ``try``. For a later input without
    it, ``AttributeError`` escapes where eager took the ``except`` branch (silently wrong
    control flow, 2.5-2.8 and 2.13-2.15; fuzzer seed 1002356). Realizing it here installs
    the guards of its value (an input without the attribute fails them and recompiles).
    The gate sends only lazy results read inside a ``try`` here."""
    result = wrapped(*args, **kwargs)
    return realize(result)


def _observed_attribute_error(error: BaseException) -> bool:
    """Is ``error`` Dynamo's ``ObservedAttributeError``? Anything else (``NotImplementedError``,
    which ``BuiltinVariable.call_getattr`` turns into a ``GetAttrVariable``; a graph break)
    passes the gates untouched: the handlers' fail-safe would report it as their own failure."""
    try:
        from torch._dynamo.exc import ObservedAttributeError
    except ImportError:  # pragma: no cover - the patch requires it
        return False
    return isinstance(error, ObservedAttributeError)


@fail_safe(NAME)
def _var_getattr(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.var_getattr(tx, name)`` / ``generic_getattr(tx, name)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    from torch._dynamo.exc import ObservedAttributeError

    tx, name = args
    try:
        return wrapped(tx, name)
    except ObservedAttributeError:
        if isinstance(name, str):
            _guard_missing(tx, instance, name)
        raise


def _absent_from_class(cls: type, name: str) -> bool:
    """``hasattr(cls, name)`` is False and a guard on it runs no user code: the name is on neither
    ``cls``'s MRO nor its metaclass's, and the metaclass looks attributes up as ``type`` does (its
    ``__getattribute__``, no ``__getattr__``), all read statically."""
    from ..dynamo_api import MISSING, static_lookup

    meta = type(cls)
    return (static_lookup(cls, name) is MISSING and static_lookup(meta, name) is MISSING
            and static_lookup(meta, "__getattribute__") is _TYPE_GETATTRIBUTE
            and static_lookup(meta, "__getattr__") is MISSING)


def _guard_missing(tx, instance, name: str) -> None:
    """Guard what made ``obj.name`` raise: the key is missing from an input's ``__dict__``, and
    no class of ``type(obj)``'s MRO has it (``hasattr(cls, name)`` False, on the class's source:
    ``type(obj)`` of an input, or the class an object made in the frame was made from). The
    class guard only where nothing can run in it and its answer is the MRO's: a metaclass with
    ``type``'s ``__getattribute__``, no ``__getattr__`` and nothing of that name, a class MRO
    without the name, no store of it on a class in this frame."""
    from ..dynamo_api import (
        guard_class_source,
        guard_dict_contains,
        guard_hasattr,
        made_object_class_source,
    )

    side_effects = tx.output.side_effects
    value = instance.value
    if instance.source is not None:
        from torch._dynamo.source import AttrSource, TypeSource

        real = getattr(value, "__dict__", None)
        if (isinstance(real, dict) and name not in real
                and not side_effects.has_pending_mutation_of_attr(instance, name)):
            guard_dict_contains(AttrSource(instance.source, "__dict__"), name, False)
        class_source = TypeSource(instance.source)  # Dynamo's TYPE_MATCH on the object names the class
    else:
        class_source = None
    cls = type(value)
    if not _absent_from_class(cls, name):
        return
    table = getattr(side_effects, "id_to_variable", None) or {}
    for klass in cls.__mro__:
        tracked = table.get(id(klass))
        if tracked is not None and side_effects.is_attribute_mutation(tracked) and \
                side_effects.has_pending_mutation_of_attr(tracked, name):
            return  # the frame stored it on a class: Dynamo's side effects answer
    if class_source is None:
        tracked = table.get(id(cls))
        if tracked is not None and getattr(tracked, "value", None) is cls and tracked.source is not None:
            class_source = tracked.source  # the class tracker itself (classes tracked from 2.13)
        else:
            class_source = made_object_class_source(tx, cls)
            if class_source is None:
                return
            guard_class_source(class_source)
    guard_hasattr(class_source, name)


@gate(_var_getattr)
def _var_getattr_gate(original, handle):
    """What is installed: Dynamo's method runs here, once; only an exception reaches
    the handler (which acts on ``ObservedAttributeError``), raised again as ``wrapped``.
    A value read lazily (not realized: no guard yet) inside a ``try`` goes to
    :func:`_lazy_in_try`; anything else costs one type test."""

    def var_getattr(self, tx, name):
        try:
            result = original(self, tx, name)
        except Exception as error:
            if not _observed_attribute_error(error):
                raise
            return _var_getattr(replay_error(error), self, (tx, name), {})
        if type(result).__module__ != LAZY_MODULE:
            return result
        if inside_try(tx):
            return _lazy_in_try(replay(result), self, (tx, name), {})
        return result

    return var_getattr


@fail_safe(NAME)
def _class_getattr(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.var_getattr(tx, name)`` (``tp_getattro_impl`` from 2.14) that
    raised in the trace: an ``AttributeError`` of a class with a source, where neither the class's
    MRO nor its metaclass's holds the name (read statically), whose metaclass looks
    attributes up the standard way (``type``'s ``__getattribute__``, no ``__getattr__``: read
    statically, so the guard runs no user code), is guarded as ``hasattr(cls, name)`` False. True at
    trace time, so it can only cost a recompile; a class that gains the name between calls then
    reads it (2.12-2.15 reused the ``except AttributeError`` branch: fuzzer seed-0 program 444)."""
    try:
        return wrapped(*args, **kwargs)
    except Exception as error:
        from torch._dynamo.exc import ObservedAttributeError

        from ..dynamo_api import guard_hasattr

        tx, name = args
        cls = getattr(instance, "value", None)
        if (isinstance(error, ObservedAttributeError) and instance.source is not None and isinstance(cls, type)
                and isinstance(name, str) and _absent_from_class(cls, name)):
            guard_hasattr(instance.source, name)
        raise


@gate(_class_getattr)
def _class_getattr_gate(original, handle):
    """``UserDefinedClassVariable.var_getattr`` (``tp_getattro_impl`` from 2.14). An exception
    goes to :func:`_class_getattr`. A class attribute read inside a ``try`` and only passed on is
    the same lazy, unguarded re-read as an object's (``try: out.append(type(o).u)`` raises out of
    compiled code once ``u`` is gone: 2.12-2.15), sent to :func:`_lazy_in_try`."""

    def var_getattr(self, tx, name):
        try:
            result = original(self, tx, name)
        except Exception as error:
            if not _observed_attribute_error(error):
                raise
            return _class_getattr(replay_error(error), self, (tx, name), {})
        if type(result).__module__ != LAZY_MODULE or not inside_try(tx):
            return result
        return _lazy_in_try(replay(result), self, (tx, name), {})

    return var_getattr


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`try: o.b / except AttributeError:` (or `getattr(o, "b")` in a `try`) **reuses the first '
             "call's answer** when a later input has `b`; `try: type(o).u / except AttributeError:` the "
             'same for a class attribute, or `AttributeError` **out of compiled code** once `u` is gone '
             '(2.12–2.15); `try: o.u` / `getattr(K(), "u", d)` **reuse the `except` branch or the '
             'default** after a base class of `o` or `K` gains `u`',
         'every release',
         '(`>=2.5`)'),
    ),
    fixes="`try: o.b / except AttributeError:` reuses code compiled for an object without `b` when a later "
    "object has it (silently wrong, torch 2.5+)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedObjectVariable.var_getattr "
    "(generic_getattr from 2.13)",
    mirrors="open upstream",
    torch=">=2.5",
    targets=(
        # var_getattr up to 2.13; 2.13 adds generic_getattr (CPython's PyObject_GenericGetAttr), the only one from 2.14.
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "var_getattr", _var_getattr_gate,
               params=("tx", "name"), optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "generic_getattr",
               _var_getattr_gate, params=("tx", "name"), optional=True),
        # the class attribute read: var_getattr up to 2.13, tp_getattro_impl from 2.14
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "var_getattr",
               _class_getattr_gate, params=("tx", "name"), optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "tp_getattro_impl",
               _class_getattr_gate, params=("tx", "name"), optional=True),
    ),
    requires=(
        "torch._dynamo.exc:ObservedAttributeError",
        "torch._dynamo.side_effects:SideEffects.has_pending_mutation_of_attr",
        "torch._dynamo.source:AttrSource",
    ),
    summary="a missing attribute read in the trace is guarded absent from the input's __dict__",
    history=(
        ("2.5-2.7",
         "`UserDefinedObjectVariable.var_getattr` raises `AttributeError` in the trace with only the type "
         "guarded: `try: o.b / except AttributeError:` and `getattr(o, 'b')` in a `try` reuse the first call's "
         "answer when a later input has `b` (silently wrong). A read only passed on (`try: out.append(o.b)`) is "
         "re-read after the graph, outside the `try`, unguarded (silently wrong). `hasattr` and `getattr(o, k, "
         "default)` are guarded"),
        ("2.8-2.10", "the same missing guard (silently wrong)"),
        ("2.11",
         "the same, and again the unguarded re-read of a read only passed on (silently wrong)"),
        ("2.12",
         "as on 2.11; from 2.12 (where `class-attr-guard` ends) the same two gaps on a class attribute read "
         "directly: `try: type(o).u / except AttributeError` has no guard on `u` staying missing, and a class "
         "attribute only passed on is re-read after the graph, outside the `try` (measured on 2.12.1)"),
        ("2.13+",
         "all as on 2.12, the missing guard of objects now in `generic_getattr` (added in 2.13, the only one from "
         "2.14); measured on 2.13.0 and 2.15.0. Open upstream"),
    ),
)
