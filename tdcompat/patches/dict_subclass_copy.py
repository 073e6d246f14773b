"""``o.copy()`` of a dict subclass is another type than CPython's (2.5-2.15).

Symptom (silently wrong, measured on 2.5.1-2.15.0, ``fullgraph=True``, two calls): for ``class O(OrderedDict):
pass``, ``o.copy()`` of an ``o`` passed in is a plain ``OrderedDict`` (2.7-2.14) or ``dict`` (2.15), and of one
built in the frame on 2.7-2.8 and 2.12-2.15 too (2.9-2.11: an ``O`` in the frame, a ``dict`` once returned or
stored); eager gives an ``O``. A subclass with its own ``__setitem__``
or ``__init__`` gets a copy that skipped them (2.5-2.15). ``D(a=1).copy()`` of a plain ``dict`` subclass built
in the frame is a ``D`` on 2.9-2.11 (eager: a ``dict``); ``dd.copy()`` of a ``defaultdict`` subclass passed in is
a plain ``defaultdict`` on 2.15.

Root cause: Dynamo answers ``copy`` from the storage's tracker (``ConstDictVariable.call_method('copy')``, 2.7+
through ``UserDefinedDictVariable.call_method``; 2.5-2.6 ``CustomizedDictVariable``), which keeps the builtin
type or the tracker's ``user_cls``. CPython (``Objects/odictobject.c: odict_copy``) builds ``type(o)()`` and
stores each key with ``PyObject_SetItem(copy, key, o[key])``; ``dict.copy`` (``PyDict_Copy``) gives an exact
``dict`` of the storage; ``defaultdict.copy`` (``defdict_copy``) calls ``type(dd)(dd.default_factory, dd)``.

What the handler accepts: ``copy`` with no arguments on a strict subclass of ``dict``, ``OrderedDict`` or
``defaultdict`` whose ``copy`` is the builtin's and whose instance holds no ``copy`` of its own. It lets Dynamo
copy the storage first (a break there is Dynamo's, as without tdcompat), then:

- the copy already has CPython's type (``dict``; ``type(o)``) and Dynamo writes it back as that type: it is
  Dynamo's answer, returned (2.9-2.11's copy of an ``OrderedDict`` subclass built in the frame reads as
  ``type(o)`` but is written back as a ``dict``: rebuilt as below);
- a *plain* ``OrderedDict`` subclass (itself and its bases up to ``OrderedDict`` define none of
  :data:`_ODICT_COPY_RUNS`, metaclass ``type``): ``type(o)()`` then ``.update(copy)`` through Dynamo's own class
  call and ``update``. For such a class ``odict_copy`` runs only ``OrderedDict``'s C code, so the result is a
  ``type(o)`` holding the storage's items in its order, as Dynamo's copy holds them;
- a *plain* ``dict`` subclass (none of :data:`_DICT_READS`): ``dict(copy)`` through Dynamo's own ``dict()``;
- anything else (an ``OrderedDict`` subclass with its own constructor, ``__setitem__``, ...; a ``defaultdict``
  subclass, which Dynamo cannot build): a graph break, before Dynamo's copy for an ``OrderedDict`` subclass
  that is not plain (CPython runs the class's own code there: Dynamo's copy skips it on every release).

The class is read statically and Dynamo guards the type of every input it reads a method of; a class changed
later meets the same test. Every other call is Dynamo's.
"""

from __future__ import annotations

import collections

from ..dict_classes import builtin_base, instance_attribute, overrides, overrides_any, python_type
from ..dynamo_api import bind_args, graph_break
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-subclass-copy"

#: What CPython's ``odict_copy`` (and tdcompat's rebuild) runs on an ``OrderedDict`` subclass: the class's
#: constructor, ``o[key]``, ``copy[key] = value``; ``update`` is how the rebuild stores, and a class's own
#: ``__getattribute__`` answers ``o.copy`` itself.
_ODICT_COPY_RUNS = ("__new__", "__init__", "__getitem__", "__setitem__", "update", "__getattribute__")

#: What Dynamo's ``dict(copy)`` may read of a ``dict`` subclass tracker (``dict-subclass-merge``'s list).
_DICT_READS = ("keys", "__iter__", "__getitem__", "items", "__getattribute__")


def _refuse(cls: type, why: str) -> None:
    graph_break("copy of a dict subclass", f"{cls.__qualname__}.copy()", why)


