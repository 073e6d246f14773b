"""Modules that are unhashable (``class M(nn.Module, Mapping)`` without ``__hash__``).

``collections.abc.Mapping`` defines ``__eq__`` and sets ``__hash__ = None``, and
``nn.Module`` defines neither, so ``class M(nn.Module, MutableMapping)`` is
unhashable unless it defines ``__hash__`` itself. Eager code that does not walk
the module tree works (``dict(m)``, ``m["a"]``, ``m(x)``); ``m.parameters()``,
``m.named_modules()`` and friends raise ``TypeError: unhashable type``, because
``Module.named_modules`` keeps a ``memo`` *set* of modules
(torch/nn/modules/module.py: ``if self not in memo: memo.add(self)``). Upstream:
pytorch/pytorch#110959 (open); PR #133972 (id()-based memo in ``named_modules``,
closed unmerged).

Dynamo walks that tree on its own while it wraps any module it meets with a
source (torch/_dynamo/variables/builder.py, ``VariableBuilder.wrap_module``,
branch ``mutation_guard.is_dynamic_nn_module(value, ...)``, which every user
module takes with the default ``inline_inbuilt_nn_modules=True``): it marks
every parameter and buffer as a static input.

That walk reaches the tree through ``named_modules`` and its memo set, so it
hashes the module and its ``TypeError`` ends the trace.
Version history: ``PATCH.history`` (rendered in docs/compatibility.md).

So *any* use of such a module in compiled code fails, not only ``dict(m)``,
although the user's own code never hashes it. (A hashable module containing
an unhashable submodule fails the same way, from the parent's walk.)

The patch wraps ``VariableBuilder.wrap_module``. When the module tree under
``value`` (walked through ``_modules`` with an ``id()`` memo) holds an
unhashable module, the original ``wrap_module`` runs with a
``named_modules`` entry in the instance ``__dict__`` of ``value`` that yields
what ``Module.named_modules`` yields, with an ``id()``-based memo; the entry is
removed again before ``wrap_module`` returns (or raises). ``named_parameters``/
``parameters``/``named_buffers``/``buffers`` reach the tree only through
``self.named_modules(...)``, so Dynamo's walk sees the same parameters and
buffers, in the same order, as for a hashable module; it still runs only when
``named_parameters`` is not overridden (check against
``og_module_named_parameters_fn_ptr``, 2.8+), which the instance entry leaves alone.
The same for a tree holding a module whose class defines its own ``__hash__``: that is user
code, and it can fail where eager never calls it (``__hash__`` reading an attribute the frame
deleted: Dynamo wraps the module again after a graph break, and its walk raised
``InternalTorchDynamoError: AttributeError`` where eager ran; fresh fuzz seed 1119366703 on
2.6.0, 2.5-2.9 measured). Everything else (trees of modules hashed by identity, the common
case) is deferred after an ``id()`` walk of ``_modules``.

Every read the patch makes is static: instance dicts through
``object.__getattribute__(m, "__dict__")``, ``_modules`` as the dict stored
there, hashability through ``inspect.getattr_static(cls, "__hash__")``. No
user ``__getattr__`` runs: Dynamo wraps half-built modules too (the copy
``copy.deepcopy`` makes, compiled as ``self`` of ``__setstate__`` with an empty
``__dict__``), where tensordict's ``TensorDictModule.__getattr__`` reads
``self._parameters`` while compiling (2.13+) and recursed until
``RecursionError``. A module in the tree without a ``_modules`` dict of its own
defers (the walk could not be the one ``named_modules`` makes).

Left alone: the compiled function calling ``m.parameters()`` itself still
raises ``TypeError`` exactly as eager does. During the original ``wrap_module``
(compile time only) another thread calling ``m.named_modules()`` on the very
same object would get the id()-memo walk instead of ``TypeError``.

The upstream fix (``docs/upstream/unhashable-module/``) is to walk
with an id()-based memo in ``wrap_module`` itself.
"""

from __future__ import annotations

import inspect
import weakref

from ..dynamo_api import key_tracker_gate
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate, routed_gate

NAME = "unhashable-module"

_hashable_types: dict = {}


_OBJECT_HASH = object.__dict__["__hash__"]


