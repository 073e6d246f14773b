"""``s | d.keys()`` (and ``^``) with the view on the right keeps the view's elements (torch 2.13 on).

Symptom: ``{1, 2.0, "a"} | {1.0: 0, 2: 0}.keys()`` compiled holds ``1.0`` and ``2`` where CPython's result holds
the set's ``1`` and ``2.0`` (equal elements of other types: ``1``/``1.0``/``True``); ``s ^ view`` builds its
result in the other order (the iteration order of the set it returns can differ). Silently wrong, measured on
2.13.0, 2.14.1 and 2.15.0 with the case ``dict_view_reflected_or`` (2.9-2.12: ``set-view-operator``; found by the
fuzzer on 2.13.0, seed 1593776063, program 1593780844329030).

Root cause: ``DictViewVariable.nb_or_impl`` and ``nb_xor_impl`` (torch/_dynamo/variables/dicts.py, 2.13-2.15)
ignore ``reverse``: they build ``set(view)`` and update it with the other operand, also when the view is the
right operand. CPython calls the slot as ``dictviews_or(left, right)`` / ``dictviews_xor(left, right)``
(Objects/dictobject.c), which build ``set(left)`` and update it with ``right``; its ``nb_subtract_impl``
already swaps its operands.

What the handler accepts: a reflected call (``reverse=True``: the view is the right operand; ``binary_op`` calls
it only after the left operand's own slot gave ``NotImplemented``, e.g. a ``set``'s for a view) of either method
on a dict view. It computes what CPython does, ``set(left)`` then ``update``/``symmetric_difference_update``
with the view, through Dynamo's own ``set()`` and set methods (``update`` keeps the element already there, as
CPython's ``set_add_entry`` does). Sound because these are the C functions' steps in their order with the
operands in CPython's order. A forward call (the view on the left) is Dynamo's, and right.
"""

from __future__ import annotations

from ..dynamo_api import bind_args
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dict-view-reflected-or"


def _reflected(update: str):
    @fail_safe(NAME)
    def handler(wrapped, instance, args, kwargs):
        """``DictViewVariable.nb_or_impl(tx, other, reverse)`` / ``nb_xor_impl``: the view on the right."""
        bound = bind_args(args, kwargs, ("tx", "other", "reverse"))
        if bound is None or bound[2] is not True:
            return DEFER  # the view on the left (or a call shape it was not written for): Dynamo's, right
        tx, left, _ = bound
        from torch._dynamo.variables.base import VariableTracker

        effects_begin()
        result = VariableTracker.build(tx, set).call_function(tx, [left], {})
        result.call_method(tx, update, [instance], {})
        return result

    return handler


_OR, _XOR = _reflected("update"), _reflected("symmetric_difference_update")

PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`s | d.keys()` / `s ^ d.items()` with the view on the right: the view's elements where CPython keeps "
         "the set's (`{1} | {1.0: 0}.keys()` is `{1.0}`, eager `{1}`): **silently wrong**",
         "2.13–2.15",
         "(`>=2.13`)"),
    ),
    fixes="`s | view` / `s ^ view` build the result from the view, not from the left operand: equal elements "
    "of other types (1 / 1.0 / True) come out as the view's (silently wrong, torch 2.13-2.15)",
    upstream="torch/_dynamo/variables/dicts.py: DictViewVariable.nb_or_impl, DictViewVariable.nb_xor_impl",
    mirrors="CPython Objects/dictobject.c dictviews_or / dictviews_xor (set(left), then right); open upstream "
    "(docs/upstream/dict-view-reflected-or/)",
    torch=">=2.13",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.dicts", "DictViewVariable", "nb_or_impl", _OR,
               params=("tx", "other", "reverse")),
        Target("torch._dynamo.variables.dicts", "DictViewVariable", "nb_xor_impl", _XOR,
               params=("tx", "other", "reverse")),
    ),
    summary="s | view and s ^ view build the result from the left operand, as CPython's dictviews_or",
    history=(
        ("2.5-2.12", "not this gap: `|` of a set and a view takes other paths there (`set-view-operator`, "
         "2.9-2.12)"),
        ("2.13-2.15", "`nb_or_impl`/`nb_xor_impl` ignore `reverse`: `set(view)` updated with the left operand"),
    ),
)
