"""``hash(K)`` of a class whose metaclass defines ``__hash__`` is baked in at trace time (torch 2.13 on).

Root cause: ``hash()`` (``BuiltinVariable.call_hash``, torch/_dynamo/variables/builtin.py, through
``object_protocol.generic_hash``) asks ``UserDefinedClassVariable.hash_impl``
(torch/_dynamo/variables/user_defined.py), which runs ``hash(cls)`` at trace time and guards only
the class's identity (``CLASS_MATCH``). A metaclass ``__hash__`` that reads state (a salt, a
registry, the class's attributes) returns another number on a later call, and the compiled frame
still returns the first: silently wrong on 2.13.0 and 2.15.0 (fuzzer hash family, ``HCls``; ledger
replay of 2.15.0 seeds 857333245992893, 857333245993403). Before 2.13 ``hash(cls)`` is a graph break
(``hash-constant-fold`` folds only values whose hash is a pure function of a guarded value).

The fix: ``hash(cls)`` where ``type(cls)``'s ``__hash__`` (read statically on the metaclass's MRO)
is not ``object.__hash__`` runs that ``__hash__`` in the trace, as CPython's ``slot_tp_hash`` does:
the Python function, read from the class's source (``type(cls).__hash__``, guarded as Dynamo
guards any function it reads), inlined with the class as its argument, so whatever it reads is
guarded. Its result must be a constant Dynamo knows (a symbolic int is specialized, guarded on
its value): an ``int`` (a subclass included, as CPython takes it) gives ``hash()`` of it, CPython's
answer (``slot_tp_hash`` reduces a returned int with ``hash(int)``: ``-1`` becomes ``-2``); any
other constant raises CPython's ``TypeError`` in the trace. Anything else (a sourceless class, a
``__hash__`` that is not a Python function, a result that is not a constant, ``__hash__ = None``):
a graph break, so eager runs the metaclass. A class used as a dict key or set member is left to Dynamo: there
only equality of hashes within the frame matters (measured right on 2.13.0 and 2.15.0).
"""

from __future__ import annotations

import types

from ..dynamo_api import MISSING, graph_break, realize, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "metaclass-hash"

_IDENTITY_HASH = object.__dict__["__hash__"]


def _refuse(cls, why: str):
    graph_break("hash() of a class whose metaclass defines __hash__", f"hash({cls.__qualname__})",
                f"{why}; Dynamo would bake the first call's hash in")


@fail_safe(NAME)
def _call_hash(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_hash(tx, arg)``: a class argument under a metaclass with its own ``__hash__``."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, arg = args
    from torch._dynamo.variables import UserDefinedClassVariable

    if not isinstance(arg, UserDefinedClassVariable):
        return DEFER  # (``.value`` of some trackers is a property that may raise)
    cls = arg.value
    if not isinstance(cls, type) or type(cls) is type:
        return DEFER
    found = static_lookup(type(cls), "__hash__")
    if found is MISSING or found is _IDENTITY_HASH:
        return DEFER
    if not isinstance(found, types.FunctionType) or arg.source is None:
        _refuse(cls, f"{type(cls).__qualname__}.__hash__ is not a Python function read from an input class")
    from torch._dynamo.source import AttrSource, TypeSource
    from torch._dynamo.variables import ConstantVariable, VariableTracker

    effects_begin()
    function = VariableTracker.build(tx, found, AttrSource(TypeSource(arg.source), "__hash__"))
    result = realize(function.call_function(tx, [arg], {}))  # 2.15: a lazy constant until realized
    if result.is_python_constant():
        value = result.as_python_constant()
    elif type(result).__name__ == "SymNodeVariable" and result.python_type() is int:
        value = result.evaluate_expr(tx.output)  # specialized, guarded on its value
    else:
        _refuse(cls, f"{type(cls).__qualname__}.__hash__ returned no constant in the trace")
    if not isinstance(value, int):
        from ..dynamo_api import raise_observed

        raise_observed(TypeError, tx, f"hash({cls.__qualname__})", "__hash__ method should return an integer")
    return ConstantVariable.create(hash(value))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`hash(K)` where `type(K)` defines `__hash__` (reading a salt, a registry, the class's "
             "attributes) **returns the first call's number** on every call",
         '2.13–2.15',
         '(`>=2.13`)'),
    ),
    fixes="`hash(K)` where `type(K)` defines `__hash__` returns the first call's value on every call "
    "(torch 2.13+): silently wrong",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.hash_impl (hash(self.value) "
    "under CLASS_MATCH); torch/_dynamo/variables/builtin.py: BuiltinVariable.call_hash",
    mirrors="none upstream yet",
    torch=">=2.13",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_hash", _call_hash,
               params=("tx", "arg")),
    ),
    summary="hash() of a class whose metaclass defines __hash__ runs that __hash__ in the trace",
    history=(
        ("2.5-2.12", "not this gap: `hash(cls)` is a graph break there (`hash-constant-fold` folds only "
         "values whose hash is a pure function of a guarded value)"),
        ("2.13+", "`hash(cls)` is computed at trace time and guarded on the class's identity only: a metaclass "
         "`__hash__` that reads state is baked in (silently wrong)"),
    ),
)
