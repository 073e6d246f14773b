"""A dict subclass merged into a dict is read another way than CPython reads it (every release).

Symptom (silently wrong, measured on 2.5.1-2.15.0 with ``m = Sub(a=1, n=11)`` passed in, ``fullgraph=True``,
two calls): ``dict(m)``, ``{**m}``, ``d.update(m)``, ``d |= m``, ``d | m``, ``m | d``, ``OrderedDict(m)``,
``od.update(m)``, ``od |= m``, ``od | m``, ``m | od``, ``defaultdict(int, m)``, ``dd.update(m)`` give other
items, values or types than eager when ``Sub`` has its own ``keys``, ``__iter__``, ``__getitem__`` or
``items``, or is an ``OrderedDict`` subclass:

- 2.5-2.6: a dict subclass passed in is a ``MutableMappingVariable``; ``call_custom_dict`` folds
  ``dict(m.items())`` into constants **without a guard** (later calls get the first call's values, any
  subclass); an ``OrderedDict`` subclass built in the frame folds ``{} | o`` over a plain ``dict``;
- 2.7-2.9: ``construct_dict`` runs the class's ``__iter__``/``__getitem__`` where CPython reads the storage,
  and never ``m.keys()`` where CPython's ``OrderedDict`` calls it;
- 2.10-2.12: ``construct_dict`` reads ``m.items()`` (the class's own, if it has one); ``update`` and ``|``
  read the storage where CPython calls ``keys()``; on 2.9-2.12 ``m | od`` is an ``OrderedDict`` (eager:
  ``dict``, ``dict.__or__`` of the left operand runs first);
- 2.13-2.14: ``update`` (and ``{**m}``, ``|``, ``|=``) calls ``m.keys()`` and ``m[key]`` also where CPython
  reads the storage; 2.15: ``OrderedDict(m)``, ``od.update(m)``, ``od |= m`` read the storage.

CPython (``Objects/dictobject.c``, ``odictobject.c``): a ``dict`` receiver (``dict(m)``, ``update``,
``{**m}``, ``|``, a ``defaultdict``) reads the storage when ``type(m).__iter__`` is ``dict``'s
(``dict_merge``'s fast path), else ``m.keys()`` then ``m[key]``; an ``OrderedDict`` receiver
(``mutablemapping_update``) reads ``m.keys()`` then ``m[key]`` for anything but an exact ``dict``; ``d | m``
runs ``type(m).__ror__`` first when ``m``'s class is a dict subclass with its own (``OrderedDict``'s builds a
``type(m)``). tdcompat's ``defaultdict-construction`` (2.5-2.9) made ``defaultdict(int)`` compile, so frames
that broke there went on to these merges (``tests/test_dict_update_args.py`` on 2.7-2.9; fuzzer, 2.5-2.9).

What the handlers accept: nothing. They graph-break (eager merges) where the read Dynamo would do on that
call path can differ from CPython's for the argument's class, read statically on its MRO (Dynamo guards the
type; a class changed later keeps the refusal or meets Dynamo's own read, as without tdcompat): a class with
its own ``__getattribute__`` or an instance attribute ``keys``; on 2.5-2.6 any folded subclass; where Dynamo
iterates (2.7-2.9) its own ``__getitem__`` on CPython's fast path, else its own ``keys`` or ``__iter__``;
where it reads ``items()`` (2.10+) its own ``items``; where it calls ``keys()`` (2.13-2.14 ``update``) its
own ``keys`` or ``__getitem__`` on CPython's fast path; where it reads the storage, off CPython's fast path
its own ``keys`` or ``__getitem__`` (not a Hugging Face ``ModelOutput``, whose ``__getitem__`` answers the
stored value); ``m | od``, ``{} | o`` of an ``OrderedDict`` subclass or a class with its own ``__ror__``. The
``OrderedDict`` update hands its argument to the ``call_custom_dict`` it makes (a thread-local), so that read
is judged as the ``OrderedDict`` merge it is. Every other call is Dynamo's (``OrderedDict``, ``defaultdict``
and plain subclasses go on after one type test). 2.5-2.6 also stop treating an ``OrderedDict`` subclass
built in the frame (``CustomizedDictVariable``) as a Python constant, so ``{} | o`` is not folded over a
plain ``dict``.

On 2.13+, where ``|`` goes through ``binary_op``'s number slots and not ``call_method``, ``o | d`` and ``d |
o`` of a *plain* ``OrderedDict`` subclass ``o`` (itself and its bases up to ``OrderedDict`` define none of
:data:`_ODICT_OR_READS`, its metaclass is ``type``, no instance attribute ``keys``) and an exact ``dict`` or
``OrderedDict`` ``d`` (``d`` a ``dict`` when ``o`` is on the right) were a plain ``OrderedDict`` (2.13-2.14) or
``dict`` (2.15) natively: silently wrong. The ``call_or_`` handler computes what CPython's ``odict_or``
(``Objects/odictobject.c``) computes: ``type(o)(left)`` then ``.update(right)``, through Dynamo's own ``type()``,
class call and ``update``; for a plain subclass those run no user code in CPython, so the items are the
storage's, in CPython's order. Anything else defers. It never refuses: a break inside ``call_or_`` is
swallowed and ``|`` folded over plain-dict constants (2.13 made ``{} | o`` a ``dict`` that way).

Left to Dynamo (measured, native, ``tests/test_dict_subclass_merge.py`` xfails them as "wrong without
tdcompat too"; docs/upstream/dict-subclass-merge/): ``m | d`` with a subclass on the left on 2.13-2.15 when it
is not such a plain ``OrderedDict`` subclass (a ``Counter`` gives another type; a class with its own ``keys``
and ``__iter__`` other items) and ``{} | m`` of such a class on 2.13-2.14; 2.15's ``dd.update(m)`` of such a
class.
"""

