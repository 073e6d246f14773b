"""The few Dynamo entry points whose shape moved between releases.

Patches call these instead of Dynamo directly, so that one patch body serves
torch 2.5 through the newest release.
"""

from __future__ import annotations

import functools
import inspect
import operator
from typing import NoReturn, Optional


@functools.lru_cache(maxsize=None)
def torch_release() -> tuple:
    """The installed torch's ``(major, minor)``, parsed once: for the few handlers whose behaviour is a
    property of the release itself (a code path Dynamo changed without a name to look up)."""
    import torch

    from .versions import parse_torch_version

    return tuple(parse_torch_version(torch.__version__).release[:2])


def or_through_number_slots() -> bool:
    """2.13+: ``|`` and ``|=`` dispatch through the operands' number slots (``binary_op``), past ``call_method``."""
    return torch_release() >= (2, 13)


def user_dict_storage(vt):
    """The dict tracker holding the items of a dict subclass instance's tracker (``_dict_vt`` up to 2.11,
    ``_base_vt`` from 2.12), or None (not such a tracker)."""
    state = vars(vt)
    return state.get("_base_vt", state.get("_dict_vt"))


def dict_methods_check_keywords() -> bool:
    """Does Dynamo check a dict method's arguments against its C flags (2.15: ``ConstDictVariable.tp_methods``,
    each entry's ``Method`` refuses keywords ``dict.get`` does not take)? Up to 2.14 ``call_method`` drops them."""
    from torch._dynamo.variables import ConstDictVariable

    return "get" in (getattr(ConstDictVariable, "tp_methods", None) or {})


def user_set_storage(vt):
    """The set tracker holding the items of a set subclass instance's tracker (``_set_vt`` up to 2.11,
    ``_base_vt`` from 2.12), or None (not such a tracker)."""
    state = vars(vt)
    return state.get("_base_vt", state.get("_set_vt"))


def replayed_past_overrides(vt) -> bool:
    """Does Dynamo replay this mutated dict tracker with its builtin base's own ``clear``/``__setitem__``,
    never the class's? 2.15: a dict subclass instance's tracker is its own storage (``UserDefinedDictVariable``
    is a ``ConstDictVariable``), and ``side_effects._codegen_user_defined_dict_mutation`` writes every item back
    through ``_manual_dict_setitem`` (the ``dict``/``OrderedDict`` entry of the class's MRO). Up to 2.14 the
    tracker asked is the plain storage, replayed as ``obj.update(...)``: False."""
    from torch._dynamo import side_effects
    from torch._dynamo.variables import ConstDictVariable
    from torch._dynamo.variables.user_defined import UserDefinedDictVariable

    return (isinstance(vt, UserDefinedDictVariable) and isinstance(vt, ConstDictVariable)
            and hasattr(side_effects, "_manual_dict_setitem"))


def graph_break(gb_type: str, context: str, explanation: str) -> NoReturn:
    """Raise Dynamo's ``Unsupported`` through whichever API this torch has.

    ``unimplemented(msg)`` (2.5-2.6), ``unimplemented_v2(gb_type=...)``
    (about 2.7-2.12), ``unimplemented(gb_type=...)`` (2.13 on).
    """
    from torch._dynamo import exc

    v2 = getattr(exc, "unimplemented_v2", None)
    if v2 is not None:
        v2(gb_type=gb_type, context=context, explanation=explanation, hints=[])
    params = inspect.signature(exc.unimplemented).parameters
    if "gb_type" in params:
        exc.unimplemented(gb_type=gb_type, context=context, explanation=explanation, hints=[])
    exc.unimplemented(f"{gb_type}: {context} ({explanation})")
    raise AssertionError("unreachable")  # pragma: no cover


_ABANDON: list = []


def _frame_abandoned_class() -> type:
    """``FrameAbandoned``: a ``SkipFrame`` of tdcompat's own, made when first needed (``exc`` is Dynamo's)."""
    if not _ABANDON:
        from torch._dynamo import exc

        class FrameAbandoned(exc.SkipFrame):
            """Raised by :func:`abandon_frame`; re-raised past every inlined call up to the frame's root."""

        _ABANDON.append(FrameAbandoned)
    return _ABANDON[0]


