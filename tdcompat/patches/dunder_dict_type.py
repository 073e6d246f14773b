"""``isinstance(obj.__dict__, dict)`` / ``type(obj.__dict__)`` graph-break (torch 2.5-2.11).

Root cause. For a user object (``UserDefinedObjectVariable`` and its
subclasses ``UnspecializedNNModuleVariable``, ``MutableMappingVariable``,
``GenericContextWrappingVariable``) Dynamo answers ``obj.__dict__`` with
``GetAttrVariable(obj, "__dict__")`` (torch/_dynamo/variables/misc.py), which
does not know its own type: ``var_getattr`` sets no ``py_type`` for ``__dict__``,
and the base ``VariableTracker.python_type`` it ends in tries
``as_python_constant`` and raises ``NotImplementedError``. So
``isinstance(obj.__dict__, dict)`` and ``type(obj.__dict__)`` graph-break.
``nn.Module.__setattr__`` runs that very test (``remove_from`` in
torch/nn/modules/module.py: ``isinstance(self.__dict__, dict)``) whenever a
module, parameter or buffer is assigned through a user ``__setattr__`` that
Dynamo inlines, e.g. every TorchRL loss's ``self._value_estimator = ...``
(``LossModule.__setattr__`` -> ``super().__setattr__``).
Version history: ``PATCH.history`` (rendered in docs/compatibility.md).

The fix: ``GetAttrVariable(obj, "__dict__").python_type()`` is ``dict`` when
``obj`` is one of those user-object trackers and its class gives instances the
ordinary instance dictionary: the ``__dict__`` found on the class's MRO is the
interpreter's ``getset_descriptor`` (no user property or descriptor named
``__dict__``), ``__getattribute__`` is ``object``'s, and the real object's
``__dict__`` is exactly a ``dict`` (``o.__dict__ = MyDict(...)`` makes it a dict
subclass: CPython then answers ``isinstance(o.__dict__, MyDict)`` True). The class
is guarded by Dynamo (``TYPE_MATCH``); the ``__dict__``'s own type is not, so for an
object passed in the answer installs ``TYPE_MATCH`` on ``obj.__dict__`` (issue 26: a
later input whose ``__dict__`` was replaced by a dict subclass reused ``dict``). An
object made in the frame is answered only while the frame has not stored
``__dict__`` (no pending store: its placeholder's dict is the one Dynamo made; after
``o.__dict__ = d`` Dynamo answers from ``d`` itself); an object neither passed in
nor made in the frame (no source) defers. Everything else (a ``py_type`` already
set, other receivers, class ``__dict__``, other attribute names) defers to Dynamo.

``nn.Module``s too. The one module caller that matters, ``remove_from``, goes on
to ``del self.__dict__[name]`` and then ``self._modules[name] = value`` (or
``_parameters``/``_buffers``). That deletion is ``instance-dict-writes``'s: it makes it
replay before the bookkeeping dict's update (Dynamo would replay it as ``del m.name``
after that update, and ``nn.Module.__delattr__`` would then delete the new submodule)
and answers later reads of ``m.name`` through ``nn.Module.__getattr__``; where it cannot,
or where it is switched off, the deletion graph-breaks, so answering ``dict`` here never
turns the break into a wrong result.
"""

from __future__ import annotations

from ..dynamo_api import made_in_frame
from ..instance_dict import instance_dict_receiver_types
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dunder-dict-type"


def _plain_instance_dict(value) -> bool:
    """Does ``value.__dict__`` read the interpreter's own instance dictionary?"""
    import types

    cls = type(value)
    if cls.__getattribute__ is not object.__getattribute__:
        return False
    for klass in cls.__mro__:
        attr = klass.__dict__.get("__dict__")
        if attr is not None:
            if type(attr) is not types.GetSetDescriptorType:
                return False
            break
    else:
        return False
    try:
        return type(object.__getattribute__(value, "__dict__")) is dict
    except AttributeError:
        return False


