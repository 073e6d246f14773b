"""``with obj:`` for a user object Dynamo does not track as a context manager.

Symptom: ``Unsupported: BEFORE_WITH MutableMappingVariable(TensorDict)`` (2.5,
2.6), ``Unsupported context manager ... Attempted SETUP_WITH/BEFORE_WITH on
...`` (2.7 on), shown under fullgraph as ``Graph break under
GenericContextWrappingVariable`` when it happens inside another ``with``. It
is what stops documented cell 3 on torch 2.5.1 + tensordict 0.6.2 once
``instance-dict-writes`` lets ``TensorDictParams.__init__`` through: when
``to_module``'s ``__exit__`` restores the nested ``TensorDictParams``,
tensordict 0.6's ``_unlock_and_set`` (tensordict/nn/params.py) runs
``with _self._param_td.unlock_():`` on the input's inner ``TensorDict``
(tensordict 0.7 skips the ``with`` unless locked; 0.15 removed it, "Dynamo
cannot enter a tensordict passed into the compiled region as a context
manager").

Root cause: ``InstructionTranslatorBase.setup_or_before_with``
(torch/_dynamo/symbolic_convert.py) accepts only ``ContextWrappingVariable``
and ``GenericContextWrappingVariable``, and Dynamo makes the latter only for
objects it sees being *created* (``UserDefinedClassVariable.call_function``;
from 2.7 also ``SideEffects.track_object_new_from_user_defined_class``, i.e.
``cls.__new__(cls)``). A context manager that comes from a source (an input,
an attribute of one, what one of its methods returns) is a
``UserDefinedObjectVariable``/``MutableMappingVariable``, and ``with`` on it
graph-breaks on every release measured (2.5.1-2.15.0 for a MutableMapping;
2.14.1 and later accept plain objects).

The patch: for exactly those two tracker types, when the class's
``__enter__``/``__exit__`` are plain Python functions, the class supports
Dynamo's attribute side effects and it is not one of Dynamo's forbidden
context managers, the tracker on the stack is wrapped in a
``GenericContextWrappingVariable`` whose ``enter``/``exit`` run Dynamo's own
``GenericContextWrappingVariable.enter``/``exit`` with the *original* tracker
as ``self`` (so every attribute write in ``__enter__``/``__exit__`` lands on
the object's one side-effect record, and the release-specific bookkeeping of
``exit`` is Dynamo's). Everything else defers to Dynamo.
"""

from __future__ import annotations

from ..dynamo_api import peek, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "input-context-manager"

_cache: dict = {}


def _classes():
    found = _cache.get("classes")
    if found is None:
        from torch._dynamo.variables.ctx_manager import GenericContextWrappingVariable
        from torch._dynamo.variables.user_defined import MutableMappingVariable, UserDefinedObjectVariable

        class InputContextWrappingVariable(GenericContextWrappingVariable):
            """``with target:`` where ``target`` is an already tracked user object."""

            def __init__(self, target, **kwargs):
                super().__init__(target.value, source=target.source, **kwargs)
                self.target = target

            def _as_target(self, method, tx, *args):
                # Dynamo's enter/exit read ``self.source`` and ``self.cm_obj`` and bind
                # ``self`` as the method's receiver: run them on the original tracker.
                target = self.target
                had = "cm_obj" in target.__dict__
                target.cm_obj = target.value
                try:
                    return method(target, tx, *args)
                finally:
                    if not had:
                        target.__dict__.pop("cm_obj", None)

            def enter(self, tx, *args):
                return self._as_target(GenericContextWrappingVariable.enter, tx, *args)

            def exit(self, tx, *args):
                return self._as_target(GenericContextWrappingVariable.exit, tx, *args)

            def reconstruct(self, codegen):
                codegen(self.target)

        found = _cache["classes"] = (
            frozenset((UserDefinedObjectVariable, MutableMappingVariable)),
            InputContextWrappingVariable,
        )
    return found


def _plain_context_manager(cls) -> bool:
    import inspect

    from torch._dynamo.side_effects import SideEffects
    from torch._dynamo.variables import user_defined

    for name in ("__enter__", "__exit__"):
        if not inspect.isfunction(inspect.getattr_static(cls, name, None)):
            return False
    forbidden = getattr(user_defined, "is_forbidden_context_manager", None)
    if forbidden is not None and forbidden(cls):
        return False
    return SideEffects.cls_supports_mutation_side_effects(cls)


@fail_safe(NAME)
def _setup_or_before_with(wrapped, instance, args, kwargs):
    stack = getattr(instance, "stack", None)
    if not stack:
        return DEFER
    receivers, wrapper_cls = _classes()
    ctx, value = peek(stack[-1])  # a frame input may still be a lazy tracker
    if ctx is None:
        if not _plain_context_manager(type(value)):
            return DEFER
        ctx = realize(stack[-1])
    if type(ctx) not in receivers or not _plain_context_manager(type(ctx.value)):
        return DEFER
    effects_begin()
    stack[-1] = wrapper_cls(ctx)
    return DEFER  # Dynamo's own setup_or_before_with, now on a context-manager tracker


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: BEFORE_WITH MutableMappingVariable(TensorDict)` / `Unsupported context '
             'manager` for `with obj:` on an object passed in (tensordict 0.6 `with td.unlock_():`)',
         'every release for mappings; plain objects before 2.14',
         '(`>=2.5`)'),
    ),
    fixes="Unsupported: BEFORE_WITH MutableMappingVariable(TensorDict) / Unsupported context manager "
    "(with <an input object that has __enter__/__exit__>)",
    upstream="torch/_dynamo/symbolic_convert.py: InstructionTranslatorBase.setup_or_before_with",
    mirrors="tensordict 0.15 workaround in TensorDictParams (no `with self._param_td.unlock_()`); "
    "no upstream fix for MutableMapping context managers as of 2.15",
    torch=">=2.5",
    targets=(
        Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", "setup_or_before_with",
               _setup_or_before_with, params=("inst",)),
    ),
    requires=(
        "torch._dynamo.variables.ctx_manager:GenericContextWrappingVariable.enter",
        "torch._dynamo.variables.ctx_manager:GenericContextWrappingVariable.exit",
        "torch._dynamo.variables.user_defined:MutableMappingVariable",
        "torch._dynamo.side_effects:SideEffects.cls_supports_mutation_side_effects",
    ),
    # 2.6-2.8: the writes in __enter__/__exit__ of an input mapping are only replayed once it is tracked.
    needs=("mutable-mapping-setattr",),
    summary="with <user object or MutableMapping from an input>: enter/exit traced as a context manager",
    history=(
        ("2.5-2.6",
         "`with obj:` on an object from a source (an input, an attribute of one) breaks: `Unsupported: "
         "BEFORE_WITH MutableMappingVariable(TensorDict)` (`Graph break under GenericContextWrappingVariable` "
         "inside another `with`); stops documented cell 3 on 2.5.1 + tensordict 0.6.2 (`with "
         "_self._param_td.unlock_():`)"),
        ("2.7-2.13",
         "`Unsupported context manager ... Attempted SETUP_WITH/BEFORE_WITH on ...`, for plain objects and "
         "mappings"),
        ("2.14+",
         "plain objects are accepted (measured from 2.14.1); a `MutableMapping` passed in still breaks (measured "
         "through 2.15.0). Open upstream; tensordict 0.15 no longer enters the input tensordict"),
    ),
)