def abandon_frame(tx, gb_type: str, context: str, explanation: str) -> NoReturn:
    """Stop compiling the whole frame ``tx`` belongs to, so that CPython runs it: for a trace that went wrong
    before the point that finds out (a generator Dynamo 2.5-2.6 ran ahead), where a graph break would resume
    after a compiled prefix that holds the wrong state. Under ``fullgraph=True`` (``tx.one_graph``) it is the
    usual graph break, the user's error. Dynamo turns a ``SkipFrame`` raised inside an inlined call into a
    graph break at the call (``inline_call_``); :func:`reraise_abandoned` undoes that on the way up."""
    if getattr(tx, "one_graph", False) or getattr(tx, "export", False):
        graph_break(gb_type, context, explanation)
    raise _frame_abandoned_class()(f"{gb_type}: {context} ({explanation})")


def reraise_abandoned(error: BaseException) -> None:
    """Raise the :func:`abandon_frame` exception ``error`` stands for (Dynamo's ``Unsupported("SKIPPED
    INLINING ...") from`` it), if it does; return otherwise."""
    cause = error.__cause__
    if _ABANDON and isinstance(cause, _ABANDON[0]):
        raise cause


def is_dynamo_control_flow(error: BaseException) -> bool:
    """True for the exceptions Dynamo uses to steer tracing (graph breaks,
    observed user exceptions, restarts): a patch wrapper must let these through."""
    from torch._dynamo import exc

    return isinstance(error, exc.TorchDynamoException) or type(error).__module__.startswith("torch._dynamo")


def guard_dict_contains(source, key: str, present: bool) -> None:
    """Guard that ``key in <the dict at source>`` stays ``present``.

    ``GuardBuilder.DICT_CONTAINS(key=, invert=)`` up to about 2.12;
    ``DICT_CONTAINS``/``DICT_NOT_CONTAINS`` (no ``invert``) from 2.13.
    """
    from torch._dynamo.guards import GuardBuilder, install_guard  # both there on 2.5-2.15

    not_contains = getattr(GuardBuilder, "DICT_NOT_CONTAINS", None)
    if not_contains is not None:
        builder = functools.partial(GuardBuilder.DICT_CONTAINS if present else not_contains, key=key)
    else:
        builder = functools.partial(GuardBuilder.DICT_CONTAINS, key=key, invert=not present)
    install_guard(source.make_guard(builder))


def guard_dict_keys_in_order(tx, source) -> None:
    """Guard the keys of the dict at ``source`` *and their order*.

    ``DICT_KEYS`` (2.5-2.6) / ``DICT_KEYS_MATCH`` (2.7 on) check the order only for a dict
    listed in ``OutputGraph.guard_on_key_order``: source names up to 2.7, sources from 2.8
    (where ``ConstDictVariable.call_method("keys")`` adds them).
    """
    from torch._dynamo.guards import GuardBuilder, install_guard

    before_28 = torch_release() < (2, 8)
    tx.output.guard_on_key_order.add(source.name() if before_28 else source)
    builder = getattr(GuardBuilder, "DICT_KEYS_MATCH", None) or GuardBuilder.DICT_KEYS
    install_guard(source.make_guard(builder))


def raise_observed(exc_type: type, tx, context: str, message: Optional[str] = None) -> "NoReturn":
    """Raise ``exc_type`` inside the traced program, as eager would.

    ``raise_observed_exception(exc_type, tx, *, args=...)`` from about 2.6;
    2.5's ``raise_observed_exception(e, tx, vt)`` passes ``vt`` on as the
    translator of ``BuiltinVariable(e).call_function``. Up to 2.8 only the
    exceptions in ``observed_exception_map`` can be raised (2.6: StopIteration,
    KeyError, AttributeError); others graph-break. 2.9's
    ``raise_observed_exception`` makes any of them (``get_dynamo_observed_exception``;
    2.7-2.8 define that function but read the map: a ``KeyError`` before).
    ``message`` is the exception's argument where CPython's text is known (``str(e)``
    in an ``except`` reads it): passed as a constant tracker where the torch takes
    ``args`` (2.7+), else the exception has none.
    """
    from torch._dynamo import exc

    known = getattr(exc, "observed_exception_map", None)
    any_type = "get_dynamo_observed_exception" in exc.raise_observed_exception.__code__.co_names
    if not any_type and isinstance(known, dict) and exc_type not in known:  # 2.5-2.8: only those in the map
        graph_break(f"{exc_type.__name__} in compiled code", context,
                    f"eager raises {exc_type.__name__} here; this torch cannot raise it inside the trace")
    params = inspect.signature(exc.raise_observed_exception).parameters
    if "vt" in params:
        exc.raise_observed_exception(exc_type, tx, tx)
    if message is not None and "args" in params:
        from torch._dynamo.variables import ConstantVariable

        exc.raise_observed_exception(exc_type, tx, args=[ConstantVariable.create(message)])
    exc.raise_observed_exception(exc_type, tx)
    raise AssertionError("unreachable")  # pragma: no cover


