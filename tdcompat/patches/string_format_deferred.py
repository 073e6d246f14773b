"""f-strings and ``str.format`` of a mutable value are formatted after the graph, from its final state (2.5-2.15).

Symptom: silently wrong text, or a crash of the compiled code, under ``fullgraph=True`` on every release:
``s = f"{y}"; y.add_(1); return s`` returns the tensor after the add; ``l = [n]; s = f"{l}"; l.append(5)`` the
list with 5 (2.7+, where ``n`` is dynamic); ``d = {"a": n}; s = f"{d}"; d["b"] = 1`` the dict with ``b``;
``p.v = v; s = f"{p}"`` of an object passed in its state before the frame (its attribute writes are replayed
after the string is built); ``"{}".format(P(n))`` of an object built in the frame raises ``AttributeError``
from the compiled code on 2.13+. Measured with the case ``string_format_deferred`` and
``tests/test_string_format_deferred.py``. Open upstream (pytorch/pytorch#177582; the PRs #179002 and #182638
were closed), 2.15 included.

Root cause: torch/_dynamo/variables/builtin.py ``BuiltinVariable.call_format`` (``str.format``'s handler, which
``FORMAT_VALUE`` - every f-string field - and ``"...".format(...)`` reach) returns
``StringFormatVariable.create(...)`` (torch/_dynamo/variables/misc.py): unless every argument is a constant it
keeps the arguments and reconstructs ``format_string.format(*args)`` in the code that runs after the graph,
after the graph's in-place ops and before the frame's attribute writes are replayed, so the text is that of
the value at the end of the frame (or before it), not where the format stood.

What the handler accepts: ``str.format`` calls whose format string is a constant (a non-constant one defers:
Dynamo's own handling). When every argument is a constant Dynamo formats while tracing, at the call's place:
deferred to it. When every argument's text is fixed from the call on - a constant of a type whose ``__format__``
reads only the value (``str``, ``int``, ``bool``, ``float``, ``complex``, ``bytes``, ``None``), a symbolic
int (immutable; a symbolic float comes back from 2.5's graph in float32: refused), a string being
formatted, or a plain tuple or ``torch.Size`` of these - Dynamo's deferral
is sound (what is reconstructed after the graph is the same value): deferred to it. Anything else - a tensor, a
list, a dict, a constant list among symbolic numbers - graph-breaks, so eager formats it where the program
does: a working program only loses a graph. One exception keeps ``f"{obj}"`` compiling before 2.14 (2.14+ format
such a field where it stands before it reaches here): a plain user object (exact ``UserDefinedObjectVariable``)
whose class keeps ``object.__format__`` and ``object.__str__``, named only by bare fields (``{}``, ``{0}``,
``{k}``: no spec, conversion, attribute or index), is formatted where the call stands, as CPython does:
``object.__format__(obj, "")`` is ``str(obj)``, which ``object-str-repr`` traces under a guard on the class's
``__repr__`` (only while that patch is installed); its text replaces the argument.
"""

from __future__ import annotations

import itertools
import string
from typing import NoReturn, Optional

from ..dynamo_api import graph_break, realize, static_lookup
from ..pure_values import TEXT_BY_VALUE
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "string-format-deferred"



def _refuse(value) -> NoReturn:
    graph_break("str.format of a mutable value", f"str.format(..., {value})",
                "this Dynamo formats it after the graph, from the value's final state; tdcompat breaks so that "
                "eager formats it where the program does")


def _fixed(vt) -> bool:
    """Is the text of ``vt`` the same after the graph as at the call (so deferring its formatting is sound)?"""
    from torch._dynamo.variables import SymNodeVariable, TupleVariable
    from torch._dynamo.variables.lists import SizeVariable
    from torch._dynamo.variables.misc import StringFormatVariable

    vt = realize(vt)
    if isinstance(vt, SymNodeVariable):
        return vt.python_type() is int  # 2.5 returns a symbolic float from the graph in float32
    if isinstance(vt, StringFormatVariable):
        return True
    if type(vt) in (TupleVariable, SizeVariable):
        return all(_fixed(item) for item in vt.items)
    return vt.is_python_constant() and type(vt.as_python_constant()) in TEXT_BY_VALUE