@fail_safe(NAME)
def _python_type(wrapped, instance, args, kwargs):
    """``GetAttrVariable.python_type()`` (inherited from ``VariableTracker`` on 2.5)."""
    if args or kwargs or getattr(instance, "name", None) != "__dict__":
        return DEFER
    if getattr(instance, "py_type", None) is not None:
        return DEFER
    from torch._dynamo.variables.misc import GetAttrVariable

    if type(instance) is not GetAttrVariable:
        return DEFER
    obj = instance.obj
    if type(obj) not in instance_dict_receiver_types():
        return DEFER
    if not _plain_instance_dict(obj.value):
        return DEFER
    tx = _current_tx()
    if tx is None or tx.output.side_effects.has_pending_mutation_of_attr(obj, "__dict__"):
        return DEFER  # the frame replaced it (`o.__dict__ = d`): its type is d's
    if obj.source is not None:
        # `o.__dict__ = MyDict(...)` may be done to a later input of the same class: guard the type.
        from torch._dynamo.guards import GuardBuilder, install_guard
        from torch._dynamo.source import AttrSource

        effects_begin()
        install_guard(AttrSource(obj.source, "__dict__").make_guard(GuardBuilder.TYPE_MATCH))
    elif not made_in_frame(obj):
        return DEFER  # neither an input nor made here: its __dict__ may have been replaced unseen
    return dict


def _current_tx():
    """The instruction translator tracing now (``python_type()`` is not given one)."""
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslator

        return InstructionTranslator.current_tx()
    except Exception:  # noqa: BLE001  (not tracing, or an older API)
        return None


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: isinstance(GetAttrVariable(..., __dict__), BuiltinVariable(dict))` / '
             '`builtin isinstance() cannot determine type of argument` / `... has no type` for '
             '`isinstance(o.__dict__, dict)`, `type(o.__dict__)` (user objects and `nn.Module`s; `m.x = '
             "submodule/parameter` over an existing attribute `x` of a module, e.g. TorchRL's lazily "
             'built value estimator, with `instance-dict-writes`)',
         '2.5–2.11',
         '(`<2.12`)'),
    ),
    fixes=(
        "Unsupported: isinstance(GetAttrVariable(..., __dict__), BuiltinVariable(dict)): can't determine type of "
        "GetAttrVariable(...) / builtin isinstance() cannot determine type of argument / UserError: "
        "GetAttrVariable(..., __dict__) has no type, on user objects and nn.Modules "
        "(nn.Module.__setattr__'s remove_from)"
    ),
    upstream="torch/_dynamo/variables/misc.py: GetAttrVariable.python_type",
    mirrors="#174570/#174941 (DunderDictVariable, 2.12)",
    torch="<2.12",  # measured: 2.11.0 fails, 2.12.1 passes natively
    fixed_upstream="2.12: DunderDictVariable (pytorch/pytorch#174570, #174941)",
    targets=(
        # Only inherited from VariableTracker on 2.5; GetAttrVariable's own from 2.6.
        Target("torch._dynamo.variables.misc", "GetAttrVariable", "python_type", _python_type, inherited=True),
    ),
    requires=(
        "torch._dynamo.variables.user_defined:UserDefinedObjectVariable",
        "torch._dynamo.variables.nn_module:UnspecializedNNModuleVariable",
    ),
    summary="type of a user object's or module's __dict__ (GetAttrVariable) is dict: isinstance() and type() trace",
    history=(
        ("2.5",
         "`GetAttrVariable` has no `python_type`; the inherited `VariableTracker.python_type` tries "
         "`as_python_constant` and raises `NotImplementedError`: `isinstance(obj.__dict__, dict)` is "
         "`Unsupported: isinstance(GetAttrVariable(..., __dict__), BuiltinVariable(dict)): can't determine type "
         "of ...`, `type(obj.__dict__)` a `UserError: ... has no type`"),
        ("2.6-2.7",
         "`GetAttrVariable.python_type` returns `self.py_type`, which `var_getattr` never sets for `__dict__`, "
         "and otherwise defers to the same base method: the same `can't determine type` break and `has no type` "
         "error"),
        ("2.8-2.11",
         "same cause; `isinstance` breaks with `builtin isinstance() cannot determine type of argument`, "
         "`type()` with `UserError: ... has no type`"),
        ("2.12+",
         "fixed upstream: `__dict__` is a real dictionary (`DunderDictVariable`, pytorch/pytorch#174570, "
         "#174941)"),
    ),
)
