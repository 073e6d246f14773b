"""``d | 1`` and ``d |= 1`` raise CPython's ``TypeError`` in compiled code (torch 2.8-2.12).

Symptom: ``try: d | 1 / except TypeError:`` (or ``d |= None``, any number) in compiled code:
``InternalTorchDynamoError: TypeError: unsupported operand type(s) for |: 'dict' and 'int'``, also
without ``fullgraph`` (the user's program stops). Upstream's ``test_dicts.py``
(``test_builtin_or_with_invalid_types``) fails on 2.8.0 on it; 2.5-2.7 graph-break ("constant fold
exception"). 2.9-2.12 raise it inside the trace, with the wrong text: ``str(error)`` crashes the
compile on 2.9-2.10 (``InternalTorchDynamoError: AttributeError: 'str' object has no attribute
'as_python_constant'``), ``d |= 1`` reads ``"<class 'int'> object is not iterable"`` on 2.9, and
2.11-2.12 say ``"... for |: 'dict'and 'int'"`` (no space): silently wrong wherever a program reads
the message (measured). 2.13 is right.

Root cause: ``ConstDictVariable.call_method("__or__")`` (torch/_dynamo/variables/dicts.py), which
``BuiltinVariable.call_or_``/``call_ior`` send a dict's ``|`` and ``|=`` to, raises a plain Python
``TypeError`` for an operand that is not a dict tracker on 2.8, where Dynamo expects an observed
exception; 2.9-2.12 raise an observed one whose arguments are built wrong.

What the handler accepts: ``BuiltinVariable.call_or_(tx, a, b)`` (``call_ior`` is the same function)
where ``a`` is an exact ``ConstDictVariable`` of a plain ``dict`` and the instruction being traced is
the ``|`` or ``|=`` operator itself (``BINARY_OP`` / ``BINARY_OR`` / ``INPLACE_OR``; a call such as
``d.__or__(1)``, which returns ``NotImplemented`` in CPython, or ``operator.or_``, is deferred); for
``|``, ``b`` a ``ConstantVariable`` holding an exact ``int``, ``float``, ``bool``, ``complex``,
``None``, ``str`` or ``bytes``, or an exact ``ListVariable``/``TupleVariable``; for ``|=``, only the
non-iterable ones (numbers and ``None``). It raises ``TypeError`` in the trace with CPython's text.

Why that is sound: ``dict.__or__`` returns ``NotImplemented`` for anything but a dict, and none of
those types has a ``__ror__`` that accepts a dict (the numbers' return ``NotImplemented``), so
``d | b`` raises ``TypeError: unsupported operand type(s) for |: 'dict' and '<type>'``; ``d |= b``
runs ``dict.update(d, b)``, which on a non-iterable raises ``TypeError: '<type>' object is not
iterable`` before changing ``d``. Whether ``b`` is one of them is its tracker's type, which Dynamo
guards for inputs. Deferred for ``|=``: iterables (``d |= [("k", 1)]`` succeeds, ``d |= "ab"`` raises
``ValueError``); dict subclasses, ``OrderedDict``, user objects (``__ror__``).
"""

from __future__ import annotations

from ..dynamo_api import bind_args, current_binary_operator, is_plain_dict, raise_observed
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dict-or-invalid-operand"

#: Operand types for which both ``dict | b`` and ``dict |= b`` raise TypeError in CPython.
_NON_ITERABLE = frozenset({int, float, bool, complex, type(None)})
#: And those for which only ``dict | b`` does (``dict |= b`` iterates them: pairs, or ValueError).
_NOT_A_DICT = _NON_ITERABLE | {str, bytes}


@fail_safe(NAME)
def _call_or(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_or_(tx, a, b)`` / ``call_ior``: a plain dict with a number or None."""
    bound = bind_args(args, kwargs, ("tx", "a", "b"))
    if bound is None:
        return DEFER
    tx, a, b = bound
    from torch._dynamo.variables import ConstantVariable, ListVariable, TupleVariable

    if not is_plain_dict(a):
        return DEFER
    if type(b) is ConstantVariable:
        kind = type(b.value)
    elif type(b) in (ListVariable, TupleVariable):
        kind = list if type(b) is ListVariable else tuple
    else:
        return DEFER
    operator = current_binary_operator(tx)
    if operator == "|" and kind in _NOT_A_DICT | {list, tuple}:
        message = f"unsupported operand type(s) for |: 'dict' and '{kind.__name__}'"
    elif operator == "|=" and kind in _NON_ITERABLE:
        message = f"'{kind.__name__}' object is not iterable"
    else:
        return DEFER
    effects_begin()
    raise_observed(TypeError, tx, f"dict {operator} {kind.__name__}", message)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`try: d | 1 / except TypeError as e` on a dict: the compile **crashes** '
             '(`InternalTorchDynamoError: TypeError: unsupported operand type(s) for |`, 2.8; '
             "`AttributeError` at `str(e)`, 2.9–2.10), or `str(e)` reads **another text** (`'dict'and "
             "'int'`, 2.11–2.12; `d |= 1`: `<class 'int'> object is not iterable`, 2.9)",
         '2.8–2.12',
         '(`>=2.8,<2.13`)'),
    ),
    fixes="`d | 1`, `d |= None` on a dict: `InternalTorchDynamoError: TypeError: unsupported operand type(s) for |: "
    "'dict' and 'int'` (torch 2.8), also without fullgraph; `str(error)` crashes or reads another text (2.9-2.12)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method('__or__') (a plain TypeError); "
    "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_or_",
    mirrors="torch 2.13: the TypeError is raised inside the trace with CPython's text",
    torch=">=2.8,<2.13",
    fixed_upstream="2.13: `dict | b` raises an observed TypeError with CPython's text",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_or_", _call_or, params=("tx", "a", "b")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_ior", _call_or, params=("tx", "a", "b")),
    ),
    summary="`d | b` / `d |= b` on a plain dict with a number or None raise TypeError in the trace, with CPython's "
            "text",
    history=(
        ("2.5-2.7", "a graph break (\"constant fold exception\")"),
        ("2.8", "the compile crashes: `InternalTorchDynamoError: TypeError: unsupported operand type(s) for |`"),
        ("2.9-2.10", "TypeError raised in the trace, but `str(error)` of `d | 1` crashes the compile "
         "(InternalTorchDynamoError: AttributeError); on 2.9 `d |= 1` reads \"<class 'int'> object is not iterable\""),
        ("2.11-2.12", "TypeError raised in the trace with the text \"... for |: 'dict'and 'int'\" (silently wrong)"),
        ("2.13+", "right"),
    ),
)
