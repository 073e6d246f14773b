"""``k in cls.__dict__`` of a class is answered without a guard (torch 2.5-2.11).

Symptom: ``'v' in K.__dict__``, ``K.__dict__.get('v', d)`` or ``K.__dict__['v']`` (``K`` a class
passed in, global, or ``type(o)``) keep the first call's answer after ``K`` gains or loses ``v``
in its own dict: silently wrong, with and without tdcompat. Found by the differential fuzzer's
class family on 2.7.1 and 2.10.0 (``'v' in KSub.__dict__`` after ``KSub.v`` is set between calls).

Root cause: before 2.12 ``cls.__dict__`` is ``GetAttrVariable(cls, "__dict__")``
(torch/_dynamo/variables/misc.py), whose ``call_method`` answers ``__contains__``/``__getitem__``/
``get`` with ``UserDefinedClassVariable.has_key_in_generic_dict``: ``key in cls.__dict__`` read at
trace time, no guard. 2.12 builds ``cls.__dict__`` with its ``AttrSource``
(``UserDefinedClassVariable`` data-descriptor path, ``VariableBuilder.wrap_mapping_proxy``), which
guards every key of the class dict (``MAPPING_KEYS_CHECK``).

What the handler does: for those three methods with a constant key, on an exact
``UserDefinedClassVariable`` the frame has not mutated, it builds ``cls.__dict__`` under its source
as 2.12 does (realized, so ``TYPE_MATCH`` and ``MAPPING_KEYS_CHECK`` go in) and then defers: Dynamo
answers as before, now under a guard on the very keys it read. Only guards are added, never an
answer changed, so it cannot be wrong where Dynamo was right; a class whose keys change recompiles.
``type(o)`` of an object made in the frame (no source) is guarded through the class ``o`` was made
from (``ID_MATCH`` on it, as class-attr-guard does). 2.5-2.6 have no ``MAPPING_KEYS_CHECK`` and build no
sourced ``mappingproxy`` tracker: there the class dict's keys are guarded by a predicate of our own
(``dynamo_api.guard_mapping_keys``: the same keys in the same order; with the Python guard manager, a
graph break). A class mutated in the frame: Dynamo's side effects answer (deferred untouched).
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "class-dict-guard"

_METHODS = frozenset(("__contains__", "__getitem__", "get"))
_HAS_MAPPING_GUARD = None


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``GetAttrVariable.call_method(tx, name, args, kwargs)`` on ``cls.__dict__`` (the gate below
    sends only ``__contains__``/``__getitem__``/``get`` of a ``__dict__`` here)."""
    if len(args) != 4 or kwargs:
        return DEFER
    global _HAS_MAPPING_GUARD
    if _HAS_MAPPING_GUARD is None:
        _HAS_MAPPING_GUARD = _has_mapping_guard()
    tx, name, call_args, call_kwargs = args
    if call_kwargs or not call_args or not call_args[0].is_python_constant():
        return DEFER
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    obj = instance.obj
    if type(obj) is not UserDefinedClassVariable or not isinstance(obj.value, type):
        return DEFER
    side_effects = tx.output.side_effects
    if side_effects.is_attribute_mutation(obj) and side_effects.has_pending_mutation(obj):
        return DEFER
    from torch._dynamo.source import AttrSource
    from torch._dynamo.variables.base import VariableTracker

    from ..dynamo_api import guard_class_source, guard_mapping_keys, made_object_class_source

    source = obj.source
    if source is None:
        source = made_object_class_source(tx, obj.value)
        if source is None:
            return DEFER
        effects_begin()
        guard_class_source(source)
    effects_begin()
    if _HAS_MAPPING_GUARD:
        VariableTracker.build(tx, obj.value.__dict__, AttrSource(source, "__dict__")).realize()
    else:  # 2.5-2.6: no MAPPING_KEYS_CHECK, nor a sourced mappingproxy tracker to carry it
        guard_mapping_keys(AttrSource(source, "__dict__"))
    return DEFER


def _has_mapping_guard() -> bool:
    from torch._dynamo.guards import GuardBuilder

    return hasattr(GuardBuilder, "MAPPING_KEYS_CHECK")


@gate(_call_method)
def _call_method_gate(original, handle):
    """Every method call on a ``GetAttrVariable``: only a key read of a ``__dict__`` goes on."""

    def call_method(self, tx, name, args, kwargs):
        if name not in _METHODS or self.name != "__dict__":
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`'v' in K.__dict__` / `K.__dict__.get('v', d)` of a class (passed in, global, or "
             "`type(o)`) **keeps the first call's answer** after `K` gains or loses its own `v`",
         '2.5–2.11',
         '(`<2.12`)'),
    ),
    fixes="`'v' in K.__dict__` / `K.__dict__.get('v')` of a class keep the first call's answer after `K` gains "
    "or loses `v` (torch 2.5-2.11): silently wrong",
    upstream="torch/_dynamo/variables/misc.py: GetAttrVariable.call_method (__contains__/__getitem__/get on "
    "__dict__: UserDefinedClassVariable.has_key_in_generic_dict, unguarded)",
    mirrors="torch 2.12: a class's __dict__ is built with its AttrSource (VariableBuilder.wrap_mapping_proxy, "
    "MAPPING_KEYS_CHECK)",
    torch="<2.12",
    fixed_upstream="2.12: cls.__dict__ is a sourced MappingProxyVariable",
    targets=(
        Target("torch._dynamo.variables.misc", "GetAttrVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=("torch._dynamo.side_effects:SideEffects.has_pending_mutation",),
    summary="a key read of a class's own __dict__ is guarded on the class dict's keys, as 2.12 does",
    history=(
        ("2.5-2.11", "`GetAttrVariable.call_method` answers `k in cls.__dict__` from the class at trace time, "
         "unguarded: the first call's answer is reused after the class gains or loses `k`"),
        ("2.12+", "right (`cls.__dict__` built with its source, guarded on its keys)"),
    ),
)
