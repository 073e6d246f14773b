"""Changes to a ``set`` subclass are lost after the compiled call (torch 2.9-2.14).

Symptom: for ``class S(set)``, ``s.add(v)``, ``s.discard(v)``, ``s.update(...)``, ``s.clear()`` on an ``S``
passed in are seen inside the compiled frame but **the object is unchanged afterwards**, and an ``S``
made in the frame and returned (or stored) **comes back empty**: silently wrong, also without
``fullgraph``. Measured on 2.9.1-2.14.1 (2.8 breaks on every set-subclass method; 2.15 is right).

Root cause: 2.9 added ``UserDefinedSetVariable`` (torch/_dynamo/variables/user_defined.py), which keeps
the set's items in an inner ``SetVariable`` (``_set_vt``, ``_base_vt`` from 2.13), as
``UserDefinedListVariable`` and ``UserDefinedDictVariable`` do. ``SideEffects.codegen_update_mutated``
(torch/_dynamo/side_effects.py) writes a changed inner tracker back to the real object for lists and
dicts, not for sets. 2.15 added the set branch (``_codegen_user_defined_set_mutation``: ``set.clear(s)``
then ``set.update(s, items)``, pytorch/pytorch's side-effect replay registry).

What the handler accepts: after Dynamo's own replay, each tracked ``UserDefinedSetVariable`` whose real
object is a ``set`` (not a ``frozenset``), whose object is tracked for attribute mutation (an input, or
one made in the frame: Dynamo gives that a local source in ``codegen_save_tempvars``) and whose inner
tracker changed in the frame. For those it emits what 2.15 emits: ``set.clear(s); set.update(s, items)``
(the items built into a new local before any replay, as 2.15 does, because an item's source may read
the set itself or another object the replay changes), with ``set`` loaded from ``builtins`` (a module
that shadows the name ``set`` changes nothing), which
leaves ``s`` holding exactly the items the frame ended with, the ones the trace already read. The calls
are the base class's own methods, so a subclass's overridden ``add``/``update`` do not run (CPython did not
run them either: the frame's changes went through the methods Dynamo traced). Everything else is
Dynamo's own code path, untouched.
"""

from __future__ import annotations

import builtins

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "set-subclass-replay"


def _inner(var):
    """The inner ``SetVariable`` (``_set_vt`` on 2.9-2.11, ``_base_vt`` from 2.13)."""
    state = vars(var)
    return state.get("_base_vt", state.get("_set_vt"))


def _changed_sets(side_effects) -> list:
    """Dynamo's ``_get_modified_vars()`` restricted to set-subclass trackers, the type tested first
    (a class test, no call): this runs at every graph's end, over every tracked object."""
    from torch._dynamo.variables.user_defined import UserDefinedSetVariable

    found = []
    for var in side_effects.id_to_variable.values():
        if UserDefinedSetVariable not in type(var).__mro__ or not side_effects.is_modified(var):
            continue
        if not isinstance(getattr(var, "value", None), set):
            continue
        inner = _inner(var)
        if inner is None or var.source is None or not side_effects.is_attribute_mutation(var):
            continue
        if side_effects.is_modified(inner):
            found.append((var, inner))
    return found


def _call_set_method(cg, var, method: str, items: str = "") -> None:
    """``builtins.set.<method>(s[, <local items>])`` as a statement."""
    from torch._dynamo.bytecode_transformation import create_call_function, create_instruction

    cg.add_push_null(lambda: cg.extend_output([
        cg.create_load_python_module(builtins), cg.create_load_attr("set"), cg.create_load_attr(method)]))
    cg(var.source)
    if items:
        cg.extend_output([create_instruction("LOAD_FAST", argval=items)])
    cg.extend_output([*create_call_function(2 if items else 1, False), create_instruction("POP_TOP")])


@fail_safe(NAME)
def _codegen_update_mutated(wrapped, instance, args, kwargs):
    """``SideEffects.codegen_update_mutated(cg, ...)``: the set subclasses' items are built first (into new
    locals, while every object an item's source reads is still as it was on entry), then Dynamo's own
    replay runs, then each set is cleared and refilled from its local."""
    if not args:
        return DEFER
    cg = args[0]
    changed = _changed_sets(instance)
    if not changed:
        return DEFER
    from torch._dynamo.bytecode_transformation import create_instruction

    effects_begin()
    temps = []
    for _var, inner in changed:
        cg(inner, allow_cache=False)  # the items, not the object through its source
        temps.append(cg.tx.output.new_var())
        cg.extend_output([create_instruction("STORE_FAST", argval=temps[-1])])
    result = wrapped(*args, **kwargs)
    for (var, _inner), items in zip(changed, temps):
        _call_set_method(cg, var, "clear")
        _call_set_method(cg, var, "update", items)
    return result


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`s.add(v)`, `s.discard(v)`, `s.update(...)`, `s.clear()` on a **`set` subclass** passed in '
             'are **lost after the compiled call** (the frame itself sees them), and a `set` subclass '
             'made in the frame **comes back empty**: silently wrong, also without `fullgraph`',
         '2.9–2.14',
         '(`>=2.9,<2.15`): the items written back with `set.clear` + `set.update` after the graph, '
             'as 2.15 does'),
    ),
    fixes="`s.add(v)` / `s.discard(v)` / `s.update(...)` / `s.clear()` on a `set` subclass passed in are lost "
    "after the compiled call, and a `set` subclass made in the frame comes back empty (silently wrong, "
    "torch 2.9-2.14)",
    upstream="torch/_dynamo/side_effects.py: SideEffects.codegen_update_mutated",
    mirrors="torch 2.15: _codegen_user_defined_set_mutation (set.clear + set.update, as for list subclasses)",
    torch=">=2.9,<2.15",
    fixed_upstream="2.15: the side-effect replay writes a set subclass's items back",
    targets=(
        Target("torch._dynamo.side_effects", "SideEffects", "codegen_update_mutated", _codegen_update_mutated,
               params=("cg",)),
    ),
    requires=("torch._dynamo.variables.user_defined:UserDefinedSetVariable",
              "torch._dynamo.side_effects:SideEffects._get_modified_vars",
              "torch._dynamo.side_effects:SideEffects.is_modified",
              "torch._dynamo.codegen:PyCodegen.add_push_null",
              "torch._dynamo.codegen:PyCodegen.create_load_python_module"),
    summary="a set subclass's items changed in the frame are written back to it (input or made in the frame)",
    history=(
        ("2.5-2.8", "every method of a set subclass is a graph break (no UserDefinedSetVariable)"),
        ("2.9-2.14", "changes to a set subclass stay in the trace: the object passed in is unchanged after the "
         "call, one made in the frame comes back empty (silently wrong)"),
        ("2.15+", "right"),
    ),
)
