"""``dict(dd)`` / ``OrderedDict(dd)`` of a ``defaultdict`` crashes Dynamo (torch 2.5-2.6).

Symptom: in compiled code ``dict(d)`` or ``collections.OrderedDict(d)`` where ``d`` is a
``collections.defaultdict`` (passed in or made in the frame) raises ``AssertionError`` out of
``torch.compile``, also without ``fullgraph`` (the user's program stops). Measured on 2.5.1 and 2.6.0;
2.7 is right. ``builtin-subclass-truth`` removes graph breaks earlier in such frames, so without this
patch it lets frames reach the crash that ran eagerly before (fuzzer base 617587387756605 on 2.6.0,
programs 617587387756901, ...58191, ...58863).

Root cause: ``BuiltinVariable.call_custom_dict`` (torch/_dynamo/variables/builtin.py) builds
``dict(arg)`` of any ``ConstDictVariable`` as ``arg.clone(user_cls=dict, ...)``; for a
``DefaultDictVariable`` that re-runs ``DefaultDictVariable.__init__``, which asserts
``user_cls is collections.defaultdict``. Upstream replaced the whole function by the
``polyfills.construct_dict`` polyfill in 2.7 (pytorch/pytorch#144342).

What the handler accepts: ``call_custom_dict(tx, user_cls, arg)`` with no keywords, where ``arg`` is
exactly a ``DefaultDictVariable`` (once realized, as Dynamo's own ``isinstance`` tests realize it) and
``user_cls`` is not ``defaultdict``. It returns a new
``ConstDictVariable`` of ``user_cls`` holding ``arg``'s items in their order. That is sound because it
is the very result Dynamo already builds for ``dict(plain_dict)`` (the same items, guarded as Dynamo
guards them for a ``defaultdict`` input), and CPython's ``dict(dd)`` / ``OrderedDict(dd)`` copy the
items and nothing else (the factory is not part of a plain ``dict``; ``dict.__init__`` iterates
``keys()`` and reads items without calling ``__missing__``). Everything else defers.
"""

from __future__ import annotations

import collections

from ..dynamo_api import new_object_kwargs
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "defaultdict-as-dict"


@fail_safe(NAME)
def _call_custom_dict(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_custom_dict(tx, user_cls, *args, **kwargs)`` (a staticmethod)."""
    if len(args) != 3 or kwargs:
        return DEFER
    _tx, user_cls, arg = args
    from torch._dynamo.variables.dicts import ConstDictVariable, DefaultDictVariable

    arg = arg.realize()  # an input still lazy (``OrderedDict(d)``): Dynamo's own path realizes it too
    if type(arg) is not DefaultDictVariable or user_cls is collections.defaultdict:
        return DEFER
    effects_begin()
    return ConstDictVariable(dict(arg.items), user_cls, **new_object_kwargs())


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`dict(d)` / `collections.OrderedDict(d)` of a `collections.defaultdict` (passed in or made '
             'in the frame) **crashes the compile** (`AssertionError`), also without `fullgraph`: the '
             "user's program stops",
         '2.5–2.6',
         '(`<2.7`)'),
    ),
    fixes="`dict(d)` / `OrderedDict(d)` of a `collections.defaultdict` raises `AssertionError` out of "
    "torch.compile, also without fullgraph (torch <2.7)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_custom_dict",
    mirrors="pytorch/pytorch#144342 ([dynamo][dicts] Consolidate dict(..) construction)",
    torch="<2.7",
    fixed_upstream="2.7: pytorch/pytorch#144342",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_custom_dict", _call_custom_dict,
               params=("tx", "user_cls")),
    ),
    requires=("torch._dynamo.variables.dicts:DefaultDictVariable",
              "torch._dynamo.variables.dicts:ConstDictVariable"),
    summary="dict(dd) / OrderedDict(dd) of a defaultdict copies its items instead of crashing",
    history=(
        ("2.5-2.6", "`dict(dd)` / `OrderedDict(dd)`: `AssertionError` in `DefaultDictVariable.__init__` "
         "(`call_custom_dict` clones the defaultdict tracker with `user_cls=dict`), out of torch.compile"),
        ("2.7+", "right (`dict(...)` is the `construct_dict` polyfill)"),
    ),
)