from __future__ import annotations

import collections
import functools
import threading

from ..dict_classes import class_call_gate, instance_attribute, overrides, python_type
from ..dynamo_api import (
    bind_args,
    graph_break,
    is_lazy,
    or_through_number_slots,
    peek,
    realize,
    static_lookup,
    torch_release,
)
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-subclass-merge"

_BUILTIN = (dict, collections.OrderedDict, collections.defaultdict)

#: ``ordered_argument``: the argument of the ``OrderedDict`` update being traced, which Dynamo's ``update``
#: passes to ``call_custom_dict(dict, m)`` (so that read is judged as the OrderedDict merge it is).
_scope = threading.local()


@functools.lru_cache(maxsize=None)
def _dynamo_reads() -> str:
    """How this torch's ``construct_dict`` polyfill reads a dict subclass that Dynamo tracks as a user
    object: ``"baked"`` (2.5-2.6: no polyfill; ``call_custom_dict`` folds ``m.items()`` into constants),
    ``"iterates"`` (2.7-2.9: ``for key in m: dst[key] = m[key]``, the user's ``__iter__`` and
    ``__getitem__`` inlined), ``"items"`` (2.10+: ``mutable_mapping_update`` reads ``m.items()``)."""
    release = torch_release()
    return "baked" if release < (2, 7) else "iterates" if release < (2, 10) else "items"


@functools.lru_cache(maxsize=None)
def _update_reads() -> str:
    """How ``d.update(m)`` (and ``|``, ``|=``, ``{**m}``) reads a dict subclass Dynamo tracks as a user object:
    ``"keys"`` on 2.13-2.14 (``m.keys()`` then ``m[key]``, as CPython off its fast path), ``"storage"`` on
    2.15 (the subclass is a dict tracker), else as ``call_custom_dict`` reads it (:func:`_dynamo_reads`)."""
    release = torch_release()
    return "keys" if (2, 13) <= release < (2, 15) else "storage" if release >= (2, 15) else _dynamo_reads()


