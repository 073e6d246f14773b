"""A module whose class defines ``__hash__`` cannot go into a set or dict (torch 2.10-2.12).

Root cause: 2.10 made ``UserDefinedObjectVariable.is_python_hashable``
(torch/_dynamo/variables/user_defined.py) call ``utils.raise_on_overridden_hash``, so
any user object whose class defines ``__hash__`` in its own ``__dict__`` is
``Unsupported: User-defined object with overridden __hash__`` as a set element or
dict key (``ConstDictVariable``/``SetVariable``: ``is_hashable``). Module trackers
(``UnspecializedNNModuleVariable``) inherit it; up to 2.9 every module was hashable
(``dicts.is_hashable`` listed the module trackers, hashed with ``hash(module)``).
``nn.Module.named_modules()`` keeps a ``memo`` set of the modules it has walked
(``if self not in memo``), so ``for p in m.parameters()`` fails as soon as a
submodule's class defines ``__hash__``: tensordict 0.14's ``TensorDictParams``
(``hash((id(self), id(self.__dict__.get("_param_td"))))``) in every TorchRL loss,
where 2.10 turns the failure inside the generator into an empty ``SkipFrame`` that
skips TorchRL's ``_default_device`` (23 breaks over the eight losses on 2.10.0).
2.13 hashes through ``object_protocol.generic_hash`` and compiles it.

The fix: a module tracker is hashable again, as up to 2.9, with its hash computed
by the module's own ``__hash__`` at trace time (Dynamo's ``get_python_hash``) and
set/dict membership by identity (``is_python_equal``), which is CPython's whenever
distinct modules have distinct hashes (an identity-derived ``__hash__``, as
``TensorDictParams``'): eager calls ``__eq__`` only for equal hashes. Where two
distinct objects do meet with equal hashes (a value-based ``__hash__``: CPython
would ask ``__eq__`` and may merge them), Dynamo asks ``is_python_equal``, and
that graph-breaks instead of answering by identity. Left alone: every other user
object.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "module-overridden-hash"


def _accepted(vt) -> bool:
    """A module tracker whose class defines a ``__hash__`` of its own (not ``None``)."""
    from ..dynamo_api import module_tracker_types

    return type(vt) in module_tracker_types() and vars(type(vt.value)).get("__hash__") is not None


@fail_safe(NAME)
def _is_python_hashable(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.is_python_hashable()``: True for a module tracker whose
    class defines a ``__hash__`` (the case ``raise_on_overridden_hash`` refuses)."""
    if args or kwargs or not _accepted(instance):  # Dynamo allows an inherited __hash__ itself
        return DEFER
    return True


@fail_safe(NAME)
def _is_python_equal(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.is_python_equal(other)``: Dynamo asks it of dict/set keys
    whose hashes are equal. Two distinct objects there, one of them a module accepted
    above: CPython would call ``__eq__`` (and may find them equal); a graph break."""
    if len(args) != 1 or kwargs:
        return DEFER
    other = args[0]
    if not _accepted(instance) or getattr(other, "value", None) is instance.value:
        return DEFER
    from ..dynamo_api import graph_break

    graph_break("distinct keys with equal hashes", f"{instance} == {other}",
                f"{type(instance.value).__qualname__} defines __hash__: CPython would ask __eq__")


PATCH = Patch(
    name=NAME,
    fixes="Unsupported: User-defined object with overridden __hash__ (UnspecializedNNModuleVariable(M)), e.g. "
    "`for p in self.parameters()` over a TensorDictParams submodule (named_modules' memo set; TorchRL's "
    "_default_device: SKIPPED INLINING on 2.10)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedObjectVariable.is_python_hashable "
    "(utils.raise_on_overridden_hash)",
    mirrors="torch <=2.9: dicts.is_hashable accepted every module tracker; torch 2.13: object_protocol.generic_hash",
    torch=">=2.10,<2.13",
    fixed_upstream="2.13: object_protocol.generic_hash (user hashes traced)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "is_python_hashable",
               _is_python_hashable),
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "is_python_equal",
               _is_python_equal, params=("other",)),
    ),
    requires=("torch._dynamo.utils:raise_on_overridden_hash",),
    summary="modules whose class defines __hash__ go into sets and dicts again (named_modules' memo), as up to 2.9",
    history=(
        ("2.5-2.9", "every module tracker is hashable (`dicts.is_hashable`), hashed with `hash(module)`: not this gap"),
        ("2.10-2.12",
         "`UserDefinedObjectVariable.is_python_hashable` calls `raise_on_overridden_hash`: a module whose class "
         "defines `__hash__` in a set or dict is `Unsupported: User-defined object with overridden __hash__`; "
         "`named_modules()`' memo set makes `m.parameters()` fail over a `TensorDictParams` submodule (TorchRL's "
         "`_default_device` on 2.10: `SKIPPED INLINING`)"),
        ("2.13+", "fixed upstream: hashing goes through `object_protocol.generic_hash`"),
    ),
)
