"""Attribute writes on ``collections.abc.MutableMapping`` objects (``MutableMappingVariable``).

Dynamo models an object whose type subclasses ``MutableMapping`` (and is not an
``nn.Module``) as ``MutableMappingVariable`` (torch/_dynamo/variables/user_defined.py),
e.g. a ``tensordict.TensorDict``. For such an object that exists before the
compiled call, ``VariableBuilder._wrap`` (variables/builder.py) returns
``MutableMappingVariable(value, source=...)`` WITHOUT registering it with
``SideEffects.track_object_existing``, unlike every other user object.

torch 2.5: the variable therefore has no mutation marker (``mutable_local is
None``), ``UserDefinedObjectVariable.method_setattr_standard`` finds
``not side_effects.is_attribute_mutation(self)`` and raises
``Unsupported: setattr(MutableMappingVariable(...), name, ...)`` for every
``obj.attr = v`` and ``del obj.attr`` (``call_delattr`` is ``call_setattr``
with a ``DeletedVariable``). Under ``with td.to_module(m):`` this surfaces as
"Graph break under GenericContextWrappingVariable".

torch 2.6-2.8: PR #141376 (mirroring issue #141375) made
``MutableMappingVariable.__init__`` force ``self.mutation_type =
AttributeMutationExisting()`` but left the builder alone. The check now passes
and ``SideEffects.store_attr`` records the write in ``store_attr_mutations``,
keyed by that MutableMappingVariable instance; reads in the same frame see it
(``has_pending_mutation_of_attr``). But the instance is not in
``SideEffects.id_to_variable``, and everything that replays side effects walks
only that table: ``is_empty()`` (so ``compile_subgraph`` even takes its fast
path and never calls the side-effect codegen), ``_get_modified_vars()``,
``codegen_save_tempvars`` and ``codegen_update_mutated``, which emits the
``STORE_ATTR``/``DELETE_ATTR`` onto ``var.source``. The recorded write is
orphaned and silently dropped: the real object keeps its old attributes. This
is why on 2.6 + tensordict 0.7.2 ``TensorDict(**td)`` under
``torch.compile(fullgraph=False)`` ends with "no attribute '_tensordict'": the
caller frame falls back, ``TensorDict.__init__`` is compiled as its own frame
with ``self`` as a sourced input, and all its ``self._x = ...`` are lost.
The same forced ``AttributeMutationExisting()`` also overwrites the
``AttributeMutationNew(cls_source)`` that ``SideEffects.track_object_new``
passes for a mapping constructed inside the graph, so such a mapping escaping
the graph hits ``assert var.source is not None`` in ``codegen_save_tempvars``.

torch 2.9 (as read in the 2.9.1 source): fixed the way this patch does it. The
builder calls ``side_effects.track_object_existing(value, result)`` for
``MutableMapping`` values and ``MutableMappingVariable.__init__`` no longer sets
a mutation type at all (the line was reworked by the pytorch/pytorch#159366 and
#161568 stack before being dropped).

The patch (torch >=2.5,<2.9):

* ``VariableBuilder._wrap``: when the result is a ``MutableMappingVariable``
  with a source and the object is not tracked yet, track it as an existing
  object, exactly as 2.9 does. Its attribute writes are then replayed on the
  real object after the graph (2.6-2.8) or accepted at all (2.5), and two
  paths to the same mapping resolve to one variable (with Dynamo's duplicate
  guard), so a write through one is seen through the other. Values that are not
  ``MutableMapping`` instances are deferred before anything runs; mappings that
  are ``nn.Module`` (``TensorDictParams``) or plain dicts produce other variable
  types and are left alone.
* ``MutableMappingVariable.__init__``: keep a ``mutation_type`` passed in
  explicitly (``AttributeMutationNew`` for a mapping made in the graph, or the
  value carried by ``clone()``) instead of the forced
  ``AttributeMutationExisting()``; without one, 2.6-2.8 behaviour is kept.

Left alone: reading an attribute after ``obj.__dict__`` was fetched in the same
frame still consults the ``__dict__`` variable first (same in 2.9); a replayed
value that Dynamo cannot reconstruct (tensordict 0.7.2's ``_last_op`` holds a
weakref, ``reconstruct: WeakRefVariable()`` on 2.6) is the separate
"weakref-reconstruct" patch.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate, replay, replay_error

NAME = "mutable-mapping-setattr"

_classes = None


def _load():
    global _classes
    if _classes is None:
        from collections.abc import MutableMapping

        from torch._dynamo.variables.user_defined import MutableMappingVariable

        _classes = (MutableMapping, MutableMappingVariable)
    return _classes


def _value_arg(args, kwargs):
    if args:
        return args[0]
    return kwargs.get("value", None)


@fail_safe(NAME)
def _track_existing_mapping(wrapped, instance, args, kwargs):
    """``VariableBuilder._wrap(value)``: register a sourced mapping with SideEffects."""
    mapping_cls, variable_cls = _load()
    value = _value_arg(args, kwargs)
    if not isinstance(value, mapping_cls):
        return DEFER
    result = wrapped(*args, **kwargs)
    if type(result) is not variable_cls or result.source is None:
        return result
    side_effects = instance.tx.output.side_effects
    if value in side_effects:
        return result
    return side_effects.track_object_existing(value, result)


@gate(_track_existing_mapping)
def _track_existing_mapping_gate(original, handle):
    """What is installed on ``VariableBuilder._wrap``: Dynamo's ``_wrap`` runs here, once.
    The handler acts only on a sourced ``MutableMappingVariable``, so only that result
    (or an exception, whose fate depends on the value) reaches it, replayed as
    ``wrapped``; everything else is returned without testing the value against the
    ``MutableMapping`` ABC (a Python-level check, for every value Dynamo wraps)."""

    def _wrap(self, value):
        try:
            result = original(self, value)
        except Exception as error:  # noqa: BLE001 - the handler says whose failure it is
            return _track_existing_mapping(replay_error(error), self, (value,), {})
        try:
            other = type(result) is not (_classes or _load())[1] or result.source is None
        except Exception:  # noqa: BLE001 - the handler decides, under the fail-safe
            other = False
        if other:
            return result
        return _track_existing_mapping(replay(result), self, (value,), {})

    return _wrap


@fail_safe(NAME)
def _keep_given_mutation_type(wrapped, instance, args, kwargs):
    """``MutableMappingVariable.__init__``: keep an explicit ``mutation_type``."""
    given = kwargs.get("mutation_type")
    if given is None:
        return DEFER
    result = wrapped(*args, **kwargs)
    if getattr(instance, "mutation_type", given) is not given:
        instance.mutation_type = given
    return result


def _still_broken() -> bool:
    """For a pre-release at the upper edge: the builder still returns sourced
    mappings untracked (the 2.5-2.8 line ``return MutableMappingVariable(value,
    source=self.source)`` with no ``track_object_existing``)."""
    import inspect

    from torch._dynamo.variables.builder import VariableBuilder

    return "return MutableMappingVariable(value, source=self.source)" in inspect.getsource(VariableBuilder._wrap)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: setattr(MutableMappingVariable(TensorDict), _last_op, ...)`, or `Graph break '
             'under GenericContextWrappingVariable` around `with td.to_module(module):`',
         '2.5',
         '(`>=2.5,<2.9`)'),
        ('attribute writes on a `MutableMapping` **silently lost** after the compiled call; '
             "`AttributeError: 'TensorDict' object has no attribute '_tensordict'` from "
             '`TensorDict(**params)`',
         '2.6–2.8',
         ''),
    ),
    fixes=(
        "Unsupported: setattr(MutableMappingVariable(...), name, ...) on torch 2.5; on 2.6-2.8 attribute "
        "writes on a MutableMapping (e.g. TensorDict) are silently dropped after the compiled call"
    ),
    upstream=(
        "torch/_dynamo/variables/builder.py: VariableBuilder._wrap (MutableMapping branch, track_object_existing); "
        "torch/_dynamo/variables/user_defined.py: MutableMappingVariable.__init__"
    ),
    mirrors="pytorch/pytorch#141375 and PR #141376 "
            "(completed in 2.9: builder tracks MutableMapping; see #159366, #161568)",
    torch=">=2.5,<2.9",
    fixed_upstream="2.9: the builder tracks MutableMapping inputs (pytorch/pytorch#159366, #161568)",
    targets=(
        Target(
            "torch._dynamo.variables.builder",
            "VariableBuilder",
            "_wrap",
            _track_existing_mapping_gate,
            params=("value",),
        ),
        Target(
            "torch._dynamo.variables.user_defined",
            "MutableMappingVariable",
            "__init__",
            _keep_given_mutation_type,
            params=("value",),
        ),
    ),
    requires=(
        "torch._dynamo.side_effects:SideEffects.track_object_existing",
        "torch._dynamo.side_effects:SideEffects.__contains__",
    ),
    probe=_still_broken,
    summary="attribute assignment/deletion on MutableMapping objects: traced (2.5) and replayed (2.6-2.8)",
    history=(
        ("2.5",
         "an input `MutableMapping` is not tracked (no mutation marker): every `obj.attr = v` and `del obj.attr` "
         "is `Unsupported: setattr(MutableMappingVariable(...), name, ...)`; under `with td.to_module(m):` "
         "`Graph break under GenericContextWrappingVariable`"),
        ("2.6-2.8",
         "pytorch/pytorch#141376 (issue #141375) forces `AttributeMutationExisting()` but the builder still does "
         "not track the mapping: its writes are seen in the frame and silently dropped after it (2.6 + "
         "tensordict 0.7.2: `TensorDict(**td)` ends in `no attribute '_tensordict'`); a mapping made in the "
         "graph that escapes hits `assert var.source is not None`"),
        ("2.9+",
         "fixed upstream: the builder tracks `MutableMapping` inputs (`track_object_existing`; "
         "pytorch/pytorch#159366, #161568)"),
    ),
)