def _own(cls: type, name: str) -> bool:
    """Does ``cls`` define ``name`` other than its builtin base (``OrderedDict`` or ``dict``) does?"""
    return overrides(cls, collections.OrderedDict if issubclass(cls, collections.OrderedDict) else dict, name)


def _instance_keys(value) -> bool:
    """Does the instance's own ``__dict__`` hold ``keys`` (which CPython's ``m.keys()`` would call)?"""
    return instance_attribute(value, "keys")


def _differs(cls: type, value, ordered: bool, reads: str) -> bool:
    """Can Dynamo's read of ``value`` (a ``cls`` instance) merged into a receiver (an ``OrderedDict``
    where ``ordered``) differ from CPython's, when Dynamo ``reads`` it as :func:`_tracker_reads` says?"""
    if _own(cls, "__getattribute__") or _instance_keys(value):
        return True
    if reads == "baked":
        return True
    fast_path = not ordered and not issubclass(cls, collections.OrderedDict) and not _own(cls, "__iter__")
    # CPython: the storage on dict_merge's fast path, else keys() then [key]
    if reads == "keys":  # Dynamo: keys(), then [key]
        return fast_path and (_own(cls, "keys") or _own(cls, "__getitem__"))
    if reads == "iterates":  # Dynamo: __iter__, then [key]
        if fast_path:
            return _own(cls, "__getitem__")
        return _own(cls, "keys") or _own(cls, "__iter__")
    if reads == "items" and _own(cls, "items"):  # Dynamo: the class's items()
        return True
    # Dynamo: the storage (items() of a class that inherits it); off the fast path CPython's keys() and [key]
    return not fast_path and (_own(cls, "keys") or _own(cls, "__getitem__") and not _hf_output(cls))


def _hf_output(cls: type) -> bool:
    """A Hugging Face ``ModelOutput``/``BaseOutput`` subclass (an ``OrderedDict``): its own ``__getitem__``
    answers a ``str`` key with the stored value (``dict(self.items())[k]``), which is what Dynamo reads."""
    return any(base.__name__ in ("ModelOutput", "BaseOutput")
               and getattr(base, "__module__", "").split(".")[0] in ("transformers", "diffusers")
               for base in type.__dict__["__mro__"].__get__(cls))


def _subclass(vt):
    """``(class, value, realized tracker)`` of a merge argument that is a ``dict`` subclass instance other
    than the builtin ones, else None. A lazy argument is realized only then (Dynamo's merge realizes it
    too)."""
    tracker, value = peek(vt)
    if tracker is None:
        cls = type(value)
        if cls in _BUILTIN or not isinstance(value, dict):
            return None
        tracker = realize(vt)
    else:
        try:
            cls = tracker.python_type()
        except Exception:  # noqa: BLE001 - no Python type: not a dict argument
            return None
        if cls in _BUILTIN or not isinstance(cls, type) or not issubclass(cls, dict):
            return None
        value = vars(tracker).get("value")  # the instance attribute only: ListVariable.value is a guarded read
    return cls, value, tracker


def _tracker_reads(tracker, path: str) -> str:
    """How Dynamo reads this argument tracker on a call ``path``: ``"construct"`` (``call_custom_dict``'s
    polyfill: :func:`_dynamo_reads`, whatever the tracker), ``"update"`` (a dict tracker's items, else
    :func:`_update_reads`) or ``"or"`` (the items). 2.5-2.6: a ``MutableMappingVariable`` is folded
    (``"baked"``), any other tracker's items are read."""
    from torch._dynamo.variables import ConstDictVariable

    if _dynamo_reads() == "baked":
        from torch._dynamo.variables.user_defined import MutableMappingVariable

        return "baked" if isinstance(tracker, MutableMappingVariable) else "storage"
    if path == "construct":
        return _dynamo_reads()
    if path == "or" or isinstance(tracker, ConstDictVariable):
        return "storage"
    return _update_reads()