def raise_unhashable(tx, value) -> "NoReturn":
    """``hash(value)``'s ``TypeError`` for an object whose class sets ``__hash__ = None``, raised
    inside the trace (a graph break where this torch cannot raise it: see :func:`raise_observed`)."""
    name = type(value).__name__
    raise_observed(TypeError, tx, f"hash({name})", f"unhashable type: {name!r}")


#: What :func:`static_lookup` returns for a name no class on the MRO defines.
MISSING = object()


def static_lookup(cls: type, name: str):
    """``name`` looked up on ``cls`` and its bases without running anything (no metaclass
    ``__getattribute__``, no descriptor, no user ``__mro__``), or :data:`MISSING`."""
    for klass in type.__dict__["__mro__"].__get__(cls):
        found = type.__dict__["__dict__"].__get__(klass).get(name, MISSING)
        if found is not MISSING:
            return found
    return MISSING


def super_lookup(start: type, cls: type, name: str):
    """``super(start, obj).<name>`` for an ``obj`` of class ``cls``, read as CPython's ``super_getattro`` reads it
    (the classes after ``start`` in ``cls.__mro__``, their own ``__dict__``) without running anything, or
    :data:`MISSING` (also where ``start`` is not in that MRO)."""
    mro = type.__dict__["__mro__"].__get__(cls)
    if not isinstance(start, type) or start not in mro:
        return MISSING
    for klass in mro[mro.index(start) + 1:]:
        found = type.__dict__["__dict__"].__get__(klass).get(name, MISSING)
        if found is not MISSING:
            return found
    return MISSING


def _descriptor_type(cls: type, name: str) -> Optional[type]:
    """The type of what ``cls`` (or a base) holds under ``name``, read statically, or None."""
    attr = inspect.getattr_static(cls, name, None)
    return None if attr is None else type(attr)


def _takes_stores(kind: type) -> bool:
    """A data descriptor's type: ``obj.name = v`` and ``del obj.name`` go through it."""
    return hasattr(kind, "__set__") or hasattr(kind, "__delete__")


def is_data_descriptor(cls: type, name: str) -> bool:
    """Does ``cls`` (or a base) define ``name`` as a data descriptor? Those take stores and deletions
    before the instance dict."""
    kind = _descriptor_type(cls, name)
    return kind is not None and _takes_stores(kind)


def shadows_instance_dict(cls: type, name: str) -> bool:
    """Does ``cls`` (or a base) define ``name`` as a data descriptor that answers *reads* of ``obj.name``?
    CPython calls it only when its type has ``__get__`` as well as ``__set__``/``__delete__``; a
    descriptor without ``__get__`` (only ``__set__``) still takes stores and deletions
    (:func:`is_data_descriptor`) but leaves reads to the instance dict (upstream test_misc.py
    ``MiscTests::test_set_descriptor``)."""
    kind = _descriptor_type(cls, name)
    return kind is not None and hasattr(kind, "__get__") and _takes_stores(kind)


def const_str(vt):
    """The ``str`` a tracker holds as a Python constant, or None."""
    try:
        if vt.is_python_constant():
            value = vt.as_python_constant()
            if isinstance(value, str):
                return value
    except Exception:  # noqa: BLE001 - not a constant after all
        pass
    return None


def new_object_kwargs() -> dict:
    """The constructor keyword that marks a list/iterator tracker as made in the frame.

    ``mutable_local=MutableLocal()`` on 2.5; ``mutation_type=ValueMutationNew()`` from 2.6.
    """
    from torch._dynamo.variables import base

    new = getattr(base, "ValueMutationNew", None)
    if new is not None:
        return {"mutation_type": new()}
    return {"mutable_local": base.MutableLocal()}


