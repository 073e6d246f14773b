"""``set(d)``, ``frozenset(d)``, ``{*d}``, ``s.update(d)`` of a dict passed in ignore a change of its keys (2.14-2.15).

Symptom: a set built from a dict's keys, or a set method with a dict operand, in a compiled function called
again with a dict that has other keys: the compiled code reuses the first call's keys (``len(set(d))`` stays
2 when ``d`` gains a key). **Silently wrong**, measured on 2.14.1 and 2.15.0 (eager vs ``fullgraph=True``, three
calls with different key sets) for ``set(d)``, ``frozenset(d)``, ``{*d}``, ``s.update(d)``, ``s.union(d)``,
``s.symmetric_difference(d)``, ``s.issuperset(d)``, ``d2.keys() - d``, ``set(od)``, ``set(dd)`` (an
``OrderedDict``/``defaultdict``) and ``set(vars(o))``; 2.13.0 is right for all but ``s.union(d)`` and
``s.symmetric_difference(d)`` (its constant fast path, not this gap: open).

Root cause: torch/_dynamo/variables/sets.py (2.14-2.15, pytorch/pytorch#186759 "do not rehash dict keys"):
``SetVariable._iter_operand_keys`` / ``_operand_keys`` (``BaseSetVariable`` on 2.15), ``DictKeySetVariable.
_as_set_variable`` and ``BuiltinVariable.call_frozenset`` (torch/_dynamo/variables/builtin.py) read a dict
operand's keys straight from ``other.items`` to reuse its hashed keys, without the keys guard Dynamo installs
when it iterates a dict (``ConstDictVariable.install_dict_keys_match_guard``, lazy for inputs since 2.7).

What the handler accepts: every call of those methods. For each operand that is a ``ConstDictVariable`` (any
dict tracker: ``OrderedDict``, ``defaultdict``, an instance ``__dict__`` included) it installs that dict's own
keys guard, then defers: Dynamo's method runs unchanged. Sound because a guard only narrows when the compiled
code is reused (a recompile where the keys differ), never what it computes; the guard is the one Dynamo
installs for ``list(d)`` and ``for k in d`` of the same dict.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "set-dict-operand-guard"


def _guard_dict_operands(operands) -> None:
    from torch._dynamo.variables.dicts import ConstDictVariable

    for vt in operands:
        if isinstance(vt, ConstDictVariable):
            guard = getattr(vt, "install_dict_keys_match_guard", None)
            if guard is not None:
                guard()


@fail_safe(NAME)
def _guard_operand(wrapped, instance, args, kwargs):
    """``_iter_operand_keys(tx, other)`` / ``_operand_keys(tx, other)`` / ``_as_set_variable(tx, vt)`` /
    ``call_frozenset(tx, *args)``: the dict operands' keys guarded, then Dynamo's method."""
    _guard_dict_operands(list(args[1:]) + list(kwargs.values()))
    return DEFER


def _operand_target(owner: str, attribute: str) -> Target:
    # 2.14 defines the operand readers on SetVariable, 2.15 on BaseSetVariable: each is optional
    return Target("torch._dynamo.variables.sets", owner, attribute, _guard_operand, params=("tx",), optional=True)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`set(d)`, `frozenset(d)`, `{*d}`, `s.update(d)`, `s.union(d)` of a dict passed in: **the first call's "
         "keys** when `d` has other keys on a later call (`len(set(d))` stays the same: silently wrong)",
         "2.14–2.15",
         "(`>=2.14`): the dict's keys guarded, as for `list(d)`"),
    ),
    fixes="set(d), frozenset(d), {*d}, s.update(d), s.union(d), d2.keys() - d of a dict input: no guard on "
    "the dict's keys, so a later call with other keys reuses the first call's (silently wrong)",
    upstream="torch/_dynamo/variables/sets.py: SetVariable._iter_operand_keys/_operand_keys (BaseSetVariable on "
    "2.15), DictKeySetVariable._as_set_variable; torch/_dynamo/variables/builtin.py: BuiltinVariable."
    "call_frozenset",
    mirrors="the keys guard ConstDictVariable.unpack_var_sequence installs (lost by pytorch/pytorch#186759's "
    "do-not-rehash fast path)",
    torch=">=2.14",
    fixed_upstream="",
    targets=(
        _operand_target("SetVariable", "_iter_operand_keys"),
        _operand_target("SetVariable", "_operand_keys"),
        _operand_target("BaseSetVariable", "_iter_operand_keys"),
        _operand_target("BaseSetVariable", "_operand_keys"),
        _operand_target("DictKeySetVariable", "_as_set_variable"),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_frozenset", _guard_operand,
               params=("tx",), optional=True),
    ),
    summary="a set built from a dict input's keys (`set(d)`, `s.update(d)`, ...): the dict's keys guarded",
    history=(
        ("2.5-2.13", "not this gap: building a set from a dict iterates it, which guards its keys (2.13: "
         "`s.union(d)`/`s.symmetric_difference(d)` of constants fold without it, open)"),
        ("2.14+", "the do-not-rehash fast path reads the dict's keys without their guard"),
    ),
)
