"""``dd | d`` and ``d | dd`` with a ``defaultdict`` (torch 2.5-2.10).

Symptoms: ``dd | {"c": x}`` crashes the compile on 2.9-2.10 (``AssertionError`` in
``DefaultDictVariable.__init__``, also without ``fullgraph``); ``{"c": x} | dd`` is a plain ``dict`` on 2.8
(CPython: a ``defaultdict`` with ``dd``'s factory), silently. Measured on 2.8.0-2.10.0 for a ``defaultdict``
passed in; for one made in the frame, tdcompat's ``defaultdict-construction`` let frames reach these (a
graph break without it): 2.8's ``{...} | dd`` was then a wrong result and 2.9's ``dd | {...}`` a crash
(fresh measurement, never-worse). 2.11 is right. On 2.5-2.7 (where ``dict | dict`` is a graph break) ``{...} |
dd`` for a defaultdict made in the frame (which ``defaultdict-construction`` builds) was a plain ``dict``: an
introduced wrong result, found by fresh seed 791030739 on 2.7.1 (program 791033112092766), then measured on
2.5.1 and 2.6.0.

Root cause: ``ConstDictVariable.call_method("__or__")`` (torch/_dynamo/variables/dicts.py) clones the left
operand with ``user_cls=dict`` (2.9-2.10: ``DefaultDictVariable.__init__`` asserts ``user_cls is
defaultdict``) and never asks the right operand's ``__ror__`` (2.8: ``dict | defaultdict`` is a dict).

What the handler accepts: ``BuiltinVariable.call_or_(tx, a, b)`` where one operand is an exact
``DefaultDictVariable`` and the other an exact ``ConstDictVariable`` of a plain ``dict`` or another exact
``DefaultDictVariable`` (for ``dd | other``). Sound, from CPython's ``Modules/_collectionsmodule.c``:
``defaultdict.__or__(self, other)`` is ``new = self.copy(); new.update(other)`` (``copy`` keeps the factory),
and since ``defaultdict`` subclasses ``dict``, ``d | dd`` first tries ``dd.__ror__(d)``: ``new =
defaultdict(dd.default_factory, d); new.update(dd)``. Both are C-level merges that run no user code; the
result is a new ``defaultdict`` of the left items then the right ones, with that factory. The operands' keys
are guarded (what the result's keys are computed from). Everything else (an ``OrderedDict``, whose
``__or__`` wins over ``defaultdict.__ror__``; user mappings; dict subclasses) defers.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, is_plain_dict, merged_items, new_object_kwargs, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "defaultdict-or"


@fail_safe(NAME)
def _call_or(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_or_(tx, a, b)``."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    _tx, a, b = bound
    from torch._dynamo.variables.dicts import DefaultDictVariable

    a, b = realize(a), realize(b)
    if type(a) is DefaultDictVariable and (is_plain_dict(b) or type(b) is DefaultDictVariable):
        factory = a.default_factory  # defaultdict.__or__: self.copy() then update(other)
    elif is_plain_dict(a) and type(b) is DefaultDictVariable:
        factory = b.default_factory  # defaultdict.__ror__: defaultdict(factory, other) then update(self)
    else:
        return DEFER
    effects_begin()
    return DefaultDictVariable(merged_items(a, b), collections.defaultdict, factory, **new_object_kwargs())


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`dd | {...}` for a `defaultdict`: **the compile crashes** (`AssertionError`), also without `fullgraph`; "
         "`{...} | dd` **is a plain `dict`** (CPython: a `defaultdict` with `dd`'s factory)",
         "2.8–2.10",
         "(`<2.11`)"),
        ("`{...} | dd` for a `defaultdict` made in the frame: **a plain `dict`** (CPython: a `defaultdict`; reached "
         "since `defaultdict-construction` builds the defaultdict, a graph break before)",
         "2.5–2.7",
         "(`<2.11`)"),
    ),
    fixes="`dd | d` crashes the compile (AssertionError, 2.9-2.10) and `d | dd` is a plain dict (2.8) for a "
    "defaultdict dd (silently wrong / crash, torch 2.8-2.10; d | dd a plain dict on 2.5-2.7)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method('__or__'); "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_or_",
    mirrors="torch 2.11: a defaultdict's | keeps its type and factory (both orders)",
    torch="<2.11",
    fixed_upstream="2.11: defaultdict | dict and dict | defaultdict are defaultdicts",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_or_", _call_or,
               params=("tx", "a", "b")),
    ),
    requires=("torch._dynamo.variables.dicts:DefaultDictVariable",),
    summary="dd | d and d | dd with a defaultdict build a defaultdict with its factory, as CPython",
    history=(
        ("2.5-2.7", "`dict | dict` is a graph break, but `d | dd` with a defaultdict made in the frame (reached "
         "through `defaultdict-construction`) is a plain dict (silently wrong; fresh fuzz seed 791030739 on 2.7.1)"),
        ("2.8", "`d | dd` is a plain dict (silently wrong)"),
        ("2.9-2.10", "`dd | d`: `AssertionError` in `DefaultDictVariable.__init__` (clone with user_cls=dict)"),
        ("2.11+", "right"),
    ),
)
