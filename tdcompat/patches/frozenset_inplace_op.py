"""``fs |= other`` (``&=``, ``^=``, ``-=``) on a frozenset crashes the compile (torch 2.9-2.12).

Symptom: ``fs = frozenset(...); fs |= {x}`` in compiled code: ``InternalTorchDynamoError: RuntimeError:
Illegal call_method update on a frozenset``, also without ``fullgraph``: the user's program stops.
Measured with the case ``frozenset_inplace_op`` on 2.5.1-2.15.0 (2.13+ compile it right).

Root cause: torch/_dynamo/variables/dicts.py (sets.py from 2.12): 2.9 sends ``a |= b`` to
``a.call_method("__ior__", [b])`` (``BuiltinVariable.call_ior``), and ``SetVariable.call_method`` answers
``__ior__``/``__iand__``/``__ixor__``/``__isub__`` with the in-place method (``update``, ...), which
``FrozensetVariable.call_method`` (a subclass) refuses with a ``RuntimeError``. A frozenset has no in-place
operators: CPython runs the binary one and rebinds the name. 2.13 no longer reaches it. (2.5-2.8 compile it,
but build a ``set`` where CPython gives a ``frozenset``: ``call_or_`` and friends make a ``SetVariable`` for
any set operands, the binary operators too; left alone, native.)

What the handler accepts: ``FrozensetVariable.call_method(tx, name, [b], {})`` for those four names where
``b`` is an exact ``SetVariable`` or ``FrozensetVariable`` (a ``set`` or ``frozenset``). It returns
Dynamo's own binary method (``__or__``, ``__and__``, ``__xor__``, ``__sub__``) of the same operands: a
new frozenset, ``self`` untouched. Sound: ``frozenset`` defines no ``__ior__`` and friends, so
``fs |= b`` is ``fs = fs.__or__(b)``, which for a set or frozenset ``b`` returns the new frozenset (no
user code: the hashes are Dynamo's keys already). Every other operand (a dict view, a user set, a
non-set, for which CPython goes on to ``b.__ror__``) and every other method defers.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "frozenset-inplace-op"

#: The in-place operator a frozenset lacks -> the binary one CPython runs instead.
_BINARY = {"__ior__": "__or__", "__iand__": "__and__", "__ixor__": "__xor__", "__isub__": "__sub__"}


@fail_safe(NAME)
def _inplace(wrapped, instance, args, kwargs):
    """``FrozensetVariable.call_method(tx, "__ior__" | "__iand__" | "__ixor__" | "__isub__", [b], {})``."""
    from torch._dynamo.variables import FrozensetVariable, SetVariable

    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, call_args, call_kwargs = args
    binary = _BINARY.get(name)
    if binary is None or call_kwargs or len(call_args) != 1 or type(instance) is not FrozensetVariable:
        return DEFER
    other = call_args[0]
    if type(other) not in (SetVariable, FrozensetVariable):
        return DEFER
    effects_begin()
    return wrapped(tx, binary, [other], {})


_call_method_gate = routed_gate(_inplace, method_name_gate, frozenset(_BINARY))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`fs |= {x}` (or `&=`, `^=`, `-=`) on a `frozenset`: **the compile crashes** (`InternalTorchDynamoError: "
         "RuntimeError: Illegal call_method update on a frozenset`), also without `fullgraph`",
         "2.9–2.12",
         "(`>=2.9,<2.13`): the binary operator, a new frozenset, as CPython"),
    ),
    fixes="`fs |= {x}` on a frozenset crashes the compile (RuntimeError: Illegal call_method update on a "
    "frozenset), also without fullgraph (torch 2.9-2.12)",
    upstream="torch/_dynamo/variables/dicts.py: FrozensetVariable.call_method (SetVariable's __ior__ branch "
    "calls update)",
    mirrors="torch 2.13: sets moved to torch/_dynamo/variables/sets.py; `fs |= b` runs the binary operator",
    torch=">=2.9,<2.13",
    fixed_upstream="2.13: `fs |= b` on a frozenset compiles (variables/sets.py)",
    targets=(
        Target("torch._dynamo.variables.dicts", "FrozensetVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs"), optional=True),
        Target("torch._dynamo.variables.sets", "FrozensetVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs"), optional=True),  # 2.12 moved sets there
    ),
    summary="`fs |= b` (and `&=`, `^=`, `-=`) on a frozenset runs the binary operator, as CPython",
    history=(
        ("2.5-2.8", "not this gap: `fs |= b` goes through `call_or_` and friends, a new object, but a `set` where "
         "CPython gives a `frozenset` (the binary operators too; native, left alone)"),
        ("2.9-2.12", "`call_ior` -> `SetVariable.call_method('__ior__')` -> `update`, which "
         "`FrozensetVariable` refuses: `RuntimeError: Illegal call_method update on a frozenset`"),
        ("2.13+", "right"),
    ),
)