def module_tracker_types() -> frozenset:
    """The trackers of ``nn.Module`` objects whose attributes live in their ``__dict__``
    (``UnspecializedNNModuleVariable`` and, where it exists, its builtin-module subclass)."""
    types = _MODULE_TRACKERS.get("types")
    if types is None:
        from torch._dynamo.variables import nn_module

        names = ("UnspecializedNNModuleVariable", "UnspecializedBuiltinNNModuleVariable")
        types = _MODULE_TRACKERS["types"] = frozenset(
            getattr(nn_module, name) for name in names if hasattr(nn_module, name))
    return types


_MODULE_TRACKERS: dict = {}


def source_name(source) -> str:
    """A source's name for a graph-break message: ``name()`` a method up to 2.12, a property after."""
    name = getattr(source, "name", source)
    return str(name() if callable(name) else name)


def build_sourceless(tx, value):
    """A tracker for a constant-like ``value`` reached through something already
    guarded (``VariableTracker.build(tx, value)`` without a source, 2.6 on;
    ``SourcelessBuilder.create`` on every release)."""
    from torch._dynamo.variables.builder import SourcelessBuilder

    return SourcelessBuilder.create(tx, value)


def made_in_frame(obj) -> bool:
    """``AttributeMutationNew`` (``mutation_type`` from 2.6, ``mutable_local`` on 2.5)."""
    kind = getattr(obj, "mutation_type", None) or getattr(obj, "mutable_local", None)
    return any(k.__name__ == "AttributeMutationNew" for k in type(kind).__mro__)


def list_made_in_frame(vt) -> bool:
    """A list (or other value tracker) the frame built: ``ValueMutationNew`` (2.6 on) / a plain
    ``MutableLocal`` (2.5); a tracked input has ``ValueMutationExisting``/``MutableSideEffects``."""
    kind = getattr(vt, "mutation_type", None) or getattr(vt, "mutable_local", None)
    return type(kind).__name__ in ("ValueMutationNew", "MutableLocal")


def made_object_class_source(tx, cls):
    """A guarded source for a sourceless class tracker of ``cls``, or None.

    On 2.5-2.6 ``type(obj)`` of an object made in the frame is a class tracker without a source,
    though the object itself was built from a sourced class tracker
    (``UserDefinedObjectVariable.cls_source``, set by
    ``SideEffects.track_object_new_from_user_defined_class``; 2.7 passes it on to ``type(obj)``).
    That source, under an ``ID_MATCH`` the caller installs (:func:`guard_class_source`), names
    exactly ``cls`` on every call the guard lets through. None when no such object is tracked, or
    when the frame has mutated the class through another tracker (the static class would not be
    what the frame sees)."""
    side_effects = tx.output.side_effects
    table = getattr(side_effects, "id_to_variable", None)
    if not isinstance(table, dict):
        return None
    mutated = table.get(id(cls))
    if mutated is not None and getattr(mutated, "value", None) is cls:
        return None  # a class tracker of ``cls`` is tracked for mutation: Dynamo's side effects answer
    for tracked in list(table.values()):
        source = getattr(tracked, "cls_source", None)
        if source is not None and type(getattr(tracked, "value", None)) is cls:
            return source
    return None


def guard_mapping_keys(source) -> None:
    """Guard the keys of the mapping at ``source`` (a class's ``__dict__``, a ``mappingproxy``) to stay
    the ones it has now, in their order.

    2.7+: ``MAPPING_KEYS_CHECK``. 2.5-2.6 have none: a guard of our own, a Python predicate on the object
    at ``source`` (``GuardManager.add_lambda_guard`` of the C++ guard manager, the default there); with
    ``TORCHDYNAMO_CPP_GUARD_MANAGER=0`` a graph break instead (the Python guard code has no place for it).
    """
    from torch._dynamo.guards import GuardBuilder, install_guard

    check = getattr(GuardBuilder, "MAPPING_KEYS_CHECK", None)
    if check is not None:
        install_guard(source.make_guard(check))
        return
    from torch._dynamo import config
    from torch._dynamo.guards import get_verbose_code_parts
    from torch._guards import Guard

    if not config.enable_cpp_guard_manager:
        graph_break("mapping keys guard", source.name(), "this torch's Python guard code has no keys guard")

    def create_fn(builder, guard) -> None:
        keys = tuple(builder.get(guard.name).keys())

        def same_keys(mapping, keys=keys) -> bool:
            return tuple(mapping.keys()) == keys

        code = f"tuple({guard.name}.keys()) == {keys!r}"
        builder.get_guard_manager(guard).add_lambda_guard(same_keys, get_verbose_code_parts(code, guard))

    install_guard(Guard(source, create_fn))


