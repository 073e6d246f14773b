"""``not d`` / ``bool(d)`` of a dict passed in reuse the first call's answer (torch 2.7 on).

Symptom: ``return x + 1, not d`` compiled for an empty ``d`` returns ``True`` again when called with a
non-empty one (and ``bool(d)`` the reverse), ``OrderedDict`` and ``defaultdict`` inputs too: **silently
wrong**, with or without ``fullgraph``; the only guard on ``d`` is its type. ``len(d)``, ``if d:`` and ``d
and ...`` are right (they guard the keys), except on 2.13-2.14, whose conditional jumps (``if od:``, ``od or
x``, ``while od``) read an ``OrderedDict`` (2.13) / ``defaultdict`` (2.13-2.14) input's truth unguarded too.
Measured on 2.7.1-2.15.0 (2.5-2.6 guard a dict's keys when they build it). Found by the fuzzer on 2.12.1
(seed 187099319, program 187099880299761: an empty ``dict`` input's truth, once ``dict-subclass-merge``
turned a later crash into a graph break).

Root cause: ``BuiltinVariable.call_not_`` (torch/_dynamo/variables/builtin.py) answers ``len(a.items) == 0``
for a ``ConstDictVariable`` (or a dict view's dict), and ``call_bool`` (2.8+; 2.7 has none) leaves a dict to
the constant fold over ``as_python_constant()``; neither installs the guard that ``len(d)`` installs
(``ConstDictVariable.call_method("__len__")``: the keys, ``DICT_KEYS_MATCH``).

The fix accepts exactly a ``ConstDictVariable`` (any subclass tracker: ``OrderedDict``, ``defaultdict``; on
2.13+ the dict tracker under an exact ``OrderedDict``/``defaultdict``'s user-dict tracker) or a dict view of
one, with a source (a dict the frame did not build), as the operand of ``not`` or ``bool()`` (and, on
2.13-2.14, of a conditional jump): it first asks Dynamo for ``len(d)`` the way ``len(d)`` does, which
installs Dynamo's own guard on the dict's keys, then lets Dynamo answer as before. The answer is unchanged
on this call; the guard makes a later call with a dict of other keys recompile. Sound because CPython's
truth of a dict is ``len(d) != 0``, a function of the keys that guard fixes. Everything else defers
untouched. On 2.7, which has no ``call_bool``, the handler is added as ``BuiltinVariable.call_bool`` around
a stub that returns ``None``: ``_make_handler`` tries ``call_<builtin>`` first and reads ``None`` as "no
handler here", so the constant fold still answers, after the guard (2.8's own dispatch shape).
"""

from __future__ import annotations

import collections

from ..dynamo_api import CONDITIONAL_JUMPS, LAZY_MODULE, realize, stack_top_gate, torch_release
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, routed_gate

NAME = "dict-truth-guard"

#: The dict subclasses whose truth is dict's own (2.13+ track them as user-dict trackers; a user subclass,
#: whose ``__len__``/``__bool__`` Dynamo inlines, is left to Dynamo).
_EXACT = (collections.OrderedDict, collections.defaultdict)


def _guard_length(tx, value) -> None:
    from torch._dynamo.variables import dicts
    from torch._dynamo.variables.dicts import ConstDictVariable

    dict_view = getattr(dicts, "DictViewVariable", None)
    if dict_view is not None and isinstance(value, dict_view):
        value = value.dv_dict
    base = getattr(value, "_base_vt", None)
    if isinstance(base, ConstDictVariable) and type(getattr(value, "value", None)) in _EXACT:
        value = base  # 2.13+: an OrderedDict / defaultdict is a user-dict tracker over a dict tracker
    if not isinstance(value, ConstDictVariable) or getattr(value, "source", None) is None:
        return
    value.call_method(tx, "__len__", [], {})


@fail_safe(NAME)
def _truth(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_not_(tx, a)`` / ``call_bool(tx, a)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    _guard_length(args[0], args[1])
    return DEFER


@fail_safe(NAME)
def _jump(wrapped, instance, args, kwargs):
    """A conditional jump (2.13-2.14) on an ``OrderedDict``/``defaultdict`` input on top of the stack."""
    if len(args) != 1 or kwargs or not instance.stack:
        return DEFER
    value = instance.stack[-1]
    if type(value).__module__ == LAZY_MODULE:
        value = instance.stack[-1] = realize(value)
    _guard_length(instance, value)
    return DEFER


#: What is installed on a conditional jump: anything but a user-dict tracker (or a lazy one) goes straight
#: to Dynamo after one type test.
_jump_gate = routed_gate(_jump, stack_top_gate, {"UserDefinedDictVariable"})


def _jumps_unguarded() -> bool:
    """2.13-2.14: their jumps answer an ``OrderedDict`` (2.13) / ``defaultdict`` (2.13-2.14) input's truth
    without a guard (measured: 2.12 and 2.15 guard both; before 2.12 these are dict trackers, guarded by the
    jump)."""
    return (2, 13) <= torch_release() < (2, 15)


def _no_call_bool() -> bool:
    """2.7: ``bool(d)`` reaches only the constant fold (``call_bool`` came in 2.8)."""
    return torch_release() < (2, 8)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`not d` / `bool(d)` of a dict passed in (also `OrderedDict`, `defaultdict`) keep the first call's "
         "answer when a later call passes an empty or a non-empty one: **silently wrong**",
         "2.7–2.15",
         "(`>=2.7`)"),
    ),
    fixes="`not d` / `bool(d)` of a dict passed in keep the first call's answer (no guard on the keys): "
    "silently wrong (torch 2.7-2.15)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_not_, BuiltinVariable.call_bool; "
    "(2.13-2.14) torch/_dynamo/symbolic_convert.py: InstructionTranslatorBase conditional jumps (generic_jump)",
    mirrors="open upstream: the guard len(d) installs (ConstDictVariable.call_method('__len__'))",
    torch=">=2.7",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_not_", _truth, params=("tx", "a")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_bool", _truth, params=("tx",),
               optional=True),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_bool", _truth, added=True,
               optional=True, when=_no_call_bool),
        *(Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", name, _jump_gate, optional=True,
                 when=_jumps_unguarded) for name in CONDITIONAL_JUMPS),
    ),
    summary="not d / bool(d) of a dict passed in guard its keys, as len(d) does",
    history=(
        ("2.5-2.6", "right (a dict's keys are guarded when it is built)"),
        ("2.7-2.15", "`call_not_` answers from the items, `call_bool` (2.7: the constant fold) folds: only "
         "`TYPE_MATCH` on the dict; 2.13-2.14's jumps on an `OrderedDict` "
         "(2.13) / `defaultdict` input too"),
    ),
)
