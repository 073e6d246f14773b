"""``set(d)``, ``s.union(d)``, ``s.update(d)`` of a dict passed in ignore a change of its keys (torch 2.9-2.15).

Symptom: a set built from a dict's keys, or a set method with a dict operand, in a compiled function called
again with a dict that has other keys: the compiled code reuses the first call's keys (``len(set(d))`` stays
2 when ``d`` gains a key). **Silently wrong**, measured (eager vs ``fullgraph=True``, three calls with
different key sets): on 2.9.1, 2.10.0, 2.12.1 and 2.13.0 ``s.union(d)``, ``s.symmetric_difference(d)`` and
``s.symmetric_difference_update(d)`` for a dict of constants; on 2.14.1 and 2.15.0 also ``set(d)``,
``frozenset(d)``, ``{*d}``, ``s.update(d)``, ``s.issuperset(d)``, ``d2.keys() - d``, ``set(od)``, ``set(dd)``
(an ``OrderedDict``/``defaultdict``), ``set(vars(o))`` and ``dict.fromkeys(d)`` (``OrderedDict.fromkeys``,
``len(dict.fromkeys(G, 1))`` of a global dict: found by the fuzzer on 2.15.0). 2.5-2.8 are right or graph-break.

Root cause: two shortcuts that read a dict operand's keys without the keys guard Dynamo installs when it
iterates a dict (``ConstDictVariable.install_dict_keys_match_guard``, lazy for inputs since 2.7).
``SetVariable._fast_set_method`` (torch/_dynamo/variables/dicts.py on 2.9-2.11, sets.py from 2.12;
``BaseSetVariable`` on 2.15) folds ``union``/``symmetric_difference``/... over ``as_python_constant()``
copies of constant operands, a dict of constants included (2.14 excluded dicts from it). And from 2.14
(pytorch/pytorch#186759, "do not rehash dict keys") ``SetVariable._iter_operand_keys`` / ``_operand_keys``
(``BaseSetVariable`` on 2.15), ``DictKeySetVariable._as_set_variable``, ``BuiltinVariable.call_frozenset`` and
``DictBuiltinVariable.call_custom_dict_fromkeys`` (builtin.py) reuse a dict operand's hashed keys from
``other.items``.

What the handler accepts: every call of those methods. For each operand that is a ``ConstDictVariable`` (any
dict tracker: ``OrderedDict``, ``defaultdict``, an instance ``__dict__`` included) it installs that dict's own
keys guard, then defers: Dynamo's method runs unchanged. Sound because a guard only narrows when the compiled
code is reused (a recompile where the keys differ), never what it computes; the guard is the one Dynamo
installs for ``list(d)`` and ``for k in d`` of the same dict.
"""

from __future__ import annotations

from ..dynamo_api import bind_args, guard_dict_keys, user_dict_storage
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "set-dict-operand-guard"


def _guard_dict_operands(operands) -> None:
    from torch._dynamo.variables.dicts import ConstDictVariable

    for vt in operands:
        storage = user_dict_storage(vt)  # 2.13+ track an OrderedDict/defaultdict input as a user dict over one
        vt = storage if storage is not None else vt
        if isinstance(vt, ConstDictVariable):
            guard_dict_keys(vt)


@fail_safe(NAME)
def _guard_operand(wrapped, instance, args, kwargs):
    """``_iter_operand_keys(tx, other)`` / ``_operand_keys(tx, other)`` / ``_as_set_variable(tx, vt)`` /
    ``call_frozenset(tx, *args)`` / ``call_custom_dict_fromkeys(tx, user_cls, *args)`` (its class is not a
    tracker: skipped): the dict operands' keys guarded, then Dynamo's method."""
    _guard_dict_operands(list(args[1:]) + list(kwargs.values()))
    return DEFER