def guard_class_source(source) -> None:
    """``ID_MATCH`` on a class source from :func:`made_object_class_source`."""
    from torch._dynamo.guards import GuardBuilder, install_guard

    install_guard(source.make_guard(GuardBuilder.ID_MATCH))


def guard_bound_builtin(source) -> None:
    """Guard what a read of a builtin method at ``source`` gives, where each read makes a new object
    (an identity guard can never hold): its type, its ``__self__`` by identity and its ``__name__``."""
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource

    install_guard(source.make_guard(GuardBuilder.TYPE_MATCH))
    install_guard(AttrSource(source, "__self__").make_guard(GuardBuilder.ID_MATCH))
    install_guard(AttrSource(source, "__name__").make_guard(GuardBuilder.EQUALS_MATCH))


def guard_bound_function(source) -> None:
    """Guard a method read at ``source`` that binds a Python function anew on each read (a user classmethod
    read from its class): ``ID_MATCH`` on its ``__func__``, so a replacement, or a deletion that leaves an object
    without ``__func__`` (the builtin it shadowed: the guard's read fails), recompiles."""
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource

    install_guard(AttrSource(source, "__func__").make_guard(GuardBuilder.ID_MATCH))


def guard_hasattr(base, name: str) -> None:
    """Guard ``hasattr(<base>, name)`` to stay what it is: ``HASATTR`` on ``AttrSource(base, name)``
    up to 2.11, on ``base`` with ``attr=name`` from 2.12."""
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource

    if "attr" in inspect.signature(GuardBuilder.HASATTR).parameters:
        install_guard(base.make_guard(functools.partial(GuardBuilder.HASATTR, attr=name)))
    else:
        install_guard(AttrSource(base, name).make_guard(GuardBuilder.HASATTR))


def current_binary_operator(tx) -> Optional[str]:
    """The operator (``"|"``, ``"|="``, ``"+"``, ...) of the instruction ``tx`` is tracing when it is a
    binary operator (3.11+'s ``BINARY_OP``; 3.9-3.10's ``BINARY_OR``/``INPLACE_OR``), else None (a
    call such as ``d.__or__(x)`` or ``operator.or_(d, x)``, whose semantics differ)."""
    import dis

    inst = getattr(tx, "current_instruction", None)
    name = getattr(inst, "opname", None)
    if name == "BINARY_OP":
        ops = getattr(dis, "_nb_ops", None)
        arg = getattr(inst, "arg", None)
        if ops is None or not isinstance(arg, int) or not 0 <= arg < len(ops):
            return None
        return ops[arg][1]
    return {"BINARY_OR": "|", "INPLACE_OR": "|="}.get(name or "")


def calling_builtin(depth: int = 48):
    """The function of the ``BuiltinVariable`` whose ``call_function`` the running Dynamo method was reached from
    (``operator.and_`` for ``operator.and_(s, view)``), or None when the nearest ``call_function`` on the Python
    stack is another tracker's (``GetAttrVariable``: an explicit ``s.__and__(view)``) or there is none within
    ``depth`` frames (other patches' wrappers of ``call_or_`` & co. sit between: 17 frames for ``operator.or_``
    on 2.10). Reads frame locals only; the caller's rare path, not a hot one."""
    import sys
    import types

    from torch._dynamo.variables import BuiltinVariable

    frame: Optional[types.FrameType] = sys._getframe(1)
    for _ in range(depth):
        frame = frame.f_back if frame is not None else None
        if frame is None:
            return None
        if frame.f_code.co_name == "call_function":
            owner = frame.f_locals.get("self")
            return getattr(owner, "fn", None) if type(owner) is BuiltinVariable else None
    return None


