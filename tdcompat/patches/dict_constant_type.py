"""An ``OrderedDict`` or ``defaultdict`` folded as a plain ``dict``: wrong ``repr``, ``==`` (torch <2.13).

Symptom: silently wrong results under ``fullgraph=True``. ``repr(od)``, ``str(od)``, ``f"{od}"`` of an
``OrderedDict`` give ``"{'x': 1}"`` where CPython gives ``"OrderedDict([('x', 1)])"`` (2.5-2.12), and
``od1 == od2`` of two ``OrderedDict``s holding the same items in another order is ``True`` where CPython
compares the order too (``False``; also ``[od1] == [od2]``, ``(od1, 1) == (od2, 1)``, ``od1 != od2``;
2.5-2.8). ``repr(defaultdict(int, x=1))`` is ``"{'x': 1}"`` (2.6-2.10; 2.5 with ``defaultdict-construction``,
which makes that defaultdict traceable there). Measured with the case ``dict_constant_type``; 2.13 answers
``repr`` through each tracker's own ``repr_impl``.

Root cause: torch/_dynamo/variables/dicts.py ``ConstDictVariable.as_python_constant`` returns a plain
``dict`` of the items whatever the tracker's ``user_cls``, and Dynamo constant-folds builtins (``repr`` up to 2.10,
``str``, ``format``, ``operator.eq``/``ne`` on 2.5-2.8, comparisons of lists and tuples holding it) on
what it returns. Upstream ``DictTests::test_ordered_dict_as_python_constant_preserves_type`` and
``test_default_dict_as_python_constant_preserves_type`` state the contract.

What the handler accepts: a tracker whose ``user_cls`` is exactly ``collections.OrderedDict``; it returns
``OrderedDict(d)`` of the plain dict Dynamo builds (the same items in the same order: Dynamo's dict keeps
insertion order and an ``OrderedDict`` built from it has that order). Building it runs no user code (keys
and values are Python constants already). Everything Python then computes on it is what CPython computes
on the real object: its ``repr``, its order-aware ``==`` with another ``OrderedDict``, order-blind ``==``
with a ``dict``. A ``defaultdict`` tracker (``DefaultDictVariable``) whose factory is ``None``, a class
(``int``, ``list``) or a plain or builtin function (the very object: a ``functools.partial``'s tracker
would make a new one) gets ``defaultdict(factory, d)``: its ``repr`` and ``==`` (a dict's) are CPython's. Folding
never reads a missing key of it (Dynamo answers ``d[k]`` through ``DefaultDictVariable.call_method``, which
records the insertion; measured), so the copy's own factory is never called. A factory that is not a
constant defers. Every other ``user_cls``
(``dict``, user subclasses) defers. 2.11-2.12 answer ``repr`` of a dict tracker in
``BuiltinVariable.call_repr`` with the tracker's ``debug_repr`` (a dict's for an ``OrderedDict``): there an
``OrderedDict`` of constants gets ``repr`` of the ``OrderedDict`` built above, any other graph-breaks.
"""

from __future__ import annotations

import collections
import types

from ..dynamo_api import graph_break
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dict-constant-type"


@fail_safe(NAME)
def _as_python_constant(wrapped, instance, args, kwargs):
    """``ConstDictVariable.as_python_constant()``."""
    if args or kwargs:
        return DEFER
    cls = getattr(instance, "user_cls", dict)
    if cls is collections.OrderedDict:
        return collections.OrderedDict(wrapped())
    if cls is collections.defaultdict:
        factory = getattr(instance, "default_factory", None)
        try:
            factory = factory.as_python_constant() if factory is not None else None
        except NotImplementedError:  # a factory that is not a constant (a user function): as Dynamo has it
            return DEFER
        if not (factory is None or isinstance(factory, type)
                or type(factory) in (types.BuiltinFunctionType, types.FunctionType)):
            return DEFER  # (a partial's tracker makes a new partial: `f is d.default_factory` would fold False)
        return collections.defaultdict(factory, wrapped())
    return DEFER


@fail_safe(NAME)
def _repr(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_repr(tx, arg)`` (2.11-2.12 answer a dict tracker with its ``debug_repr``, a plain
    dict's for an ``OrderedDict``): ``repr`` of the constant :func:`_as_python_constant` makes; an
    ``OrderedDict`` that is not a constant graph-breaks (its ``debug_repr`` would be a dict's)."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, arg = args
    from torch._dynamo.variables import ConstantVariable, ConstDictVariable

    if type(arg) is not ConstDictVariable or getattr(arg, "user_cls", None) is not collections.OrderedDict:
        return DEFER
    if not arg.is_python_constant():
        graph_break("repr() of an OrderedDict", f"repr({arg})",
                    "this Dynamo would give a plain dict's repr; tdcompat folds only an OrderedDict of constants")
    effects_begin()
    return ConstantVariable.create(repr(arg.as_python_constant()))


def _repr_reads_debug_repr() -> bool:
    """only where ``BuiltinVariable.call_repr`` exists (2.10 on; it answers dict trackers from 2.11)"""
    from torch._dynamo.variables.builtin import BuiltinVariable

    return hasattr(BuiltinVariable, "call_repr")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`repr(od)` / `str(od)` / `f'{od}'` of an `OrderedDict` is a plain dict's repr; `od1 == od2` ignores "
         "the order (**silently wrong**)", "2.5–2.12 (`==`: 2.5–2.8)", "(`<2.13`)"),
        ("`repr(defaultdict(int, x=1))` is `\"{'x': 1}\"` (**silently wrong**)", "2.5–2.10", "(`<2.13`)"),
    ),
    fixes="an OrderedDict / defaultdict constant-folded as a plain dict: wrong repr()/str() and an "
    "order-blind OrderedDict == (silently wrong)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.as_python_constant",
    mirrors="upstream test_dicts.py DictTests::test_ordered_dict_as_python_constant_preserves_type / "
    "test_default_dict_as_python_constant_preserves_type; 2.13: ConstDictVariable.repr_impl",
    torch="<2.13",
    fixed_upstream="2.13: repr through each dict tracker's repr_impl",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "as_python_constant", _as_python_constant,
               params=()),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_repr", _repr, params=("tx", "arg"),
               when=_repr_reads_debug_repr),
    ),
    summary="an OrderedDict folded as a constant keeps its type (repr, order-aware ==); a defaultdict is not folded",
    history=(
        ("2.5-2.8", "`repr`/`str` of an `OrderedDict` a dict's; `od1 == od2` order-blind"),
        ("2.9-2.12", "`repr`/`str` of an `OrderedDict` a dict's (`defaultdict` too up to 2.10)"),
        ("2.13+", "right: `repr_impl`"),
    ),
)