@fail_safe(NAME)
def _guard_fast_operands(wrapped, instance, args, kwargs):
    """``_fast_set_method(tx, fn, args, kwargs)``: the set method folded over ``as_python_constant()`` copies
    of its operands (2.9-2.13 take a dict of constants there): their keys guarded, then Dynamo's method."""
    bound = bind_args(args, kwargs, ("tx", "fn", "args", "kwargs"))
    if bound is None:
        return DEFER
    _guard_dict_operands(list(bound[2]) + list(bound[3].values()))
    return DEFER


def _operand_target(owner: str, attribute: str) -> Target:
    # 2.14 defines the operand readers on SetVariable, 2.15 on BaseSetVariable: each is optional
    return Target("torch._dynamo.variables.sets", owner, attribute, _guard_operand, params=("tx",), optional=True)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`s.union(d)`, `s.symmetric_difference(d)` of a dict of constants passed in (2.9–2.15), and `set(d)`, "
         "`frozenset(d)`, `{*d}`, `s.update(d)`, `dict.fromkeys(d)` (2.14–2.15): **the first call's keys** when `d` "
         "has other keys on "
         "a later call (silently wrong)",
         "2.9–2.15",
         "(`>=2.9`): the dict's keys guarded, as for `list(d)`"),
    ),
    fixes="s.union(d), s.symmetric_difference(d) (2.9-2.15) and set(d), frozenset(d), {*d}, s.update(d), "
    "d2.keys() - d, dict.fromkeys(d) (2.14-2.15) of a dict input: no guard on the dict's keys, so a later call "
    "with other keys reuses the first call's (silently wrong)",
    upstream="torch/_dynamo/variables/sets.py (dicts.py on 2.9-2.11): SetVariable._fast_set_method; 2.14+: "
    "SetVariable._iter_operand_keys/_operand_keys (BaseSetVariable on 2.15), DictKeySetVariable._as_set_variable; "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_frozenset, DictBuiltinVariable.call_custom_dict_fromkeys",
    mirrors="the keys guard ConstDictVariable.unpack_var_sequence installs (lost by the constant fold of "
    "_fast_set_method and by pytorch/pytorch#186759's do-not-rehash fast path)",
    torch=">=2.9",
    fixed_upstream="",
    targets=(
        _operand_target("SetVariable", "_iter_operand_keys"),
        _operand_target("SetVariable", "_operand_keys"),
        _operand_target("BaseSetVariable", "_iter_operand_keys"),
        _operand_target("BaseSetVariable", "_operand_keys"),
        _operand_target("DictKeySetVariable", "_as_set_variable"),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_frozenset", _guard_operand,
               params=("tx",), optional=True),
        # a staticmethod (tx, user_cls, iterable[, value]): dict/OrderedDict/defaultdict.fromkeys(d)
        Target("torch._dynamo.variables.builtin", "DictBuiltinVariable", "call_custom_dict_fromkeys",
               _guard_operand, params=("tx",), optional=True),
        # 2.9-2.11 define SetVariable in dicts.py, 2.12-2.14 in sets.py, 2.15 the method on BaseSetVariable
        Target("torch._dynamo.variables.dicts", "SetVariable", "_fast_set_method", _guard_fast_operands,
               params=("tx", "fn", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.sets", "SetVariable", "_fast_set_method", _guard_fast_operands,
               params=("tx", "fn", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.sets", "BaseSetVariable", "_fast_set_method", _guard_fast_operands,
               params=("tx", "fn", "args", "kwargs"), optional=True),
    ),
    summary="a set built from a dict input's keys (`set(d)`, `s.union(d)`, ...): the dict's keys guarded",
    history=(
        ("2.5-2.8", "not this gap: a set built from a dict iterates it, which guards its keys (or a graph break)"),
        ("2.9-2.13", "set methods of constants fold over `as_python_constant()` copies, a dict's included, "
         "without its keys guard (`s.union(d)`, `s.symmetric_difference(d)`)"),
        ("2.14+", "also the do-not-rehash fast path reads the dict's keys without their guard (`set(d)`)"),
    ),
)
