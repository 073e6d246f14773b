"""``m.__dict__`` of an input ``MutableMapping`` is a stale copy (torch 2.6-2.11).

Root cause: ``MutableMappingVariable.var_getattr``
(torch/_dynamo/variables/user_defined.py) answers ``m.__dict__`` for a mapping
with a source with ``LazyVariableTracker.create(m.__dict__, AttrSource(source,
"__dict__"))``: a ``ConstDictVariable`` built from the *real* dictionary, kept
as ``generic_dict_vt`` and consulted first by every later attribute read. Two
records of one state then live side by side:

* ``m.k = v`` in the frame is an attribute store in the side-effects table; the
  copy does not see it, so ``m.__dict__["k"]`` (and ``vars(m)["k"]``) read back
  the old value: silently wrong on 2.6-2.11 without tdcompat (e.g. tensordict
  reads ``self.__dict__`` right after ``self._x = ...``).
* ``del m.__dict__["k"]``/``pop`` edit the copy; the real object still has
  ``k``, so ``m.k`` and ``hasattr(m, "k")`` find the stale value.

torch 2.5 returns the same ``GetAttrVariable(m, "__dict__")`` view as for every
other user object; 2.12 made ``__dict__`` a real dictionary backed by the
side-effects table (``DunderDictVariable``, pytorch/pytorch#174570 and
#174941), which fixes both.

The fix: for a mapping with a source, ``m.__dict__`` is what
``UserDefinedObjectVariable.var_getattr`` gives any other user object (the 2.5
behaviour): one record of the attributes, the side-effects table. Reads and
writes through it are Dynamo's and ``instance-dict-writes``'s. The view
supports item reads and writes, ``get``, ``in``, ``update``, ``setdefault``,
``pop`` and ``del``; iterating it (``keys()``, ``items()``, ``len``) graph-breaks
where the copy compiled, which is the price of never reading a stale value.

It needs ``mutable-mapping-setattr`` where that applies (2.6-2.8): the stores
are attribute stores on the mapping, which only reach the real object once the
mapping is tracked.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "mapping-dunder-dict"


@fail_safe(NAME)
def _var_getattr(wrapped, instance, args, kwargs):
    """``MutableMappingVariable.var_getattr(tx, "__dict__")`` for a mapping with a source."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    if name != "__dict__" or instance.source is None:
        return DEFER
    if not tx.output.side_effects.is_attribute_mutation(instance) or instance.value not in tx.output.side_effects:
        return DEFER  # untracked: its stores would not be replayed
    from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

    effects_begin()
    return UserDefinedObjectVariable.var_getattr(instance, tx, name)


def _still_broken() -> bool:
    """For a pre-release at the upper edge: ``var_getattr`` still builds the copy."""
    import inspect

    from torch._dynamo.variables.user_defined import MutableMappingVariable

    return "generic_dict_vt" in inspect.getsource(MutableMappingVariable.var_getattr)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`m.__dict__[k]` / `vars(m)[k]` **silently returns the old value** after `m.k = v` in the '
             'same compiled frame (input `MutableMapping`, e.g. `TensorDict`)',
         '2.6–2.11',
         '(`>=2.6,<2.12`)'),
    ),
    fixes="m.__dict__[k] / vars(m)[k] after m.k = v in the same compiled frame returns the old value; "
    "m.k still found after del m.__dict__[k] (input MutableMapping, e.g. TensorDict)",
    upstream="torch/_dynamo/variables/user_defined.py: MutableMappingVariable.var_getattr (the __dict__ branch)",
    mirrors="pytorch/pytorch#174570 and #174941 (DunderDictVariable, 2.12)",
    torch=">=2.6,<2.12",
    fixed_upstream="2.12: DunderDictVariable (pytorch/pytorch#174570, #174941)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "MutableMappingVariable", "var_getattr", _var_getattr,
               params=("tx", "name")),
    ),
    requires=(
        "torch._dynamo.side_effects:SideEffects.is_attribute_mutation",
        "torch._dynamo.side_effects:SideEffects.__contains__",
        "torch._dynamo.variables.user_defined:UserDefinedObjectVariable.var_getattr",
    ),
    # The view it returns answers `k in m.__dict__` / `.get` / `[k]` through instance-dict-writes'
    # guarded reads: without them Dynamo's own has_key_in_generic_dict is unguarded, and a later
    # input with other keys reuses the first call's answer (silently wrong on 2.8 with
    # TDCOMPAT_DISABLE=module-deleted-attr, which turns instance-dict-writes off; test_dependencies).
    needs=("mutable-mapping-setattr", "instance-dict-writes"),
    probe=_still_broken,
    summary="an input MutableMapping's __dict__ is the object's attributes, not a stale copy",
    history=(
        ("2.5",
         "fine: an input mapping's `m.__dict__` is the same `GetAttrVariable(m, '__dict__')` view as every other "
         "user object's"),
        ("2.6-2.11",
         "`MutableMappingVariable.var_getattr` answers `m.__dict__` of an input mapping with a "
         "`ConstDictVariable` copy of the real dictionary: `m.__dict__[k]` / `vars(m)[k]` after `m.k = v` read "
         "the old value, and `m.k` / `hasattr(m, 'k')` still find `k` after `del m.__dict__[k]` (silently wrong, "
         "e.g. TensorDict)"),
        ("2.12+",
         "fixed upstream: `__dict__` is a real dictionary backed by the side-effects table "
         "(`DunderDictVariable`, pytorch/pytorch#174570, #174941)"),
    ),
)
