"""``d.copy()``, ``dict(d)``, ``OrderedDict(d)`` of a dict (or set) passed in come back as the input itself
(torch 2.5).

Symptom: ``e = d.copy(); e["z"] = 1; return e`` where ``d`` is a dict (``OrderedDict``, ``defaultdict``)
passed in returns ``d``'s items without ``z`` (the copy's changes are lost), and a copy stored anywhere
or held across a graph break is rebuilt as the input. Silently wrong, also without ``fullgraph``;
measured on 2.5.1 (2.6 is right). ``e = dict(d); e["z"] = 1; return e`` and ``OrderedDict(d)`` likewise (the
result is the input, of the input's type, without ``z``).

Root cause: ``ConstDictVariable.call_method("copy")`` (torch/_dynamo/variables/dicts.py) builds the copy
with ``self.clone(items=..., mutable_local=MutableLocal())``, keeping the input's ``source``: Dynamo then
rebuilds the copy by loading that source, i.e. the input object, as it was on entry. 2.6 clears the source
(``source=None``). ``BuiltinVariable.call_custom_dict`` (``dict(d)``, ``OrderedDict(d)``) clones the
argument the same way (``arg.clone(user_cls=user_cls, mutable_local=MutableLocal())``).

What the handler does: for ``copy`` with no argument on exactly a ``dict``, ``OrderedDict``,
``defaultdict`` or ``set`` tracker that has a source, the copy 2.6 makes: the same clone without the source,
so that it is rebuilt from its own items (a new container of the tracker's type, as ``dict.copy``,
``OrderedDict.copy``, ``defaultdict.copy`` and ``set.copy`` return). Everything else (any other method, a
frozenset, a user mapping's tracker; a copy of a container made in the frame, which has no source) goes
straight to Dynamo. A ``set`` passed in had the same bug (``s.copy(); t.add(v)`` returned the input).
And ``call_custom_dict(tx, user_cls, d)`` with no keywords, ``user_cls`` exactly ``dict`` or ``OrderedDict``
and ``d`` exactly a ``ConstDictVariable`` (a ``dict`` or ``OrderedDict``) with a source: a new dict of
``user_cls`` holding ``d``'s items (``dict(d)``/``OrderedDict(d)`` of an exact dict copy its items and run no
user code; 2.5 guards a dict input's keys when it wraps it). A ``defaultdict`` argument is
``defaultdict-as-dict``'s; everything else goes on to Dynamo.
"""

from __future__ import annotations

import collections

from ..dynamo_api import new_object_kwargs, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-copy-source"


def _copied_types() -> tuple:
    """The trackers whose ``copy`` is a new container of the same type holding the same items:
    ``dict``/``OrderedDict`` (``ConstDictVariable``), ``defaultdict`` and ``set`` (``SetVariable``, a dict of
    its items). Not a frozenset (``copy`` returns the object itself) nor a user mapping tracker
    (``CustomizedDictVariable``: its class's own constructor would run in CPython)."""
    from torch._dynamo.variables.dicts import ConstDictVariable, DefaultDictVariable, SetVariable

    return (ConstDictVariable, DefaultDictVariable, SetVariable)


@fail_safe(NAME)
def _copy(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "copy", [], {})`` of a dict passed in."""
    if len(args) != 4 or kwargs:
        return DEFER
    _tx, name, call_args, call_kwargs = args
    if name != "copy" or call_args or call_kwargs or getattr(instance, "source", None) is None:
        return DEFER
    if type(instance) not in _copied_types():
        return DEFER
    effects_begin()
    return instance.clone(items=dict(instance.items), source=None, **new_object_kwargs())


@fail_safe(NAME)
def _call_custom_dict(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_custom_dict(tx, user_cls, d)`` (a staticmethod): ``dict(d)``/``OrderedDict(d)``."""
    if len(args) != 3 or kwargs or (args[1] is not dict and args[1] is not collections.OrderedDict):
        return DEFER
    from torch._dynamo.variables.dicts import ConstDictVariable

    arg = realize(args[2])  # Dynamo's own path realizes it too
    if type(arg) is not ConstDictVariable or getattr(arg, "source", None) is None:
        return DEFER
    effects_begin()
    return ConstDictVariable(dict(arg.items), args[1], **new_object_kwargs())


#: On ``ConstDictVariable.call_method`` (every dict method Dynamo traces): only ``copy``
#: reaches the handler, through the name gate it shares with the other dict-method patches.
_call_method_gate = routed_gate(_copy, method_name_gate, frozenset({'copy'}))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`e = d.copy(); e['z'] = 1; return e` (or `e = dict(d)`, `OrderedDict(d)`) of a dict (or set) passed in "
         "**returns the input's items without `z`** (the copy is rebuilt as the input)",
         "2.5",
         "(`<2.6`)"),
    ),
    fixes="`d.copy()`, `dict(d)`, `OrderedDict(d)` of a dict passed in are rebuilt as the input after the frame: the "
    "copy's changes are lost (silently wrong, torch 2.5)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method (the copy branch); "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_custom_dict (the ConstDictVariable clone)",
    mirrors="torch 2.6: the copy is cloned with source=None",
    torch="<2.6",
    fixed_upstream="2.6: ConstDictVariable.call_method('copy') clears the source",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_custom_dict", _call_custom_dict,
               params=("tx", "user_cls")),
    ),
    summary="d.copy(), dict(d), OrderedDict(d) of a dict passed in are a new dict, not the input rebuilt",
    history=(
        ("2.5", "`copy()`, `dict(d)`, `OrderedDict(d)` keep the input's source: the copy is rebuilt as the input "
         "(its changes lost)"),
        ("2.6+", "right (`source=None`)"),
    ),
)
