"""``d |= other`` builds a new dict instead of updating ``d`` (torch 2.8).

Symptom: ``d |= {"c": x}`` in compiled code, for a dict passed in (or any dict another name refers to):
after the call the caller's dict has no ``c``, and an alias made before (``e = d``) does not see it
either; the frame's own name ``d`` is right. Silently wrong, measured on 2.8.0 (2.5-2.7 graph-break on
``dict | dict``; 2.9 updates in place).

Root cause: torch/_dynamo/variables/builtin.py: ``BuiltinVariable.call_ior = call_or_`` on 2.8, which sends
``d |= other`` to ``ConstDictVariable.call_method("__or__")``: a new dict tracker, stored back into the
name ``d`` by ``INPLACE``/``BINARY_OP``, and no mutation of ``d`` recorded.

What the handler accepts: ``BuiltinVariable.call_ior(tx, a, b)`` where ``a`` is an exact
``ConstDictVariable`` of a plain ``dict`` or an ``OrderedDict``, or an exact ``DefaultDictVariable``
(``defaultdict`` inherits ``dict.__ior__``), and ``b`` an exact ``ConstDictVariable`` (a
dict or an ``OrderedDict``, not a subclass with its own methods). It runs Dynamo's own
``a.update(b)`` (which records the mutation of ``a`` and guards ``b``'s keys) and returns ``a``. Sound:
``dict.__ior__(self, other)`` is ``dict_update_arg(self, other)`` then ``return self``, a C-level merge
that calls no user code for a dict argument (``OrderedDict.__ior__`` is ``self.update(other); return
self``), i.e. ``update`` with the same keys in the same order. Everything else (an iterable of pairs, a
user mapping, a dict subclass, a ``defaultdict`` on the right) defers to Dynamo.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dict-ior-in-place"

_PLAIN = (dict, collections.OrderedDict)


@fail_safe(NAME)
def _call_ior(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_ior(tx, a, b)``."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    tx, a, b = bound
    from torch._dynamo.variables import ConstDictVariable
    from torch._dynamo.variables.dicts import DefaultDictVariable

    plain = type(a) is ConstDictVariable and getattr(a, "user_cls", None) in _PLAIN
    if not plain and type(a) is not DefaultDictVariable:
        return DEFER
    b = b.realize() if hasattr(b, "realize") else b
    if type(b) is not ConstDictVariable or getattr(b, "user_cls", None) not in _PLAIN:
        return DEFER
    if not a.is_mutable():
        return DEFER
    effects_begin()
    a.call_method(tx, "update", [b], {})
    return a


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d |= other` for a dict passed in (or one another name refers to): **the caller's dict is not "
         "updated** (the frame rebinds `d` to a new dict)",
         "2.8",
         "(`>=2.8,<2.9`)"),
    ),
    fixes="`d |= other` does not update a dict passed in (or an alias of it): the frame rebinds d to a new "
    "dict (silently wrong, torch 2.8)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_ior (= call_or_ on 2.8)",
    mirrors="torch 2.9: ConstDictVariable.call_method('__ior__') updates in place",
    torch=">=2.8,<2.9",
    fixed_upstream="2.9: d |= other updates d in place",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_ior", _call_ior,
               params=("tx", "a", "b")),
    ),
    requires=("torch._dynamo.variables:ConstDictVariable.is_mutable",),
    summary="d |= other on a plain dict updates d in place, as dict.__ior__",
    history=(
        ("2.5-2.7", "not this gap: `dict | dict` and `|=` are a graph break"),
        ("2.8", "`call_ior = call_or_`: `d |= other` builds a new dict; the caller's dict and aliases keep "
         "the old items (silently wrong)"),
        ("2.9+", "right: `__ior__` updates in place"),
    ),
)