def _is_hashable_type(cls) -> bool:
    """Does hashing an instance of ``cls`` run no user code and never fail: is its ``__hash__``
    ``object``'s own (identity)? Read statically (``inspect.getattr_static``): no metaclass
    ``__getattr__`` runs. ``__hash__ = None`` (a ``Mapping`` base) raises ``TypeError``; a class's
    own ``__hash__`` is user code that may raise (it reads an attribute the frame deleted) or
    differ between calls: the walk then goes by ``id()`` as well."""
    known = _hashable_types.get(cls)
    if known is None:
        known = _hashable_types[cls] = inspect.getattr_static(cls, "__hash__", None) is _OBJECT_HASH
    return known


def _own_dict(obj):
    """``obj``'s instance dict, read with ``object.__getattribute__`` (no ``__getattr__``, no
    overridden ``__getattribute__``), or None."""
    try:
        attrs = object.__getattribute__(obj, "__dict__")
    except Exception:  # noqa: BLE001 - no instance dict
        return None
    return attrs if type(attrs) is dict else None


def _children(module):
    """``module._modules`` as ``nn.Module`` keeps it, in the instance dict, or None (a module
    not built yet, e.g. the copy ``copy.deepcopy`` makes before ``__setstate__``: reading
    the attribute would run the class's ``__getattr__``, which may recurse)."""
    attrs = _own_dict(module)
    children = attrs.get("_modules") if attrs is not None else None
    return children if type(children) is dict else None


#: The trees this trace already walked and found clean, as ``(weakref to the OutputGraph, {id(module)})``:
#: Dynamo wraps every submodule it reaches, and each used to walk its whole subtree again.
_clean: list = [None, set()]


def _forget(ref) -> None:
    if _clean[0] is ref:  # the trace died: drop its ids (they may be reused)
        _clean[1] = set()


def _clean_ids(builder) -> set:
    """The ids of the modules whose trees this trace found clean (the set is dropped with the trace).

    Sound: the real module tree does not change while Dynamo traces (the frame's stores are side
    effects, replayed after the graph), and a stale "clean" could only make the handler defer,
    which is Dynamo's own behaviour."""
    output = builder.tx.output
    ref = _clean[0]
    if ref is None or ref() is not output:
        _clean[0] = weakref.ref(output, _forget)
        _clean[1] = set()
    return _clean[1]


def _tree_has_unhashable(root, clean: set) -> bool | None:
    """Walk ``_modules`` by id; True if any module in the tree is unhashable. None where a
    module in the tree has no ``_modules`` dict of its own (the walk would differ). A clean
    walk adds every module it met to ``clean``: each heads a clean subtree."""
    seen = set()
    stack = [root]
    while stack:
        module = stack.pop()
        key = id(module)
        if module is None or key in seen or key in clean:
            continue
        seen.add(key)
        hashable = _hashable_types.get(type(module))
        if not (_is_hashable_type(type(module)) if hashable is None else hashable):
            return True
        try:  # _children(module), inline: this loop runs once per module of the tree
            attrs = object.__getattribute__(module, "__dict__")
            children = attrs["_modules"] if type(attrs) is dict else None
        except Exception:  # noqa: BLE001 - no instance dict, or no _modules in it
            return None
        if type(children) is not dict:
            return None
        stack += children.values()
    clean |= seen
    return False


def _named_modules_by_id(root):
    """``root.named_modules`` with an ``id()`` memo (same order, same names). Each module's
    ``_modules`` is the one in its instance dict (``_tree_has_unhashable`` checked that every
    module in the tree has one), which is what ``module._modules`` reads."""

    def named_modules(memo=None, prefix="", remove_duplicate=True):
        seen = set()

        def walk(module, prefix):
            if id(module) in seen:
                return
            if remove_duplicate:
                seen.add(id(module))
            yield prefix, module
            for name, child in (_children(module) or {}).items():
                if child is None:
                    continue
                yield from walk(child, prefix + ("." if prefix else "") + name)

        return walk(root, prefix)

    return named_modules