def _refuse(vt, ordered: bool, how: str, path: str) -> None:
    """Graph-break when the merge of ``vt`` into a receiver (an ``OrderedDict`` where ``ordered``) on call
    ``path`` (:func:`_tracker_reads`) can differ from CPython's."""
    found = _subclass(vt)
    if found is None:
        return
    cls, value, tracker = found
    if _differs(cls, value, ordered, _tracker_reads(tracker, path)):
        graph_break("merge of a dict subclass", f"{how} of a {cls.__qualname__}",
                    f"Dynamo reads a {cls.__qualname__} another way than CPython's "
                    f"{'OrderedDict' if ordered else 'dict'} merge (its keys(), __iter__ or __getitem__)")


def _ordered(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, collections.OrderedDict)


@fail_safe(NAME)
def _call_custom_dict(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_custom_dict(tx, user_cls, arg, **kw)`` (a staticmethod): ``dict(m)``,
    ``OrderedDict(m)`` (2.5-2.6), and ``update``/``{**m}``, which call it with ``dict``."""
    if len(args) != 3:
        return DEFER
    ordered = _ordered(args[1])
    if args[2] is getattr(_scope, "ordered_argument", None):  # od.update(m) builds dict(m) first
        _scope.ordered_argument, ordered = None, True
    _refuse(args[2], ordered, f"{getattr(args[1], '__name__', '?')}(...)", "construct")
    return DEFER


@fail_safe(NAME)
def _dict_call_method(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, name, [m], kwargs)`` for ``update``, ``__ior__``, ``__or__``
    (the gate sends no other name)."""
    if len(args) != 4 or kwargs or len(args[2]) != 1:
        return DEFER
    name = args[1]
    try:
        receiver = instance.python_type()
    except Exception:  # noqa: BLE001
        return DEFER
    if not isinstance(receiver, type) or not issubclass(receiver, dict):
        return DEFER  # SetVariable and friends share this method
    other = args[2][0]
    if name == "__or__":
        found = _subclass(other)
        if found is not None and (_own(found[0], "__ror__") or _ordered(found[0])):
            graph_break("merge of a dict subclass", f"{receiver.__name__} | {found[0].__qualname__}",
                        "the right operand's own __ror__ runs first (OrderedDict's builds its type)")
    _refuse(other, _ordered(receiver), f"{receiver.__name__}.{name}", "or" if name == "__or__" else "update")
    if name == "__or__" or not _ordered(receiver):
        return DEFER
    # Dynamo's update builds dict(m) with call_custom_dict(dict, m): that read is this OrderedDict's merge
    previous = getattr(_scope, "ordered_argument", None)
    _scope.ordered_argument = other
    try:
        return wrapped(*args, **kwargs)
    finally:
        _scope.ordered_argument = previous


@fail_safe(NAME)
def _ordered_dict_call(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable(OrderedDict).call_function(tx, [m], kwargs)`` (2.7+; 2.5-2.6 reach
    ``call_custom_dict``)."""
    if len(args) != 3 or not args[1]:
        return DEFER
    _refuse(args[1][0], True, "OrderedDict(...)", "construct")
    return DEFER


@fail_safe(NAME)
def _subclass_or(wrapped, instance, args, kwargs):
    """``UserDefinedDictVariable.call_method(tx, "__or__", [other], {})``: ``m | other``."""
    if len(args) != 4 or kwargs or len(args[2]) != 1:
        return DEFER
    cls = type(vars(instance).get("value"))
    if cls in _BUILTIN:
        return DEFER  # an OrderedDict passed in (2.13 tracks it as a user dict): Dynamo's own operator
    if _ordered(cls) and static_lookup(cls, "__or__") is static_lookup(collections.OrderedDict, "__or__"):
        graph_break("merge of a dict subclass", f"{cls.__qualname__} | ...",
                    "OrderedDict.__or__ builds type(m)(m) (its keys()); Dynamo builds an OrderedDict of the storage")
    if static_lookup(cls, "__or__") is not static_lookup(dict, "__or__"):
        return DEFER  # the class's own operator: Dynamo inlines it
    other = args[2][0]
    tracker = realize(other)
    try:
        other_type = tracker.python_type()
    except Exception:  # noqa: BLE001
        return DEFER
    if _ordered(other_type):
        graph_break("merge of a dict subclass", f"{cls.__qualname__} | OrderedDict",
                    "dict.__or__ of the left operand gives a dict; Dynamo builds an OrderedDict")
    _refuse(instance, False, f"{cls.__qualname__} | ...", "or")
    _refuse(other, False, f"{cls.__qualname__} | ...", "or")
    return DEFER


@fail_safe(NAME)
def _not_a_constant(wrapped, instance, args, kwargs):
    """``CustomizedDictVariable.is_python_constant()`` (2.5-2.6: an ``OrderedDict`` subclass built in the frame):
    False. Its ``as_python_constant()`` is a plain ``dict``, so Dynamo's constant folds (``d | o``, which
    ``call_or_`` reaches before any tracker method) computed with a ``dict`` where CPython runs the subclass's
    ``OrderedDict`` operators (``{} | o`` is a ``type(o)``)."""
    return False


@fail_safe(NAME)
def _dict_update(wrapped, instance, args, kwargs):
    """``ConstDictVariable.dict_update(tx, [m], kwargs)`` (2.15: what ``update``, ``|`` and ``|=`` call)."""
    if len(args) != 3 or len(args[1]) != 1:
        return DEFER
    try:
        receiver = instance.python_type()
    except Exception:  # noqa: BLE001
        return DEFER
    _refuse(args[1][0], _ordered(receiver), f"{getattr(receiver, '__name__', '?')}.update", "update")
    return DEFER


#: What CPython's ``OrderedDict.__or__``/``__ror__`` (``odict_or``) run on the subclass: its constructor and
#: ``update`` (``mutablemapping_update``: ``keys()``, ``[key]``, ``[key] = value``). A class defining none of
#: them (nor ``__getattribute__``, nor the operators) runs only ``OrderedDict``'s C code.
_ODICT_OR_READS = ("__or__", "__ror__", "__new__", "__init__", "update", "keys", "__iter__", "__getitem__",
                   "__setitem__", "__getattribute__")


def _plain_ordered(tracker) -> bool:
    """Is the tracker an instance of a plain ``OrderedDict`` subclass (see the module docstring)?"""
    cls = python_type(tracker)
    if not _ordered(cls) or cls is collections.OrderedDict or type(cls) is not type:
        return False
    value = vars(tracker).get("value")
    return type(value) is cls and not _instance_keys(value) and not any(_own(cls, n) for n in _ODICT_OR_READS)


@fail_safe(NAME)
def _ordered_or(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_or_(tx, a, b)`` (2.13+): ``o | d`` / ``d | o`` of a plain ``OrderedDict``
    subclass, as ``odict_or``: ``type(o)(a).update(b)``."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    tx, left, right = bound
    if is_lazy(left) or is_lazy(right):
        return DEFER  # Dynamo realizes a builtin's arguments before its handlers: not seen
    if _plain_ordered(left) and python_type(right) in (dict, collections.OrderedDict):
        kind = left
    elif python_type(left) is dict and _plain_ordered(right):
        kind = right  # dict.__or__ gives way: the subclass's __ror__ (odict_or) runs first in CPython
    else:
        return DEFER
    from torch._dynamo.variables import BuiltinVariable

    effects_begin()
    cls = BuiltinVariable(type).call_function(tx, [kind], {})
    new = cls.call_function(tx, [left], {})
    new.call_method(tx, "update", [right], {})
    return new


def _ordered_dict_inlines() -> bool:
    """2.7+: ``OrderedDict(m)`` inlines ``construct_dict`` without ``call_custom_dict``."""
    from torch._dynamo import polyfills

    return _dynamo_reads() != "baked" and hasattr(polyfills, "construct_dict")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`dict(m)`, `{**m}`, `d.update(m)`, `d | m`, `OrderedDict(m)`, `od.update(m)`, `od |= m`, `m | od`, '
             '`defaultdict(int, m)` of a dict subclass `m` with its own `keys`/`__iter__`/`__getitem__`/`items` '
             '(or an `OrderedDict` subclass) give other items or types than eager; 2.5-2.6: any dict subclass '
             'passed in gives the first call\'s values (tdcompat: a graph break)',
         '2.5–2.15',
         '(`>=2.5`)'),
    ),
    fixes="merges of a dict subclass (its own keys()/__iter__/__getitem__/items(), an OrderedDict subclass; any "
    "dict subclass on 2.5-2.6) silently differ from eager",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_custom_dict (DictBuiltinVariable from 2.12); "
    "torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method ('update', '__ior__', '__or__'), "
    "ConstDictVariable.dict_update (2.15), CustomizedDictVariable.is_python_constant (2.5-2.6); "
    "torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_function (OrderedDict), "
    "UserDefinedDictVariable.call_method ('__or__'); torch/_dynamo/polyfills/__init__.py: construct_dict",
    mirrors="none upstream yet (docs/upstream/dict-subclass-merge/): CPython's dict_merge fast path and "
    "mutablemapping_update for dict subclasses",
    torch=">=2.5",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_custom_dict", _call_custom_dict,
               params=("tx", "user_cls"), optional=True),
        Target("torch._dynamo.variables.builtin", "DictBuiltinVariable", "call_custom_dict", _call_custom_dict,
               params=("tx", "user_cls"), optional=True),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method",
               routed_gate(_dict_call_method, method_name_gate, frozenset({"update", "__ior__", "__or__"})),
               inherited=True, params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "dict_update", _dict_update,
               params=("tx", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.dicts", "CustomizedDictVariable", "is_python_constant", _not_a_constant,
               inherited=True, optional=True),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_function",
               routed_gate(_ordered_dict_call, class_call_gate, frozenset({collections.OrderedDict})),
               params=("tx", "args", "kwargs"), when=_ordered_dict_inlines),
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method",
               routed_gate(_subclass_or, method_name_gate, frozenset({"__or__"})),
               params=("tx", "name", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_or_", _ordered_or, params=("tx", "a", "b"),
               when=or_through_number_slots),
    ),
    summary="a merge of a dict subclass that Dynamo would read another way than CPython graph-breaks; on 2.13+ "
    "`o | d` / `d | o` of a plain OrderedDict subclass is a type(o), as CPython's odict_or builds it",
    proven_by="tests/test_dict_subclass_merge.py::test_without_the_patch_it_is_wrong",
    history=(
        ("2.5-2.6", "a dict subclass passed in is a `MutableMappingVariable`: `call_custom_dict` folds `m.items()` "
         "into unguarded constants (the first call's values); an `OrderedDict` subclass built in the frame folds "
         "`{} | o` over a plain dict; `defaultdict(int, m)`/`dd.update(m)` reached it once "
         "`defaultdict-construction` compiled the defaultdict"),
        ("2.7-2.9", "`construct_dict` runs the class's `__iter__`/`__getitem__`, never `keys()`"),
        ("2.10-2.12", "`construct_dict` reads `items()`; `update`/`|` read the storage, never `keys()`; `m | od` is "
         "an OrderedDict (from 2.9)"),
        ("2.13-2.14", "`update` (and `{**m}`, `|`, `|=`) calls `keys()` where CPython reads the storage; `o | d` "
         "and `d | o` of an OrderedDict subclass are a plain OrderedDict (tdcompat: a `type(o)`, as CPython, for a "
         "subclass that overrides nothing); of a `Counter` a plain dict (left to Dynamo)"),
        ("2.15", "`OrderedDict(m)`/`od.update(m)`/`od |= m` read the storage; `o | d` of an OrderedDict subclass "
         "is a plain dict (tdcompat: as on 2.13); `dd.update(m)` and other `m | d` paths that bypass "
         "`call_method` left to Dynamo"),
    ),
)