def _rebuilt_as_a_dict(result) -> bool:
    """Is ``result`` Dynamo's bare dict tracker holding a subclass as its class? 2.9-2.11's copy of an
    ``OrderedDict`` subclass built in the frame is one: ``type(c)`` reads the subclass in the frame, but
    ``ConstDictVariable.reconstruct`` writes only ``OrderedDict`` or a plain ``dict`` back (returned or
    stored, the copy is a ``dict``)."""
    from torch._dynamo.variables.dicts import ConstDictVariable

    kind = getattr(result, "user_cls", dict)
    return type(result) is ConstDictVariable and kind not in (dict, collections.OrderedDict)


@fail_safe(NAME)
def _copy(wrapped, instance, args, kwargs):
    """``UserDefinedDictVariable.call_method(tx, "copy", [], {})`` (2.7+) / ``CustomizedDictVariable`` (2.5-2.6)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if name != "copy" or call_args or call_kwargs:
        return DEFER
    cls = python_type(instance)
    if cls is None or not issubclass(cls, dict):
        return DEFER
    base = builtin_base(cls)
    if cls is base or overrides(cls, base, "copy") or instance_attribute(vars(instance).get("value"), "copy"):
        return DEFER  # the builtin itself, or the class's (instance's) own copy: Dynamo inlines it
    ordered = base is collections.OrderedDict
    if ordered and overrides_any(cls, base, _ODICT_COPY_RUNS):
        _refuse(cls, "OrderedDict.copy runs the class's own constructor, __getitem__ and __setitem__; "
                     "Dynamo copies the storage")
    result = wrapped(*args, **kwargs)
    if python_type(result) is (dict if base is dict else cls) and not _rebuilt_as_a_dict(result):
        return result
    if base is collections.defaultdict:
        _refuse(cls, "defaultdict.copy builds type(dd)(dd.default_factory, dd); Dynamo builds a defaultdict")
    if base is dict and overrides_any(cls, base, _DICT_READS):
        _refuse(cls, "dict.copy gives a dict of the storage; Dynamo's copy keeps the subclass")
    from torch._dynamo.variables import BuiltinVariable

    effects_begin()  # from here a failure graph-breaks instead of running the original twice
    if base is dict:
        return BuiltinVariable(dict).call_function(tx, [result], {})
    new = BuiltinVariable(type).call_function(tx, [instance], {}).call_function(tx, [], {})
    new.call_method(tx, "update", [result], {})
    return new


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`o.copy()` of an `OrderedDict` subclass is a plain `OrderedDict` or `dict` (eager: `type(o)`); of a "
         "`dict` subclass built in the frame a `type(o)` (eager: `dict`, 2.9-2.11); of a `defaultdict` subclass a "
         "`defaultdict` (2.15)", "2.5–2.15", "(`>=2.5`)"),
    ),
    fixes="`o.copy()` of a dict, OrderedDict or defaultdict subclass silently gives another type (or skips the "
    "class's own __init__/__setitem__) than eager",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedDictVariable.call_method ('copy'); "
    "torch/_dynamo/variables/dicts.py: CustomizedDictVariable.call_method (2.5-2.6)",
    mirrors="none upstream yet (docs/upstream/dict-subclass-copy/): CPython's odict_copy, PyDict_Copy, defdict_copy",
    torch=">=2.5",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method",
               routed_gate(_copy, method_name_gate, frozenset({"copy"})), inherited=True,
               params=("tx", "name", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.dicts", "CustomizedDictVariable", "call_method",
               routed_gate(_copy, method_name_gate, frozenset({"copy"})), inherited=True,
               params=("tx", "name", "args", "kwargs"), optional=True),
    ),
    proven_by="tests/test_dict_subclass_copy.py::test_without_the_patch_a_setitem_subclass_built_in_the_frame_is_wrong",
    summary="`o.copy()` of a dict subclass has CPython's type (a plain OrderedDict subclass is rebuilt as "
    "`type(o)`); a copy Dynamo would get wrong otherwise graph-breaks",
    history=(
        ("2.5-2.6", "a subclass passed in is a `MutableMappingVariable` whose `copy` breaks; built in the frame, "
         "an `OrderedDict` subclass with its own `__setitem__` is copied without it"),
        ("2.7-2.8", "`copy` is the storage's: a plain `OrderedDict` (inputs and objects built in the frame)"),
        ("2.9-2.11", "inputs as on 2.7; built in the frame the copy keeps the class in the frame (wrong, `D`, "
         "eager `dict`, for a `dict` subclass), but an `OrderedDict` subclass's copy comes back a `dict`"),
        ("2.12-2.14", "as on 2.7-2.8: a plain `OrderedDict`"),
        ("2.15", "a plain `dict` for an `OrderedDict` subclass; a `defaultdict` for a `defaultdict` subclass "
         "passed in"),
    ),
)