@fail_safe(NAME)
def _wrap_module(wrapped, instance, args, kwargs):
    """``VariableBuilder.wrap_module(value)``: let Dynamo's parameter walk run
    over a tree holding an unhashable module. Reads instance dicts and classes
    statically only (no user ``__getattr__`` runs: the value may be half built)."""
    value = args[0] if args else kwargs.get("value")
    attrs = _own_dict(value)
    children = _children(value)
    if attrs is None or children is None:
        return DEFER
    if _is_hashable_type(type(value)) and not children:
        return DEFER
    clean = _clean_ids(instance)
    if id(value) in clean or not _tree_has_unhashable(value, clean):
        return DEFER
    if "named_modules" in attrs:
        return DEFER
    entry = attrs["named_modules"] = _named_modules_by_id(value)
    try:
        return wrapped(*args, **kwargs)
    finally:
        if attrs.get("named_modules") is entry:
            del attrs["named_modules"]


def _still_broken() -> bool:
    """For a pre-release: the dynamic-module branch still walks the tree with
    ``named_parameters()``/``parameters()`` (hash-based memo)."""
    from torch._dynamo.variables.builder import VariableBuilder

    source = inspect.getsource(VariableBuilder.wrap_module)
    return "value.named_parameters()" in source or "value.parameters()" in source


@gate(_wrap_module)
def _wrap_module_gate(original, handle):
    """What is installed: a module of a hashable type without children, or one heading a tree this
    trace already walked and found clean, goes straight to Dynamo."""

    def wrap_module(self, value):
        try:  # the instance dict itself: value._modules could run a user __getattr__
            leaf = not object.__getattribute__(value, "__dict__")["_modules"] and _hashable_types[type(value)]
            if not leaf:  # a tree this trace already found clean
                ref = _clean[0]
                leaf = ref is not None and ref() is self.tx.output and id(value) in _clean[1]
        except Exception:  # noqa: BLE001 - not a module, or a type not seen yet: the handler decides
            leaf = False
        if leaf:
            return original(self, value)
        return handle(self, value)

    return wrap_module


def _unhashable_module(vt):
    """The ``nn.Module`` ``vt`` stands for when its class has ``__hash__ = None`` on its MRO
    (static lookup: CPython's ``hash()`` raises ``TypeError`` exactly then), else None. A lazy
    tracker is peeked at, not realized."""
    from ..dynamo_api import peek, static_lookup

    tracker, value = peek(vt)
    if tracker is not None:
        if type(tracker).__name__ not in _MODULE_TRACKERS:
            return None
        value = getattr(tracker, "value", getattr(tracker, "module", None))
    import torch

    if isinstance(value, torch.nn.Module) and static_lookup(type(value), "__hash__") is None:
        return value
    return None


def _raise_unhashable(tx, value):
    from ..dynamo_api import raise_unhashable

    effects_begin()
    raise_unhashable(tx, value)


@fail_safe(NAME)
def _hashable_init(wrapped, instance, args, kwargs):
    """``_HashableTracker.__init__(vt)`` / ``HashableTracker.__init__(vt)``: an unhashable module
    as a dict key or set member raises ``TypeError`` inside the trace, as eager does.

    Once ``wrap_module`` succeeds for such a module (this patch), Dynamo's key hashing called
    ``hash(module)`` itself: ``InternalTorchDynamoError: TypeError: unhashable type`` reached the
    user even under ``fullgraph=False`` and around a ``try: ... except TypeError`` that catches it
    in eager (fresh fuzz seeds on 2.7.1, 2.9.1, 2.12.1: a working program made to raise). Accepts a
    module tracker, or a lazy one not realized yet, that :func:`_unhashable_module` accepts. 2.9+
    raise the ``TypeError`` inside the trace; 2.5-2.8 cannot (a graph break there). ``m in s`` on
    2.9-2.12 raises it past ``CONTAINS_OP``'s fallback (:func:`_raise_past_contains_fallback`)."""
    if len(args) != 1 or kwargs:
        return DEFER
    value = _unhashable_module(args[0])
    if value is None:
        return DEFER
    from torch._dynamo.symbolic_convert import InstructionTranslator

    tx = InstructionTranslator.current_tx()
    instruction = getattr(tx, "current_instruction", None)
    if getattr(instruction, "opname", None) == "CONTAINS_OP" and _contains_falls_back():
        _raise_past_contains_fallback(tx, value)
    _raise_unhashable(tx, value)


