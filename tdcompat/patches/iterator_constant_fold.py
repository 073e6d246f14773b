"""``sum(it)`` / ``all(it)`` / ``tuple(it)`` ... of an iterator over constants leave it unconsumed (torch 2.5-2.15).

Symptom: ``it = iter([1, 0, 2, 3]); s = sum(it); list(it)`` is ``[1, 0, 2, 3]`` compiled, ``[]`` in CPython; after
``all(it)`` the rest is every item (CPython stops after the first false one: ``[2, 3]``), likewise ``any(it)``. On
2.5-2.8 also ``max``, ``min``, ``sorted``, ``set``, ``tuple``, ``list``, ``'-'.join(map(str, it))``. Silently wrong
under ``fullgraph=True`` on every release 2.5.1-2.15.0 (measured: case ``iterator_constant_fold``,
tests/test_iterator_constant_fold.py).

Root cause: torch/_dynamo/variables/lists.py ``ListIteratorVariable.as_python_constant`` (2.15: also
``BaseListIteratorVariable``/``TupleIteratorVariable``) answers a *new* iterator over its items' constants for an
iterator that has not been advanced, so Dynamo takes it for a Python constant and folds a builtin called on it
(``BuiltinVariable.call_function``'s constant fold: ``sum(<that new iterator>)``). The fold consumes the copy; the
frame's iterator, which it goes on reading, is never advanced.

What the handler accepts: ``as_python_constant()`` of a list/tuple iterator tracker that the frame may advance
(``is_mutable``: made in the frame by ``iter()``): it is not a constant (``NotImplementedError``, Dynamo's own "not a
constant" answer, as it already gives once the iterator has been advanced). Dynamo then traces the call as it does
for an advanced iterator: ``sum``/``all``/``any`` step it (polyfills) and stop where CPython stops, the consumers
that run it to its end exhaust it. An iterator Dynamo cannot advance (no ``is_mutable``: a constant built by Dynamo
itself) stays a constant. Everything else defers.
"""

from __future__ import annotations

from ..dynamo_api import is_mutable
from ..spec import Patch, Target
from ..wrappers import DEFER, NotConstant, fail_safe

NAME = "iterator-constant-fold"


@fail_safe(NAME)
def _as_python_constant(wrapped, instance, args, kwargs):
    """``ListIteratorVariable.as_python_constant()`` (and 2.15's ``TupleIteratorVariable``'s)."""
    if args or kwargs or not is_mutable(instance):
        return DEFER
    raise NotConstant("an iterator the frame advances is not a constant: a copy would not share its position")


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`sum(it)` / `all(it)` / `any(it)` of an iterator over constants: **the iterator untouched** after it "
         "(2.5–2.8 also `tuple(it)`, `sorted(it)`, `max(it)`, ...)", "2.5–2.15", "(`>=2.5`)"),
    ),
    fixes="a builtin called on an iterator over constants was folded over a copy: the iterator stayed where it was",
    upstream="torch/_dynamo/variables/lists.py: ListIteratorVariable.as_python_constant (2.15: "
    "BaseListIteratorVariable, TupleIteratorVariable)",
    mirrors="open upstream (docs/upstream/iterator-constant-fold/)",
    torch=">=2.5",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.lists", "ListIteratorVariable", "as_python_constant", _as_python_constant,
               inherited=True),
        # 2.15: a tuple iterator has its own as_python_constant (before it inherits the list iterator's)
        Target("torch._dynamo.variables.lists", "TupleIteratorVariable", "as_python_constant", _as_python_constant,
               optional=True),
    ),
    summary="an iterator the frame advances is not a constant: builtins called on it are not folded over a copy",
    history=(
        ("2.5-2.8", "builtins folded over a copy of a fresh iterator over constants: sum, all, any, max, min, sorted, "
         "set, tuple, list, str.join"),
        ("2.9-2.15", "sum, all, any folded over a copy"),
    ),
)
