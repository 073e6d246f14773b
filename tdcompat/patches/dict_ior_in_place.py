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
self``), i.e. ``update`` with the same keys in the same order.

An iterable of pairs on the right (``d |= [("k", v)]``, ``d |= other.items()``, ``d |= zip(ks, vs)``, a
generator): a graph break on 2.5-2.8 (an internal error on 2.8: ``unsupported operand type(s) for |``), and
**silently wrong on 2.5-2.7 when both operands are constants**: Dynamo folds ``operator.ior`` over
``as_python_constant()`` copies, so the name ``d`` gets the merged copy and the caller's dict and every alias
keep the old items (case ``dict_ior_constant_pairs``). Accepted: an exact list or tuple of exact 2-tuples or
2-lists, a dict's items view, and the iterators ``tdcompat.dict_pairs.is_lazy_iterator`` accepts (stepped one
item at a time, each pair stored before the next is drawn, as ``PyDict_MergeFromSeq2`` does: a generator
reading ``d`` sees it grow), only where no list iterator can hold a generator's items computed ahead
(``generators_step_lazily``; on 2.5-2.6 ``dict-update-drained-generator`` marks those, and ``d |= marked``
graph-breaks). An item that is no exact pair graph-breaks where it is drawn. ``a.__ior__(b)`` spelled out
(``ConstDictVariable.call_method("__ior__")``, unsupported on 2.5-2.8) takes the same operands and returns
``a``. Everything else (a user mapping, a dict subclass, a ``defaultdict`` on the right, a ``keys()`` view, a
string or a number) defers to Dynamo.

The same alias made ``s |= other`` on a ``set`` build a new set (2.5-2.6 map ``ior`` to ``or_``):
the caller's set and aliases kept the old items, silently, on 2.5-2.8 (case ``set_ior_input``). Accepted:
an exact ``SetVariable`` of a ``set`` and, on the right, a ``set`` or ``frozenset`` tracker, which is all
``set.__ior__`` takes (``set_update_internal``, no user code for those; the hashes are Dynamo's keys
already); Dynamo's own ``s.update(other)``, then ``s``.
"""

from __future__ import annotations

import collections

from ..dict_pairs import generators_step_lazily, holds_drained_generator, is_lazy_iterator, known_pairs, store_lazily
from ..dynamo_api import abandon_frame, bind_args, is_mutable, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

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


def _merge_pairs(tx, a, b) -> bool:
    """``a |= b`` for an iterable of pairs ``b`` (CPython: ``PyDict_MergeFromSeq2`` for a ``dict``, the same
    loop in ``mutablemapping_add_pairs`` for an ``OrderedDict``: each item a sequence of two, stored as
    ``a[key] = value`` before the next is drawn; see ``tdcompat.dict_pairs``). False when ``b`` is none the
    handler knows."""
    def store(key, value):
        a.call_method(tx, "__setitem__", [key, value], {})

    pairs = known_pairs(tx, b)
    if pairs is not None:
        effects_begin()
        for key, value in pairs:
            store(key, value)
        return True
    if not (is_lazy_iterator(b) and generators_step_lazily()):  # Dynamo would break here: no list iterator
        return False                                               # of a generator run ahead may pass
    effects_begin()
    store_lazily(tx, a, b, store, NAME)
    return True


def _in_place(tx, a, b):
    """``a`` after ``a |= b`` in the trace, or DEFER for operands this patch does not take."""
    from torch._dynamo.variables import ConstDictVariable
    from torch._dynamo.variables.dicts import DefaultDictVariable

    if not is_mutable(a):
        return DEFER
    if _dict_in_place(a, b) or _set_in_place(a, b):
        effects_begin()
        a.call_method(tx, "update", [b], {})
        return a
    plain = type(a) is ConstDictVariable and getattr(a, "user_cls", None) in _PLAIN
    if not (plain or type(a) is DefaultDictVariable):
        return DEFER
    if holds_drained_generator(b):  # marked by dict-update-drained-generator (2.5-2.6): its items predate the stores
        abandon_frame(tx, "dict |= a generator Dynamo already ran", f"{NAME}: {a} |= {b}",
                      "the generator's items were computed before the update (torch <2.7)")
    return a if _merge_pairs(tx, a, b) else DEFER


@fail_safe(NAME)
def _call_ior(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_ior(tx, a, b)``."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    tx, a, b = bound
    return _in_place(tx, realize(a), realize(b))


@fail_safe(NAME)
def _dunder_ior(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "__ior__", [b], {})``: ``a.__ior__(b)`` spelled out (upstream's
    ``test_binop_ior_iterable``), the same operands as ``a |= b``; any other is Dynamo's."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if name != "__ior__" or call_kwargs or len(call_args) != 1:
        return DEFER
    return _in_place(tx, instance, realize(call_args[0]))


#: On ``ConstDictVariable.call_method`` (every dict and set method Dynamo traces): only ``__ior__`` reaches the
#: handler, through the name gate it shares with the other dict-method patches.
_dunder_ior_gate = routed_gate(_dunder_ior, method_name_gate, frozenset({"__ior__"}))


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
        ("`d |= [(k, v), ...]` of constants: **the caller's dict is not updated** (the operator folded over "
         "copies); with other pairs, `zip(...)`, a generator or `d.__ior__(b)`: a graph break or "
         "`InternalTorchDynamoError: unsupported operand type(s) for |`",
         "2.5–2.7 (wrong), 2.5–2.8 (break)",
         "(`<2.9`): each pair stored in order, a lazy iterator stepped between stores"),
    ),
    fixes="`d |= other` does not update a dict passed in (or an alias of it): the frame rebinds d to a new "
    "dict (silently wrong, torch 2.8; 2.5-2.7 for constant pairs); a graph break on 2.5-2.7; d |= pairs / "
    "zip / a generator and d.__ior__(b) unsupported (2.5-2.8); s |= other on a set passed in (2.5-2.8)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_ior (= call_or_ on 2.8)",
    mirrors="torch 2.9: ConstDictVariable.call_method('__ior__') updates in place",
    torch="<2.9",
    fixed_upstream="2.9: d |= other updates d in place",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_ior", _call_ior,
               params=("tx", "a", "b"), optional=True),  # 2.7-2.8: call_ior = call_or_
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_ior", _call_ior,
               added=True, optional=True),  # 2.5-2.6: no call_ior at all
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _dunder_ior_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    summary="d |= other (a dict, pairs, a lazy iterator of pairs) on a plain dict, or a set, updates it in place, "
    "as dict.__ior__ / set.__ior__",
    history=(
        ("2.5-2.6", "no `call_ior`: `d |= other` of dicts is `Unsupported: builtin: ior`; constant pairs are "
         "folded over copies (the caller's dict keeps its items)"),
        ("2.7", "`call_ior = call_or_`, which has no dict branch: `Failed to trace builtin operator`; the same "
         "folding"),
        ("2.8", "`call_ior = call_or_`: `d |= other` builds a new dict; the caller's dict and aliases keep "
         "the old items (silently wrong); pairs: `InternalTorchDynamoError`"),
        ("2.9+", "right: `__ior__` updates in place"),
    ),
)