def _raise_past_contains_fallback(tx, value):
    """``m in s`` (``s`` a set or dict) on 2.9-2.12: ``CONTAINS_OP`` catches an
    ``ObservedTypeError`` out of ``s.__contains__`` and iterates ``s`` with ``==`` instead, so the
    ``TypeError`` CPython raises (``hash(m)``) became ``False``; deferring left Dynamo's own
    ``hash(m)`` to escape as ``InternalTorchDynamoError`` (a working program made to crash). The
    ``TypeError`` is made as ``raise_observed_exception`` makes it and raised as the base
    ``ObservedException``, which ``CONTAINS_OP`` lets through and Dynamo's exception handler
    dispatches on the ``TypeError`` it holds (``except TypeError:`` in the frame, else a graph break
    where eager raises). 2.13 no longer swallows it (``impl_CONTAINS_OP_fallback`` is gone)."""
    from torch._dynamo import exc
    from torch._dynamo.variables import BuiltinVariable, ConstantVariable

    message = f"unhashable type: {type(value).__name__!r}"
    effects_begin()
    error = BuiltinVariable(TypeError).call_function(tx, [ConstantVariable.create(message)], {})
    tx.exn_vt_stack.set_current_exception(error)
    raise exc.ObservedException(message)


def _contains_falls_back() -> bool:
    """2.9-2.12's ``CONTAINS_OP`` falls back to iterating with ``==`` when ``__contains__`` raises."""
    from torch._dynamo import symbolic_convert

    return hasattr(symbolic_convert, "impl_CONTAINS_OP_fallback")


#: Dynamo's trackers of a module object (a lazy tracker is peeked at instead).
_MODULE_TRACKERS = frozenset({"UnspecializedNNModuleVariable", "NNModuleVariable",
                              "UnspecializedBuiltinNNModuleVariable", "FSDPManagedNNModuleVariable"})


#: On the key tracker's ``__init__`` (every dict key Dynamo builds): a module tracker or a lazy key
#: reaches the handler, through the gate it shares with the other key patches.
_hashable_init_gate = routed_gate(_hashable_init, key_tracker_gate, _MODULE_TRACKERS)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`TypeError: unhashable type: ...` (or `Observed exception`) compiling anything that '
             'touches a class deriving from both `nn.Module` and `Mapping` without `__hash__`',
         'every release, 2.15 included',
         '(`>=2.5`)'),
    ),
    fixes=(
        "TypeError: unhashable type: 'M' (Unsupported: Observed exception on 2.8+) for any use of an "
        "nn.Module that is also a Mapping without __hash__"
    ),
    upstream="torch/_dynamo/variables/builder.py: VariableBuilder.wrap_module "
             "(static-input walk over named_parameters/named_buffers)",
    mirrors="pytorch/pytorch#110959 (named_buffers() on unhashable module), closed PR #133972; "
            "docs/upstream/unhashable-module/",
    torch=">=2.5",
    targets=(
        Target(
            "torch._dynamo.variables.builder",
            "VariableBuilder",
            "wrap_module",
            _wrap_module_gate,
            params=("value",),
        ),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable._HashableTracker", "__init__",
               _hashable_init_gate, params=("vt",), optional=True),
        Target("torch._dynamo.variables.hashable", "HashableTracker", "__init__", _hashable_init_gate,
               params=("vt",), optional=True),
    ),
    probe=_still_broken,
    summary="modules that are unhashable (nn.Module + Mapping without __hash__) can be used in compiled code",
    history=(
        ("2.5-2.7",
         "`VariableBuilder.wrap_module` marks every parameter and buffer as a static input through "
         "`value.parameters()`/`buffers()`, whose `named_modules` memo set hashes the module: any use of `class "
         "M(nn.Module, Mapping)` without `__hash__` fails with `InternalTorchDynamoError: TypeError: unhashable "
         "type: 'M'` (or `ArgsMismatchError` while Dynamo inlines a call)"),
        ("2.8+",
         "the walk is `named_parameters()` inside `try/except TypeError` (pytorch/pytorch#153503, 'Catch "
         "unserialisable NN modules'): `Unsupported: Observed exception ... TypeError(\"unhashable type: "
         "'M'\")`, measured through 2.15. Open upstream (pytorch/pytorch#110959; PR #133972 closed unmerged)"),
    ),
)
