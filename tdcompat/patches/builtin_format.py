"""``format(value, spec)`` is traced as ``str(value).format(spec)`` (every release, 2.5-2.15).

Symptom: silently wrong text under ``fullgraph=True`` on 2.7-2.15: ``format(255, "x")`` is ``'255'`` (eager:
``'ff'``), ``format(s, ">6")`` drops the padding, ``format(2.5, ".3f")`` is ``'2.5'``. On 2.5-2.6 ``format(n, spec)``
of an int crashes the compile (``InternalTorchDynamoError: AttributeError: 'int' object has no attribute
'format'``) and of a str returns the str unpadded; on every release ``format(obj)`` of a user object or a
dynamic int crashes the compile (``InternalTorchDynamoError: ... is not a constant``), also without fullgraph:
the user's program stops. Measured with the case ``builtin_format`` and ``tests/test_builtin_format.py``.

Root cause: torch/_dynamo/variables/builtin.py ``BuiltinVariable._make_handler`` finds a builtin's own handler
by name, ``call_{fn.__name__}``; ``format.__name__`` is ``'format'``, like ``str.format``'s, so the builtin
``format(value, spec)`` reaches ``call_format``, written for ``str.format(format_string, *args)``: the value is
taken as the format string (``str(value)`` from 2.7) and the spec as an argument it does not use.

What the handler accepts: calls of the builtin ``format`` (``str.format`` defers: ``call_format`` is its
handler), with one or two positional arguments (CPython's ``format`` takes no keywords: a graph break, eager
raises) and a constant spec; a spec that is not a ``str`` raises CPython's ``TypeError`` in the trace. A value that
is a constant of a type whose ``__format__`` is a pure function of the value (``str``, ``int``, ``bool``,
``float``, ``complex``, ``bytes``, ``None``: Dynamo guards or the code holds it) is formatted while tracing, as
CPython does; an invalid spec raises its ``ValueError`` in the trace (a graph break where this torch cannot raise
one: ``dynamo_api.raise_observed``). A symbolic int (an int input that changed between calls) under a spec that
formats every int without an error is handed to Dynamo's ``str.format`` as ``"{:" + spec + "}".format(n)``, which
formats the int the graph returns (immutable: its text is the one at the call). Anything else - a user object, a
tensor, a symbolic float, a spec with braces or ``c`` - graph-breaks: eager formats it.
"""

from __future__ import annotations

import builtins
from typing import NoReturn

from ..dynamo_api import graph_break, raise_observed, realize
from ..pure_values import TEXT_BY_VALUE
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "builtin-format"



def _refuse(why: str) -> NoReturn:
    graph_break("format() builtin", "format(value, spec)",
                f"this Dynamo traces format(value, spec) as str(value).format(spec); tdcompat: {why}")


@fail_safe(NAME)
def _format(wrapped, instance, args, kwargs):
    """``BuiltinVariable(format).call_format(tx, value[, spec])``."""
    if getattr(instance, "fn", None) is not builtins.format:
        return DEFER  # str.format: this is its handler
    effects_begin()
    if kwargs:
        _refuse("format() takes no keyword arguments")
    if len(args) not in (2, 3):
        _refuse(f"format() takes 1 or 2 arguments, not {len(args) - 1}")
    tx, value = args[0], args[1]
    spec = args[2] if len(args) == 3 else None
    from torch._dynamo.variables import BuiltinVariable, ConstantVariable

    if spec is None:
        text = ""
    elif not spec.is_python_constant():
        _refuse("the format spec is not a constant")
    else:
        text = spec.as_python_constant()
        if type(text) is not str:
            raise_observed(TypeError, tx, "format(value, spec)",
                           f"format() argument 2 must be str, not {type(text).__name__}")
    if value.is_python_constant() and type(value.as_python_constant()) in TEXT_BY_VALUE:
        try:
            result = builtins.format(value.as_python_constant(), text)
        except ValueError as error:  # an invalid spec: what eager raises, where it raises it
            raise_observed(ValueError, tx, "format(value, spec)", str(error))
        return ConstantVariable.create(result)
    from torch._dynamo.variables import SymNodeVariable

    value = realize(value)
    if not (isinstance(value, SymNodeVariable) and value.python_type() is int and _int_spec(text)):
        _refuse(f"the value is not a constant, or the spec {text!r} is not one every int takes")
    return BuiltinVariable(str.format).call_function(tx, [ConstantVariable.create("{:" + text + "}"), value], {})


@gate(_format)
def _format_gate(original, handle):
    """What is installed on ``call_format``: ``str.format`` (every f-string field) goes straight to Dynamo after one
    identity test."""

    def call_format(self, *args, **kwargs):  # any call: the parameters differ between releases
        if self.fn is not builtins.format:
            return original(self, *args, **kwargs)
        return handle(self, *args, **kwargs)

    return call_format


def _int_spec(text: str) -> bool:
    """Does every int format under ``text`` without an error? (Errors are a property of the spec, except ``c``'s
    range; braces would be a nested field to ``str.format``.)"""
    if "{" in text or "}" in text or text.endswith("c"):
        return False
    try:
        builtins.format(0, text), builtins.format(-1, text)
    except (ValueError, TypeError):
        return False
    return True


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`format(255, 'x')` is `'255'`, `format(s, '>6')` unpadded: the value traced as a format string "
         "(**silently wrong**)", "2.7–2.15", "(`>=2.5`)"),
        ("`format(n, spec)` of an int: `InternalTorchDynamoError: AttributeError: 'int' object has no attribute "
         "'format'`", "2.5–2.6", "(`>=2.5`)"),
        ("`format(obj)` of a user object or a dynamic int: `InternalTorchDynamoError: ... is not a constant` "
         "(the program stops, also without fullgraph)", "2.5–2.15", "(`>=2.5`)"),
    ),
    fixes="format(value, spec) traced as str.format with the value as the format string: wrong text or a crash",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_format (reached by name from _make_handler)",
    mirrors="CPython's builtin format: type(value).__format__(value, spec); Dynamo's FORMAT_VALUE path",
    torch=">=2.5",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_format", _format_gate),
    ),
    summary="format(value, spec) is formatted (constants) or traced as the f-string f'{value:spec}'",
    history=(
        ("2.5-2.6", "the value taken as a format string: a crash for an int, the str itself for a str"),
        ("2.7-2.15", "`str(value).format(spec)`: wrong text; a non-constant value crashes the compile"),
    ),
)