def inside_try(tx) -> bool:
    """Is the instruction being traced inside a ``try`` (or ``with``), in this frame or one
    it is inlined into? 3.11+ marks it with an exception-table entry, older Pythons keep a
    block stack. A value Dynamo only passes on stays a lazy tracker with no guard, and the
    code after the graph reads it again outside the ``try``."""
    try:
        while True:
            if tx.current_instruction.exn_tab_entry or tx.block_stack:
                return True
            tx = tx.parent
    except AttributeError:  # the root frame has no parent (or an odd tx: leave it to Dynamo)
        return False


#: The module of ``LazyVariableTracker`` (a frame input Dynamo has not looked at yet):
#: hot gates test ``type(vt).__module__ == LAZY_MODULE`` inline, without a call.
LAZY_MODULE = "torch._dynamo.variables.lazy"


def key_tracker_gate(original, handle, route):
    """The gate on ``_HashableTracker.__init__(vt)`` (every dict key and set member Dynamo builds), for
    :func:`tdcompat.wrappers.routed_gate`: a key whose tracker class is named in ``route`` or is lazy
    (its class not known yet) goes to ``handle``, every other key straight to Dynamo (one type
    test). Shared, so the patches on dict keys cost one frame per key together."""

    def __init__(self, vt):
        kind = type(vt)
        if kind.__name__ not in route and kind.__module__ != LAZY_MODULE:
            return original(self, vt)
        return handle(self, vt)

    return __init__


def value_type_gate(original, handle, route):
    """The gate on ``VariableBuilder._wrap(value)`` (every value Dynamo wraps from a source), for
    :func:`tdcompat.wrappers.routed_gate`: a value whose type's name is in ``route`` goes to ``handle``, every
    other straight to Dynamo (one set test). Shared, so the patches on wrapped values cost one frame together."""

    def _wrap(self, value):
        if type(value).__name__ not in route:
            return original(self, value)
        return handle(self, value)

    return _wrap


#: Dynamo's conditional jumps: the ``InstructionTranslatorBase`` opcode handlers built by
#: ``generic_jump(truth_fn, push)`` on some Python this torch supports (3.9-3.13 name them
#: differently), each with its ``(truth_fn, push)``: jump when ``truth_fn(value)``, and keep the
#: value on the stack when jumping if ``push``.
CONDITIONAL_JUMPS = {
    "POP_JUMP_IF_FALSE": (operator.not_, False), "POP_JUMP_IF_TRUE": (operator.truth, False),
    "JUMP_IF_FALSE_OR_POP": (operator.not_, True), "JUMP_IF_TRUE_OR_POP": (operator.truth, True),
    "POP_JUMP_FORWARD_IF_FALSE": (operator.not_, False), "POP_JUMP_BACKWARD_IF_FALSE": (operator.not_, False),
    "POP_JUMP_FORWARD_IF_TRUE": (operator.truth, False), "POP_JUMP_BACKWARD_IF_TRUE": (operator.truth, False),
}


def stack_top_gate(original, handle, route):
    """The gate on a conditional jump (:data:`CONDITIONAL_JUMPS`: ``(self, inst)``, every branch
    Dynamo traces), for :func:`tdcompat.wrappers.routed_gate`: a stack top whose tracker class is,
    or derives from, a class named in ``route``, or is lazy (its class not known yet), goes to
    ``handle``; every other straight to Dynamo (one set test). The classes are read from
    Dynamo's tracker hierarchy when the gate is built; an empty stack or an odd call goes to
    ``handle``, which meets the same question under the fail-safe."""
    from torch._dynamo.variables.base import VariableTracker

    kinds, todo = set(), [VariableTracker]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if any(base.__name__ in route for base in kind.__mro__):
            kinds.add(kind)
    routed = frozenset(kinds)

    def jump(self, inst):
        try:
            kind = type(self.stack[-1])
            mine = kind in routed or kind.__module__ == LAZY_MODULE
        except Exception:  # noqa: BLE001 - an empty stack or an odd call: the handler decides
            mine = True
        return handle(self, inst) if mine else original(self, inst)

    return jump


def is_lazy(vt) -> bool:
    """Is ``vt`` a ``LazyVariableTracker``? A type test, without importing anything."""
    return type(vt).__module__ == LAZY_MODULE


def realize(vt):
    """The tracker behind ``vt``: a lazy one is realized (which installs its guards),
    any other tracker is returned as it is."""
    return vt.realize() if is_lazy(vt) else vt


