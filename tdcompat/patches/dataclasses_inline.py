"""Functions of the ``dataclasses`` module are traced, not skipped (torch 2.5).

Root cause: torch 2.5 lists ``dataclasses`` in ``BUILTIN_SKIPLIST``
(torch/_dynamo/trace_rules.py), so every call of ``dataclasses.asdict``,
``fields``, ``replace``, ``is_dataclass`` ... becomes a ``SkipFunctionVariable``
and a graph break (``skip function asdict in file .../dataclasses.py``). TorchRL's
value estimators call ``asdict`` in ``set_keys`` on their first call, so every
loss built with a lazy estimator breaks there 5-7 times (issue 14). Upstream
removed ``dataclasses`` from the skip list in 2.6 (pytorch/pytorch#141294,
fixing #141261 and #141158).

The fix does the same for the calls that reach Dynamo: a ``SkipFunctionVariable``
of a plain function defined in the ``dataclasses`` module itself (its ``__globals__`` is
the module's) is inlined as a user function would be, and ``check_inlineable`` lets the
module's functions (and their generator expressions) through. Sound because nothing is
shortcut: the functions' own bytecode is traced, with Dynamo's guards on every class and
object they read, exactly as 2.6 traces them. What Dynamo cannot trace inside them (the
``dataclass`` decorator's ``exec``, a ``ValueError`` 2.5 cannot raise, a named-tuple field
in ``asdict``) is a graph break as before. Audited against CPython on 2.5.1 (frozen
dataclasses, inheritance, ``InitVar`` and ``__post_init__`` through ``replace``, nested
containers, ``dict_factory``, ``fields``, ``is_dataclass``; tests/test_never_worse_classes.py).
Known, not narrowed: Dynamo 2.5-2.6's own ``is`` on two distinct lists of equal constants
is True, so ``asdict(k)['c'] is k.c`` for a list field is True once ``asdict`` compiles (see
``deepcopy-constant``).
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "dataclasses-inline"


_globals: list = []


def _dataclasses_globals() -> dict:
    if not _globals:
        import dataclasses

        _globals.append(vars(dataclasses))
    return _globals[0]


def _is_dataclasses_function(fn) -> bool:
    import types

    return type(fn) is types.FunctionType and fn.__globals__ is _dataclasses_globals()


@fail_safe(NAME)
def _call_function(wrapped, instance, args, kwargs):
    """``SkipFunctionVariable.call_function(tx, args, kwargs)``."""
    fn = getattr(instance, "value", None)
    if not _is_dataclasses_function(fn) or len(args) != 3 or kwargs:
        return DEFER
    tx, call_args, call_kwargs = args
    from torch._dynamo.variables.functions import UserFunctionVariable

    effects_begin()  # inlines user code
    return tx.inline_user_function_return(
        UserFunctionVariable(fn, source=instance.source), list(call_args), dict(call_kwargs))


@fail_safe(NAME)
def _inlineable(wrapped, instance, args, kwargs):
    """A ``dataclasses`` function is inlineable (the gate below sends only those here)."""
    from torch._dynamo.trace_rules import SkipResult

    return SkipResult(False, "tdcompat dataclasses-inline: a dataclasses function (pytorch/pytorch#141294)")


@gate(_inlineable)
def _check_inlineable(original, handle):
    """``InliningInstructionTranslator.check_inlineable(func)`` (a staticmethod, every inlined
    call): it refuses a function in a skipped file, so the inlining above would be refused
    too. A ``dataclasses`` function is inlineable; anything else goes straight to Dynamo
    after one identity test."""

    def check_inlineable(func):
        try:
            try:  # UserFunctionVariable: .fn (no hasattr: one call less on every inlined call)
                found = func.fn.__globals__
            except AttributeError:  # NestedUserFunctionVariable (a genexpr, a closure): .f_globals
                found = func.f_globals
            mine = found is (_globals[0] if _globals else _dataclasses_globals())
        except Exception:  # noqa: BLE001 (neither: not a function of a module)
            mine = False
        if not mine:
            return original(func)
        return handle(func)

    return check_inlineable


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`Unsupported: 'skip function asdict in file .../dataclasses.py'` (any `dataclasses` "
             "function: `asdict`, `fields`, `replace`, `is_dataclass`; TorchRL's `set_keys` on a loss's "
             'first call)',
         '2.5',
         '(`<2.6`)'),
    ),
    fixes="Unsupported: 'skip function asdict in file .../dataclasses.py' (any dataclasses function: "
    "asdict, fields, replace, is_dataclass; TorchRL's ValueEstimatorBase.set_keys)",
    upstream="torch/_dynamo/trace_rules.py: BUILTIN_SKIPLIST (dataclasses); "
    "entry: torch/_dynamo/variables/functions.py: SkipFunctionVariable.call_function",
    mirrors="pytorch/pytorch#141294 (trace through dataclasses, 2.6; fixes #141261, #141158)",
    torch="<2.6",  # measured: 2.5.1 fails, 2.6.0 passes natively (case dataclasses_asdict_input)
    fixed_upstream="2.6: dataclasses removed from BUILTIN_SKIPLIST (pytorch/pytorch#141294)",
    targets=(
        Target("torch._dynamo.variables.functions", "SkipFunctionVariable", "call_function", _call_function,
               params=("tx", "args", "kwargs")),
        Target("torch._dynamo.symbolic_convert", "InliningInstructionTranslator", "check_inlineable",
               _check_inlineable, params=("func",)),
    ),
    requires=("torch._dynamo.variables.functions:UserFunctionVariable", "torch._dynamo.trace_rules:SkipResult"),
    summary="calls of dataclasses functions (asdict, fields, replace, ...) are traced instead of skipped",
    history=(
        ("2.5",
         "`dataclasses` is in `BUILTIN_SKIPLIST`: every call of `asdict`, `fields`, `replace`, `is_dataclass` is "
         "`Unsupported: 'skip function asdict in file .../dataclasses.py'`; TorchRL's `set_keys` breaks there "
         "5-7 times per loss"),
        ("2.6+",
         "fixed upstream: `dataclasses` removed from the skip list (pytorch/pytorch#141294, fixing #141261 and "
         "#141158; measured passing on 2.6.0)"),
    ),
)