def _plain_fields(format_string: str) -> Optional[set]:
    """The positions (ints) and keywords (strs) every field of ``format_string`` names bare - ``{}``, ``{0}``,
    ``{k}``, no conversion, no spec, no attribute or index - or None for a string this does not read (nested
    fields, numbering errors: Dynamo's path, whose text ``str.format`` then raises or computes)."""
    plain: set = set()
    other: set = set()
    auto = 0
    try:
        fields = list(string.Formatter().parse(format_string))
    except ValueError:
        return None
    for _literal, field, spec, conversion in fields:
        if field is None:
            continue
        if "{" in (spec or ""):
            return None
        head = field.split(".", 1)[0].split("[", 1)[0]
        key: object = head
        if head == "":
            key, auto = auto, auto + 1
        elif head.isdigit():
            key = int(head)
        (plain if head == field and not spec and conversion is None else other).add(key)
    return plain - other


def _str_now(tx, vt):
    """``str(vt)`` traced where the format stands, for a plain user object whose ``format(obj, "")`` is its
    ``str`` (its class keeps ``object.__format__``) and whose ``str()`` tdcompat traces under a guard before 2.14
    (``object-str-repr``); None where that does not hold (the value is refused)."""
    from torch._dynamo.variables import BuiltinVariable, UserDefinedObjectVariable

    from ..installer import is_installed

    if type(vt) is not UserDefinedObjectVariable or not is_installed("object-str-repr"):
        return None
    cls = type(vt.value)
    if static_lookup(cls, "__format__") is not object.__format__ or static_lookup(cls, "__str__") is not object.__str__:
        return None
    text = BuiltinVariable(str).call_function(tx, [vt], {})
    return text if text.is_python_constant() and type(text.as_python_constant()) is str else None


@fail_safe(NAME)
def _format(wrapped, instance, args, kwargs):
    """``BuiltinVariable(str.format).call_format(tx, format_string, *args, **kwargs)``."""
    if getattr(instance, "fn", None) is not str.format or len(args) < 2:
        return DEFER  # the builtin format (builtin-format's), or a call shape it was not written for
    if not args[1].is_python_constant():
        return DEFER
    values = list(itertools.chain(args[2:], kwargs.values()))
    if all(v.is_python_constant() for v in values) or all(_fixed(v) for v in values):
        return DEFER  # formatted while tracing, or deferred soundly
    effects_begin()
    tx, fmt = args[0], args[1].as_python_constant()
    plain = _plain_fields(fmt) if type(fmt) is str else None
    positional = list(args[2:])
    named = dict(kwargs)
    for key, vt in itertools.chain(enumerate(positional), named.items()):
        if _fixed(vt):
            continue
        text = _str_now(tx, realize(vt)) if plain is not None and key in plain else None
        if text is None:
            _refuse(vt)
        if type(key) is int:
            positional[key] = text
        else:
            named[key] = text
    return wrapped(tx, args[1], *positional, **named)


@gate(_format)
def _format_gate(original, handle):
    """What is installed on ``call_format``: the builtin ``format`` (builtin-format's) and ``str.format`` of
    constants only (an f-string of constants) go straight to Dynamo after an identity test and a type test per
    argument."""

    from torch._dynamo.variables import ConstantVariable

    def call_format(self, *args, **kwargs):  # any call: the parameters differ between releases
        if self.fn is not str.format or not kwargs and all(type(a) is ConstantVariable for a in args[2:]):
            return original(self, *args, **kwargs)
        return handle(self, *args, **kwargs)

    return call_format


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`s = f\"{y}\"; y.add_(1)` / `f\"{lst}\"; lst.append(..)`: the text of the value's final state "
         "(**silently wrong**)", "2.5–2.15", "(`>=2.5`)"),
        ("`f\"{obj}\"` after `obj.v = ..`: the object's text before the frame (**silently wrong**)", "2.5–2.13",
         "(`>=2.5`)"),
        ("`\"{}\".format(P(n))` of an object built in the frame: `AttributeError` from the compiled code",
         "2.13–2.15", "(`>=2.5`)"),
    ),
    fixes="f-strings and str.format of tensors, containers and user objects formatted after the graph, from "
    "their final state (silently wrong)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_format -> "
    "torch/_dynamo/variables/misc.py: StringFormatVariable.create",
    mirrors="pytorch/pytorch#177582 (open; PRs #179002 and #182638 closed)",
    torch=">=2.5",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_format", _format_gate),
    ),
    proven_by="tests/test_string_format_deferred.py::test_without_the_patch_it_is_wrong",
    summary="str.format / f-strings defer formatting only of values whose text cannot change; else a graph break",
    history=(
        ("2.5-2.15", "a non-constant argument is formatted after the graph, from its final state"),
    ),
)
