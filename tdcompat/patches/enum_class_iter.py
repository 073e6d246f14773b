"""Iterating an ``Enum`` class is ``Unsupported`` (torch 2.5-2.11).

Symptom: ``for m in SomeEnum:``, ``list(SomeEnum)``, ``tuple(SomeEnum)``,
``[... for m in SomeEnum]`` or ``all(... for m in SomeEnum)`` in compiled code
graph-breaks (``fullgraph=True`` fails). TorchRL hits it on every loss's first
call (``torchrl/objectives/utils.py: _ensure_builtin_value_estimators_registered``
iterates ``ValueEstimators``).

Root cause: Dynamo models an ``Enum`` class as ``UserDefinedClassVariable``
(torch/_dynamo/variables/user_defined.py), which has no
``unpack_var_sequence``; ``BuiltinVariable.call_iter`` (variables/builtin.py)
then falls back to ``call_method(__iter__)`` on 2.5-2.9 ("call_method
UserDefinedClassVariable(<enum ...>) __iter__", "Unsupported method call") or to
the ``polyfills.builtins.iter_`` polyfill on 2.10-2.11 ("Observed exception",
"failed to bind arguments"), and ``list()``/``tuple()`` fail in
``_call_iter_tuple_list`` ("builtin: list", "Failed to trace builtin
operator"). ``len(SomeEnum)`` works on every release.

The fix, as torch 2.12 does it (``UserDefinedClassVariable.unpack_var_sequence``
builds ``VariableTracker.build(tx, item) for item in self.value`` for an Enum
class): an Enum's members are fixed once the class exists, so for a class whose
metaclass iterates as ``enum.EnumMeta`` does, ``unpack_var_sequence`` returns
one sourceless ``EnumVariable`` per member, and ``iter(cls)`` is a list iterator
over them. The class itself is guarded as Dynamo guards any class it reads
(``ID_MATCH`` on its source), which pins the members. 2.11 models the class
as ``UserDefinedEnumClassVariable`` (``__contains__`` only; its docstring lists
``__iter__`` as not yet supported): handled the same. Any other class, a
metaclass with its own ``__iter__``, or ``iter(cls, sentinel)``: Dynamo's own
method.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate

NAME = "enum-class-iter"


_kinds: tuple = ()  # the trackers of a class, once loaded


def _enum_members(obj):
    """The members of the Enum class ``obj`` tracks, or None for anything else."""
    global _kinds
    import enum

    from torch._dynamo.variables import user_defined

    # 2.11 models Enum classes as UserDefinedEnumClassVariable (still without __iter__)
    kinds = _kinds = (user_defined.UserDefinedClassVariable, getattr(user_defined, "UserDefinedEnumClassVariable", None))
    if type(obj) not in kinds:
        return None
    cls = obj.value
    if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
        return None
    meta = type(cls)
    if getattr(meta, "__iter__", None) is not enum.EnumMeta.__iter__:
        return None  # a metaclass that iterates its own way
    return list(cls)


@fail_safe(NAME)
def _unpack_var_sequence(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.unpack_var_sequence(tx)`` (inherited from VariableTracker)."""
    if len(args) != 1 or kwargs:
        return DEFER
    members = _enum_members(instance)
    if members is None:
        return DEFER
    from ..dynamo_api import build_sourceless

    (tx,) = args
    return [build_sourceless(tx, m) for m in members]


@fail_safe(NAME)
def _call_iter(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_iter(tx, obj, *args)``: ``iter(EnumClass)``, ``for m in EnumClass``."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, obj = args
    members = _enum_members(obj)
    if members is None:
        return DEFER
    from torch._dynamo.variables import ListIteratorVariable

    from ..dynamo_api import build_sourceless, new_object_kwargs

    return ListIteratorVariable([build_sourceless(tx, m) for m in members], **new_object_kwargs())


@gate(_call_iter)
def _call_iter_gate(original, handle):
    """What is installed on ``BuiltinVariable.call_iter``: ``iter(x)`` of a tracker that
    is not a class goes straight to Dynamo (one type test, once the kinds are loaded)."""

    def call_iter(self, tx, obj, *args, **kwargs):
        if _kinds and not args and not kwargs and type(obj) not in _kinds:
            return original(self, tx, obj)
        return handle(self, tx, obj, *args, **kwargs)

    return call_iter


PATCH = Patch(
    name=NAME,
    fixes="Unsupported: call_method UserDefinedClassVariable(<enum ...>) __iter__ / "
    "Dynamo does not know how to trace method `__iter__` of class `EnumType` / builtin: list "
    "[UserDefinedClassVariable] (iterating an Enum class: for m in E, list(E), tuple(E))",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.unpack_var_sequence; "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_iter",
    mirrors="torch 2.12 UserDefinedClassVariable.unpack_var_sequence for Enum classes",
    torch="<2.12",
    fixed_upstream="2.12: UserDefinedClassVariable.unpack_var_sequence builds the members of an Enum class",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "unpack_var_sequence",
               _unpack_var_sequence, inherited=True, params=("tx",)),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_iter", _call_iter_gate,
               params=("tx", "obj")),
    ),
    requires=(
        "torch._dynamo.variables:ListIteratorVariable",
        "torch._dynamo.variables.builder:SourcelessBuilder.create",
    ),
    summary="iterating an Enum class yields its members (sourceless EnumVariables; the class is ID-matched)",
    history=(
        ("2.5-2.9",
         "an `Enum` class (`UserDefinedClassVariable`) has no `unpack_var_sequence`: `for m in E` is "
         "`Unsupported: call_method UserDefinedClassVariable(<enum ...>) __iter__` / `Unsupported method call`; "
         "`list(E)`, `tuple(E)`: `builtin: list`, `Failed to trace builtin operator` (TorchRL's "
         "`_ensure_builtin_value_estimators_registered` on every loss's first call). `len(E)` works"),
        ("2.10-2.11",
         "`iter(E)` falls to the `polyfills.builtins.iter_` polyfill: `Observed exception`, `failed to bind "
         "arguments`; `list(E)`/`tuple(E)` break as before; 2.11's `UserDefinedEnumClassVariable` supports "
         "`__contains__` only"),
        ("2.12+",
         "fixed upstream: `UserDefinedClassVariable.unpack_var_sequence` builds the members of an Enum class"),
    ),
)
