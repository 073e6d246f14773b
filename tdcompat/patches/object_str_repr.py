"""``str(obj)`` of an object whose class keeps ``object.__str__`` is its repr at trace time (torch <2.14).

Symptom: silently wrong results under ``fullgraph=True``, 2.5-2.13. ``str(p)`` of an object passed in, whose
class defines ``__repr__`` (not ``__str__``), is a constant computed once while tracing, from the real object:
after ``p.v = p.v + 1`` in the frame it still shows the old value, and on a later call with another ``p`` (same
type, nothing else read) the first call's string comes back. ``str(d)`` of a dict subclass passed in is the
dict's items when the frame was traced, not after its writes. On 2.13 an ``OrderedDict`` or ``defaultdict``
built in the frame prints empty (``'defaultdict(None, {})'``: the placeholder object Dynamo allocated). Measured
with the case ``object_str_repr`` and ``tests/test_object_str_repr.py``.

Root cause: torch/_dynamo/variables/builtin.py ``BuiltinVariable.call_str``: for a ``UserDefinedObjectVariable``
(and its subclasses: dict subclasses, ``MutableMapping``s, unspecialized modules) whose type keeps
``object.__str__`` it returns ``ConstantVariable(arg.value.__str__())``, running the real object's repr on the
real object while tracing, with no guard on anything the repr reads. 2.14 answers ``str`` with
``object_protocol.generic_str``, which falls back to the tracked ``repr`` (CPython's ``object_str`` calls the
type's ``tp_repr``).

What the handler accepts: ``str(arg)`` of a ``UserDefinedObjectVariable`` (or subclass) whose class's ``__str__``,
read statically along the MRO, is ``object.__str__`` - the one branch that folds. CPython's ``str()`` then
calls ``type(obj).__repr__(obj)`` and checks the result is a ``str``; the handler does the same in the trace.
Where the class's ``__repr__`` (static MRO lookup, which is what the type slot calls) is a plain Python function,
it is inlined on the tracker, under an ``ID_MATCH`` guard on ``type(obj).__repr__`` read from the object's source
(or the class's source for an object built in the frame), so a class that later gets another ``__repr__``
recompiles (2.13's own ``generic_repr`` reads it unguarded: the first text again; 2.14-2.15 natively too). A repr
written in C (a dict subclass's, an ``OrderedDict``'s) goes to Dynamo's ``generic_repr`` on 2.13 (each tracker's
``repr_impl``, what 2.14 calls) and graph-breaks before, as does ``object.__repr__``'s identity string, which the
fold computed from the first call's object. An object with no source to guard, or a result that is not a
constant ``str``, graph-breaks: never the fold. A class with its own ``__str__`` defers (Dynamo inlines it, or
refuses a C one).
"""

from __future__ import annotations

import types
from typing import NoReturn

from ..dynamo_api import bind_args, graph_break, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "object-str-repr"


def _refuse(arg, why: str) -> NoReturn:
    graph_break("str() of a user-defined object", f"str({arg})",
                f"this Dynamo folds str() from the real object while tracing; tdcompat traces its repr instead: {why}")


def _repr_source(arg):
    """A source for ``type(obj).__repr__``: through the object's own source, or the class it was built from."""
    from torch._dynamo.source import AttrSource

    if getattr(arg, "source", None) is not None:
        return AttrSource(AttrSource(arg.source, "__class__"), "__repr__")
    cls_source = getattr(arg, "cls_source", None)
    return None if cls_source is None else AttrSource(cls_source, "__repr__")


@fail_safe(NAME)
def _str(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_str(tx, arg)``."""
    bound = bind_args(args, kwargs, ("tx", "arg"))
    if bound is None:
        return DEFER
    tx, arg = bound
    from torch._dynamo.variables import UserDefinedObjectVariable

    if not isinstance(arg, UserDefinedObjectVariable):
        return DEFER
    cls = type(arg.value)
    if static_lookup(cls, "__str__") is not object.__str__:
        return DEFER  # its own __str__: Dynamo inlines a Python one, refuses a C one
    effects_begin()
    rep = static_lookup(cls, "__repr__")
    if type(rep) is types.FunctionType:
        result = _traced_repr(tx, arg, rep)  # guarded (2.13's generic_repr reads the class's __repr__ unguarded)
    else:
        try:
            from torch._dynamo.variables.object_protocol import generic_repr
        except ImportError:  # before 2.13
            _refuse(arg, f"{cls.__name__}.__repr__ is not Python code")
        result = generic_repr(tx, arg)  # each tracker's repr_impl (a C repr: a dict subclass's, an OrderedDict's)
    if not (result.is_python_constant() and type(result.as_python_constant()) is str):
        _refuse(arg, "its repr is not a constant str")
    return result


def _traced_repr(tx, arg, rep):
    """``rep``, ``type(obj).__repr__`` (a Python function), inlined on ``arg`` under a guard on it."""
    source = _repr_source(arg)
    if source is None:
        _refuse(arg, "no source to guard its class's __repr__")
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.variables.functions import UserFunctionVariable

    install_guard(source.make_guard(GuardBuilder.ID_MATCH))
    return tx.inline_user_function_return(UserFunctionVariable(rep, source=source), [arg], {})


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`str(obj)` of an object whose class defines only `__repr__` is the real object's repr at trace time: "
         "stale after the frame's writes and on later calls (**silently wrong**)", "2.5–2.13", "(`<2.14`)"),
        ("`str(od)` / `str(dd)` of an `OrderedDict` / `defaultdict` built in the frame prints empty "
         "(**silently wrong**)", "2.13", "(`<2.14`)"),
    ),
    fixes="str() of a user object, dict subclass or mapping folded from the real object while tracing: stale "
    "text (silently wrong)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_str",
    mirrors="2.14: BuiltinVariable.call_str -> object_protocol.generic_str (tp_str, else the traced tp_repr)",
    torch="<2.14",
    fixed_upstream="2.14: object_protocol.generic_str",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_str", _str, params=("tx", "arg")),
    ),
    summary="str() of an object without its own __str__ traces its repr (guarded) instead of folding the real one",
    history=(
        ("2.5-2.12", "`str(obj)` folded from the real object's repr, unguarded"),
        ("2.13", "the same; an `OrderedDict`/`defaultdict` built in the frame prints its empty placeholder"),
        ("2.14+", "right: `generic_str`"),
    ),
)