def peek(vt):
    """``(tracker, None)`` for a tracker already realized (a lazy one's realized tracker),
    or ``(None, value)`` for a lazy tracker not realized yet: the Python object it stands
    for, read without realizing it. No guard is installed by peeking, so only a decision
    that then realizes (and so guards) the tracker may depend on ``value``."""
    if is_lazy(vt):
        cache = vt._cache
        if cache.vt is None:
            return None, cache.value
        return cache.vt, None
    return vt, None


def step_iterator(tx, iterator, fn) -> None:
    """Call ``fn`` on each item of a Dynamo iterator tracker, drawing the next only after ``fn`` returned
    (CPython's ``for`` over an iterator): ``force_apply_to_var_sequence`` where this torch has it (2.8+),
    else ``next_variable`` until its observed ``StopIteration`` (2.5-2.7), handled as Dynamo's own loop does."""
    apply = getattr(iterator, "force_apply_to_var_sequence", None)
    if apply is not None:
        apply(tx, fn)
        return
    from torch._dynamo.exc import ObservedUserStopIteration, handle_observed_exception

    while True:
        try:
            item = iterator.next_variable(tx)
        except ObservedUserStopIteration:
            handle_observed_exception(tx)
            return
        fn(item)


def is_mutable(vt) -> bool:
    """May the frame change the object ``vt`` tracks? ``vt.is_mutable()`` from 2.6; 2.5 marks it with a
    ``mutable_local``."""
    method = getattr(vt, "is_mutable", None)
    if callable(method):
        return bool(method())
    return getattr(vt, "mutable_local", None) is not None


def dict_class(vt) -> Optional[type]:
    """The class of the dict a dict tracker stands for: ``user_cls`` (<2.14), ``python_type()`` (2.14+, where
    ``ConstDictVariable`` keeps it as ``_cpython_type``); None when the tracker cannot say."""
    cls = getattr(vt, "user_cls", None)
    if cls is None:
        try:
            cls = vt.python_type()
        except Exception:  # noqa: BLE001 - a tracker that cannot say: not accepted
            return None
    return cls if isinstance(cls, type) else None


def is_plain_dict(vt) -> bool:
    """Is ``vt`` Dynamo's tracker of an exact ``dict`` (not an ``OrderedDict``, a ``defaultdict``, a subclass,
    nor a lazy tracker: realize it first)?"""
    from torch._dynamo.variables import ConstDictVariable

    return type(vt) is ConstDictVariable and getattr(vt, "user_cls", None) is dict


def guard_dict_keys(vt) -> None:
    """Guard the keys of the dict tracker ``vt`` where Dynamo guards them lazily (2.7+; 2.5-2.6 guard them when
    they wrap it; a tracker without the method is left alone): for a result computed from its keys."""
    guard = getattr(vt, "install_dict_keys_match_guard", None)
    if guard is not None:
        guard()


def merged_items(a, b) -> dict:
    """The item map of ``a | b`` for two dict trackers (``a``'s keys first, ``b``'s values win), with both
    key sets guarded (:func:`guard_dict_keys`): the result's keys are computed from them."""
    for operand in (a, b):
        guard_dict_keys(operand)
    items = dict(a.items)
    items.update(b.items)
    return items


def rebuild_dict_view(codegen, dict_vt, kind: str) -> bool:
    """Emit ``<the dict's source>.<kind>()`` (``keys``/``values``/``items``) for a view of a dict tracker that has a
    source: a view of the object itself, which the side effects update in place. False (nothing emitted) for a
    dict without a source. Not ``codegen(dict_vt)``: 2.6-2.12 may serve that from the temporary dict they build to
    replay the dict's changes (dict-items-view, dict-view-reconstruct)."""
    source = getattr(dict_vt, "source", None)
    if source is None:
        return False
    codegen(source)
    codegen.load_method(kind)
    codegen.call_method(0)
    return True


def bind_args(args, kwargs, names):
    """The arguments of a wrapped method, positional or by keyword, in the order of
    ``names``; None when the call does not fit (the handler then defers)."""
    if not kwargs and len(args) == len(names):  # how Dynamo calls them: no dict built
        return list(args)
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in bound:
            return None
        bound[key] = value
    if len(bound) != len(names):
        return None
    return [bound[n] for n in names]


