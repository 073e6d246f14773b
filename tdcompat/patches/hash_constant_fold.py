"""``hash()`` of a constant is not traced (torch 2.5-2.12).

Root cause: ``BuiltinVariable`` (torch/_dynamo/variables/builtin.py) has no
``call_hash`` before 2.13, and ``hash`` is not among the builtins it folds over
constant arguments (``BuiltinVariable._constant_fold_functions``), so
``hash((id(self), 3))`` is ``Unsupported: builtin: hash [TupleVariable]`` (2.5,
2.6) or ``Failed to trace builtin operator hash`` (2.7-2.12), though every
argument is known at trace time. TorchRL meets it through tensordict 0.14's
``TensorDictParams.__hash__`` (``hash((id(self), id(self.__dict__.get("_param_td"))))``):
on 2.10 ``nn.Module.named_modules()`` hashes each submodule into its ``memo``
set and Dynamo traces that ``__hash__`` as a frame of its own, which fails;
those two reasons are 47 of the breaks of the eight losses on 2.10.0.

2.13 added ``BuiltinVariable.call_hash`` (``object_protocol.generic_hash``). This
patch adds that method (an ``added`` target: ``BuiltinVariable._make_handler`` looks
up ``call_<name>`` for the builtin ``hash`` only, on every release 2.5-2.12, so no
other builtin pays anything) and folds ``hash(arg)`` at trace time for exactly
these arguments: a tracker that is a Python constant (``is_python_constant()``)
whose value is, recursively, of the exact type ``str``, ``bytes``, ``int``,
``bool``, ``NoneType``, a ``float`` that is not NaN, or a ``tuple``/``frozenset``
of such values.

Why that is sound: for those types CPython's hash is a pure function of the value
(equal values, equal hashes, in one process), and Dynamo guards the value of every
constant it holds (an input ``int``/``str`` under ``EQUALS_MATCH``/``CONSTANT_MATCH``;
``id(obj)`` under ``obj``'s ``ID_MATCH``; a constant computed in the frame from such
values), so the folded number is the one eager computes for every input the guards
let through. The hash of ``str``/``bytes`` is salted per process (``PYTHONHASHSEED``),
and compiled code runs in the process that traced it.

Deferred (Dynamo's own path: a graph break, as without tdcompat): everything else,
and in particular every hash that is not a function of a guarded value: identity
hashes (``functools.partial``, ``random.Random``, classes, functions, user objects;
a NaN float, hashed by identity since Python 3.10), user ``__hash__`` methods (enum
members, classes whose metaclass defines ``__hash__``, subclasses of ``int``/``str``/
``tuple``... including named tuples), values that are not Python constants (a
``SymInt``, a tensor, an id Dynamo fakes for an object made in the frame) and keyword
arguments. Earlier versions of this patch made ``hash`` constant-foldable
(``can_constant_fold_through``), which folded all of those to the trace-time value:
silently wrong results where Dynamo broke.
"""

from __future__ import annotations

from ..pure_values import hashes_by_value
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "hash-constant-fold"

def _unhashable_object(arg) -> bool:
    """A user object or module tracker whose class has ``__hash__ = None`` on its MRO (read
    statically): CPython's ``hash()`` raises ``TypeError`` for it, whatever its value. Its type is
    guarded (an input's ``TYPE_MATCH``/``ID_MATCH``; an object made in the frame has its class
    fixed by the code)."""
    from torch._dynamo.variables import UserDefinedObjectVariable
    from torch._dynamo.variables.nn_module import NNModuleVariable

    from ..dynamo_api import static_lookup

    if not isinstance(arg, (UserDefinedObjectVariable, NNModuleVariable)):
        return False
    value = getattr(arg, "value", None)
    return value is not None and static_lookup(type(value), "__hash__") is None


def _raise_unhashable(tx, value) -> None:
    """``hash(value)`` raises ``TypeError`` inside the trace where the torch can (2.9+; before that a
    graph break, as Dynamo's own ``Failed to trace builtin operator hash``)."""
    from ..dynamo_api import raise_unhashable
    from ..wrappers import effects_begin

    effects_begin()
    raise_unhashable(tx, value)


@fail_safe(NAME)
def _call_hash(wrapped, instance, args, kwargs):
    """``BuiltinVariable(hash).call_hash(tx, arg)``: the hash of a guarded constant whose
    hash is a function of its value; ``TypeError`` for an object whose class sets ``__hash__ =
    None`` (an unhashable module that ``unhashable-module`` lets Dynamo wrap, a class defining
    ``__eq__`` alone: Dynamo's "Failed to trace builtin operator" made ``try: hash(m) except
    TypeError`` a graph break, 2.8-2.11 fuzzer "regressed"); anything else defers (the added method's stub returns
    None, and Dynamo then breaks as it did without the method)."""
    if len(args) != 2 or kwargs:
        return DEFER
    from ..dynamo_api import build_sourceless, realize

    tx, arg = args
    arg = realize(arg)
    if _unhashable_object(arg):
        _raise_unhashable(tx, arg.value)
    if not arg.is_python_constant():
        return DEFER
    value = arg.as_python_constant()
    if not hashes_by_value(value):
        return DEFER
    return build_sourceless(tx, hash(value))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: builtin: hash [TupleVariable]` / `Failed to trace builtin operator hash` for '
             '`hash()` of a value whose hash is a pure function of it (`str`, `bytes`, `int`, `bool`, '
             '`None`, non-NaN `float`, tuples/frozensets of them; never an identity or user `__hash__`, '
             'which stay a graph break), e.g. `hash((id(self), id(x)))` in a `__hash__`: tensordict '
             "0.14's `TensorDictParams.__hash__`, traced from `named_modules()`'s memo set; the top "
             "break reason of TorchRL's losses on 2.10)",
         '2.5–2.12',
         '(`<2.13`)'),
    ),
    fixes="`hash(<constant>)` (e.g. `hash((id(self), id(other)))` in a `__hash__`, tensordict 0.14's "
    "TensorDictParams) is a graph break (torch <2.13)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable (no call_hash before 2.13; "
    "_constant_fold_functions has no hash)",
    mirrors="torch 2.13: BuiltinVariable.call_hash (object_protocol.generic_hash)",
    torch="<2.13",
    fixed_upstream="2.13: BuiltinVariable.call_hash",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_hash", _call_hash, added=True),
    ),
    summary="hash() of a str/bytes/int/bool/None/non-NaN float, or tuples/frozensets of them, is folded "
    "at trace time, as 2.13 does",
    history=(
        ("2.5-2.6",
         "no `BuiltinVariable.call_hash` and `hash` is not constant-folded: `hash((id(self), 3))` is "
         "`Unsupported: builtin: hash [TupleVariable]`"),
        ("2.7-2.12",
         "`Failed to trace builtin operator hash`. On 2.10 tensordict 0.14's `TensorDictParams.__hash__`, traced "
         "from `nn.Module.named_modules()`'s memo set, is the top break reason of TorchRL's losses (47 breaks "
         "over eight losses on 2.10.0, with the skipped `_default_device` it causes)"),
        ("2.13+",
         "fixed upstream: `BuiltinVariable.call_hash` (`object_protocol.generic_hash`) folds the hash of a "
         "constant"),
    ),
)
