"""A builtin classmethod read from a class crashes the compile on its own guard (torch 2.5-2.11).

Symptom: ``type(d).fromkeys(d, v)`` or ``Sub.fromkeys(...)`` for ``class Sub(dict)`` (also an
``OrderedDict`` subclass, ``d.fromkeys``), ``MyInt.from_bytes(...)``, ``C.__init_subclass__``: any
classmethod of a builtin type read through a class that Dynamo does not model. Without ``fullgraph``,
``AssertionError: Guard check failed: ___check_obj_id(type(L['d']).fromkeys, ...)`` ("Guard failed on the
same frame it was created", 2.10-2.11) whenever the frame compiles a graph: the user's program stops; with
``fullgraph``, the same crash where the method is read but not called (``m.__name__``, ``callable(m)``).
Measured on 2.5.1-2.11.0 (2.12 builds no identity guard for it). Found by the differential fuzzer on
2.5.1 (seed 1021915830, program 1021918895748083: tdcompat's truth test let the frame reach the call).

Root cause: ``SkipFunctionVariable.create_with_source`` (torch/_dynamo/variables/functions.py) guards the
value it wraps by identity (``FUNCTION_MATCH``/``CLOSURE_MATCH``/``BUILTIN_MATCH``, each an ``ID_MATCH``
here). A classmethod descriptor of a builtin type (``types.ClassMethodDescriptorType``) binds a new
method object on every read, so that guard is false the moment it is built, and Dynamo's self-check of a
new guard raises.

What the handler accepts: a ``builtin_function_or_method`` whose ``__self__`` is a class and whose name,
looked up statically through that class (``inspect.getattr_static``: no descriptor or user code runs), is
a ``ClassMethodDescriptorType``: exactly the values whose identity guard cannot hold. For those it raises
a graph break before any guard is made, so the read runs in Python (it is never traced). That is sound
because nothing is traced: without ``fullgraph`` the frame runs the read and the call eagerly, as
CPython; with it, the compile stops with ``Unsupported`` where it crashed or broke before. Every other
value defers. (Upstream 2.12 drops the identity guard for bound builtin methods and keeps tracing;
that also makes ``type(d).fromkeys is type(d).fromkeys`` True, where CPython says False, so this patch
breaks instead.) From 2.7 a ``dict``/``OrderedDict`` subclass's own builtin ``fromkeys`` read through the class
never gets here: ``dict-subclass-fromkeys`` reads it as Dynamo reads ``OrderedDict.fromkeys``.
"""

from __future__ import annotations

import inspect
import types

from ..dynamo_api import bind_args, graph_break, guard_bound_builtin
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "class-builtin-classmethod"


def _bound_per_read(value) -> bool:
    """Is ``value`` a builtin classmethod bound to a class, which every read of it makes anew?"""
    if type(value) is not types.BuiltinMethodType:
        return False
    owner = value.__self__
    if not isinstance(owner, type):
        return False
    try:
        found = inspect.getattr_static(owner, value.__name__)
    except AttributeError:
        return False
    return isinstance(found, types.ClassMethodDescriptorType)


@fail_safe(NAME)
def _create_with_source(wrapped, instance, args, kwargs):
    """``SkipFunctionVariable.create_with_source(value, source)`` (a classmethod)."""
    bound = bind_args(args, kwargs, ("value", "source"))
    if bound is None or not _bound_per_read(bound[0]):
        return DEFER
    value, source = bound
    guard_bound_builtin(source)  # what 2.5-2.6 constant-fold after the break (getattr of constants)
    graph_break("builtin classmethod read from a class",
                f"{getattr(value.__self__, '__qualname__', value.__self__)}.{value.__name__}",
                "each read binds a new method object, which an identity guard cannot match; "
                "the read runs in Python")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`type(d).fromkeys(d, v)` / `Sub.fromkeys(...)` of a dict subclass, `MyInt.from_bytes(...)`, "
         "`C.__init_subclass__`: **the compile crashes** (`AssertionError: Guard check failed: "
         "___check_obj_id(type(L['d']).fromkeys, ...)`), also without `fullgraph` (tdcompat: a graph break)",
         "2.5–2.11",
         "(`<2.12`)"),
    ),
    fixes="a classmethod of a builtin type read from a class (`type(d).fromkeys`, `Sub.fromkeys`, "
    "`MyInt.from_bytes`) crashes the compile on its own identity guard (AssertionError: Guard check failed), "
    "also without fullgraph (torch 2.5-2.11)",
    upstream="torch/_dynamo/variables/functions.py: SkipFunctionVariable.create_with_source",
    mirrors="torch 2.12: SkipFunctionVariable.create_with_source builds no identity guard for a bound "
    "builtin method (this patch graph-breaks instead: see the docstring)",
    torch="<2.12",
    fixed_upstream="2.12: no identity guard on a bound builtin method (a graph break at the call)",
    targets=(
        Target("torch._dynamo.variables.functions", "SkipFunctionVariable", "create_with_source",
               _create_with_source, params=("value", "source")),
    ),
    summary="a builtin classmethod read from a class graph-breaks instead of crashing on its identity guard",
    proven_by="tests/test_class_builtin_classmethod.py::test_without_the_patch_the_compile_crashes",
    history=(
        ("2.5-2.11", "`AssertionError: Guard check failed: ___check_obj_id(type(L['d']).fromkeys, ...)` "
         "whenever the frame compiles a graph, also without fullgraph"),
        ("2.12+", "no identity guard: a graph break at the call (`f is f` of two reads is True: wrong)"),
    ),
)
