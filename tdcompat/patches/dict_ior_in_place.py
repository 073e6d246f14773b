"""``d |= other`` builds a new dict instead of updating ``d`` (torch 2.8), or is a graph break (2.5-2.7).

Symptom: ``d |= {"c": x}`` in compiled code, for a dict passed in (or any dict another name refers to):
after the call the caller's dict has no ``c``, and an alias made before (``e = d``) does not see it
either; the frame's own name ``d`` is right. Silently wrong, measured on 2.8.0 (2.9 updates in place).
On 2.5-2.7 any ``d |= other`` of dicts is a graph break (``Unsupported: builtin: ior`` on 2.5-2.6,
``Failed to trace builtin operator`` on 2.7; case ``dict_ior_new``).

Root cause: torch/_dynamo/variables/builtin.py: ``BuiltinVariable.call_ior = call_or_`` on 2.8, which sends
``d |= other`` to ``ConstDictVariable.call_method("__or__")``: a new dict tracker, stored back into the
name ``d`` by ``INPLACE``/``BINARY_OP``, and no mutation of ``d`` recorded. 2.7 has the same alias of a
``call_or_`` without a dict branch; 2.5-2.6 have no ``call_ior`` (installed here as an added method).

What the handler accepts: ``BuiltinVariable.call_ior(tx, a, b)`` where ``a`` is an exact
``ConstDictVariable`` of a plain ``dict`` or an ``OrderedDict``, or an exact ``DefaultDictVariable``
(``defaultdict`` inherits ``dict.__ior__``), and ``b`` an exact ``ConstDictVariable`` (a
dict or an ``OrderedDict``, not a subclass with its own methods). It runs Dynamo's own
``a.update(b)`` (which records the mutation of ``a`` and guards ``b``'s keys) and returns ``a``. Sound:
``dict.__ior__(self, other)`` is ``dict_update_arg(self, other)`` then ``return self``, a C-level merge
that calls no user code for a dict argument (``OrderedDict.__ior__`` is ``self.update(other); return
self``), i.e. ``update`` with the same keys in the same order. Everything else (an iterable of pairs, a
user mapping, a dict subclass, a ``defaultdict`` on the right) defers to Dynamo.

The same alias made ``s |= other`` on a ``set`` build a new set (2.5-2.6 map ``ior`` to ``or_``):
the caller's set and aliases kept the old items, silently, on 2.5-2.8 (case ``set_ior_input``). Accepted:
an exact ``SetVariable`` of a ``set`` and, on the right, a ``set`` or ``frozenset`` tracker, which is all
``set.__ior__`` takes (``set_update_internal``, no user code for those; the hashes are Dynamo's keys
already); Dynamo's own ``s.update(other)``, then ``s``.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, is_mutable, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dict-ior-in-place"

_PLAIN = (dict, collections.OrderedDict)


def _dict_in_place(a, b) -> bool:
    from torch._dynamo.variables import ConstDictVariable
    from torch._dynamo.variables.dicts import DefaultDictVariable

    plain = type(a) is ConstDictVariable and getattr(a, "user_cls", None) in _PLAIN
    if not plain and type(a) is not DefaultDictVariable:
        return False
    return type(b) is ConstDictVariable and getattr(b, "user_cls", None) in _PLAIN


def _set_in_place(a, b) -> bool:
    """``set |= set`` / ``set |= frozenset``: ``set.__ior__`` takes only those (any other operand:
    ``NotImplemented``, then ``a | b`` or ``b.__ror__``, a new object)."""
    from torch._dynamo.variables.dicts import FrozensetVariable, SetVariable

    if type(a) is not SetVariable or type(b) not in (SetVariable, FrozensetVariable):
        return False
    return a.python_type() is set and b.python_type() in (set, frozenset)


@fail_safe(NAME)
def _call_ior(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_ior(tx, a, b)``."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    tx, a, b = bound
    a, b = realize(a), realize(b)
    if not (_dict_in_place(a, b) or _set_in_place(a, b)) or not is_mutable(a):
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
         "(`<2.9`)"),
        ("`s |= other` for a **set** passed in (or one another name refers to): **the caller's set is not "
         "updated** (the frame rebinds `s` to a new set)",
         "2.5–2.8",
         "(`<2.9`)"),
        ("`d |= other` of two dicts: `Unsupported: builtin: ior` / `Failed to trace builtin operator` (an error "
         "under `fullgraph=True`)",
         "2.5–2.7",
         "(`<2.9`): Dynamo's `d.update(other)`, then `d`"),
    ),
    fixes="`d |= other` does not update a dict passed in (or an alias of it): the frame rebinds d to a new "
    "dict (silently wrong, torch 2.8); a graph break on 2.5-2.7; s |= other on a set passed in (2.5-2.8)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_ior (= call_or_ on 2.8)",
    mirrors="torch 2.9: ConstDictVariable.call_method('__ior__') updates in place",
    torch="<2.9",
    fixed_upstream="2.9: d |= other updates d in place",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_ior", _call_ior,
               params=("tx", "a", "b"), optional=True),  # 2.7-2.8: call_ior = call_or_
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_ior", _call_ior,
               added=True, optional=True),  # 2.5-2.6: no call_ior at all
    ),
    summary="d |= other on a plain dict (or a set) updates it in place, as dict.__ior__ / set.__ior__",
    history=(
        ("2.5-2.6", "no `call_ior`: `d |= other` of dicts is `Unsupported: builtin: ior`"),
        ("2.7", "`call_ior = call_or_`, which has no dict branch: `Failed to trace builtin operator`"),
        ("2.8", "`call_ior = call_or_`: `d |= other` builds a new dict; the caller's dict and aliases keep "
         "the old items (silently wrong)"),
        ("2.9+", "right: `__ior__` updates in place"),
    ),
)
