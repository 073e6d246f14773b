"""Installing and removing patches' handlers on Dynamo's methods, exactly.

Resolution happens before anything changes: a patch whose targets or
requirements are missing raises :class:`NotApplicable` and leaves torch as it
was. The installer owns one wrapper per Dynamo method: a patch declares a
handler for a method (its :class:`~tdcompat.spec.Target`), and the wrapper calls
the handlers of the patches applied to it in the order they were applied, each
handler's ``wrapped`` being the next handler and the last one's Dynamo's
method, so a handler that defers passes the call on. On a plain function (nearly
every Dynamo method) each handler is one plain function in the class ``__dict__``
whose ``__wrapped__`` is the next; a handler declared with
:func:`tdcompat.wrappers.gate` is installed as its gate, a function with the
method's own signature that sends a call it can tell is not its pattern straight
to the next function: one Python frame and no allocation, which on 2.5.1 is the
difference between a measurable and an unmeasurable tracing cost (wrapt's
``FunctionWrapper`` bound on every access, with its argument tuple and dict,
cost 1.5% of tracing time on the neutral workloads; benchmarks/README.md). A
``staticmethod`` gets the same layers around its function (with no instance); any
other descriptor is wrapped with ``wrapt.FunctionWrapper``, and its gates' handlers
are installed without the gate. The first install on a method stores the attribute
found in the owning class's own ``__dict__`` (or its absence) and the last
uninstall puts back that very object (or deletes the wrapper), so a class with
no patch left on it is byte-for-byte what it was. :func:`wrapped_methods` says
what is wrapped now and by which patches.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import wrapt

from .spec import Patch, Target

_MISSING = object()


class NotApplicable(Exception):
    """The installed torch does not have the internals a patch needs."""


@dataclasses.dataclass
class Installed:
    """One patch's handler on one method (what :func:`uninstall` takes back)."""

    owner: type
    attribute: str
    patch: str


@dataclasses.dataclass
class _Method:
    """A Dynamo method tdcompat wraps: the one wrapper on it and the handlers it calls."""

    owner: type
    attribute: str
    qualname: str
    original: Any  # the owner's own __dict__ entry, or _MISSING
    raw: Any  # what the wrapper wraps (the original, or the inherited method)
    handlers: List[Tuple[str, Any]]  # (patch name, handler), in the order applied
    wrapper: Any = None
    unfit: List[str] = dataclasses.field(default_factory=list)  # patches whose gate did not fit
    inherited: bool = False  # wraps what the owner inherits (re-read from its parents at each install)

    def install(self) -> None:
        if self.inherited:  # over the parent's method as it is now
            self.raw = _raw_lookup(self.owner, self.attribute, past_owner=True)
        self.wrapper, unfit = _chain(self.raw, [h for _, h in self.handlers])
        self.unfit = list(dict.fromkeys(name for name, h in self.handlers if h in unfit))
        before = getattr(self.owner, self.attribute, None)
        setattr(self.owner, self.attribute, self.wrapper)
        _sync_dispatch_tables(self.owner, self.attribute, before, getattr(self.owner, self.attribute, None))
        _relayer_inheritors(self)

    def restore(self) -> None:
        before = getattr(self.owner, self.attribute, None)
        if self.original is _MISSING:
            if self.attribute in vars(self.owner):
                delattr(self.owner, self.attribute)
        else:
            setattr(self.owner, self.attribute, self.original)
        _sync_dispatch_tables(self.owner, self.attribute, before, getattr(self.owner, self.attribute, None))
        _relayer_inheritors(self)


def _relayer_inheritors(changed: _Method) -> None:
    """Re-install the wrappers that subclasses of ``changed.owner`` put over the method they inherit from it:
    each wraps its parent's method as it was when installed, so a patch applied to or reverted from the parent
    later must be re-chained there too (else a reverted handler keeps running under the subclass's wrapper).
    Nearest subclasses first. Nothing runs per call."""
    inheritors = [m for m in _METHODS.values()
                  if m.inherited and m.attribute == changed.attribute and m.owner is not changed.owner
                  and changed.owner in m.owner.__mro__]
    for method in sorted(inheritors, key=lambda m: len(m.owner.__mro__)):
        method.install()


def _sync_dispatch_tables(owner: type, attribute: str, old: Any, new: Any) -> None:
    """A bytecode handler (``InstructionTranslatorBase.POP_JUMP_IF_FALSE``...) is also cached, at class
    creation, in the ``dispatch_table`` list that Dynamo's metaclass puts on every translator class
    (indexed by opcode; ``step()`` calls through it). Swap ``old`` for ``new`` there, at that opcode, in
    ``owner`` and every subclass whose table holds ``old``; revert swaps back, so the tables end as they
    were (the same lists, the same functions)."""
    import dis

    op = dis.opmap.get(attribute)
    if op is None or old is new:
        return
    todo, seen = [owner], set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        table = vars(cls).get("dispatch_table")
        if isinstance(table, list) and op < len(table) and table[op] is old:
            table[op] = new
        todo.extend(type.__subclasses__(cls))


_METHODS: Dict[Tuple[type, str], _Method] = {}


def _chain(raw: Any, handlers: List[Any]) -> Tuple[Any, List[Any]]:
    """What is installed for ``handlers`` on ``raw`` (the first handler's layer is outermost), and
    the gated handlers installed without their gate. A handler several patches share
    (``instance_dict.deletion_tracker()``) is one layer."""
    handlers = list(dict.fromkeys(handlers))
    gated = [h for h in handlers if _handler_of(h) is not h]
    static = isinstance(raw, staticmethod) and isinstance(raw.__func__, types.FunctionType)
    if not static and not isinstance(raw, types.FunctionType):
        wrapper = raw
        for handler in reversed(handlers):
            wrapper = wrapt.FunctionWrapper(wrapper, _handler_of(handler))
        return wrapper, gated
    method = raw.__func__ if static else raw
    signature = _signature(method)
    unfit: List[Any] = []
    inner_first = list(reversed(handlers))
    while inner_first:
        handler = inner_first.pop(0)
        route = getattr(handler, "__tdcompat_route__", None)
        if route is None:
            method, fits = _layer(method, handler, signature, static)
            if not fits:
                unfit.append(handler)
            continue
        group = [handler]  # the run of routed gates with this builder, innermost first
        while inner_first and getattr(inner_first[0], "__tdcompat_route__", (None,))[0] is route[0]:
            group.append(inner_first.pop(0))
        method, fits = _routed_layer(method, group, route[0], signature, static)
        if not fits:
            unfit.extend(group)
    return (staticmethod(method) if static else method), unfit


def _handler_of(handler: Any) -> Any:
    """The wrapt-protocol handler behind a gate (or the handler itself)."""
    return getattr(handler, "__tdcompat_gated__", handler)


def _static_handle(slow: Any, inner: types.FunctionType) -> Callable[..., Any]:
    def handle(*args, **kwargs):
        return slow(inner, None, args, kwargs)

    return handle


def _method_handle(slow: Any, inner: types.FunctionType) -> Callable[..., Any]:
    bind = types.MethodType

    def handle(self, *args, **kwargs):
        return slow(bind(inner, self), self, args, kwargs)

    return handle


def _layer(inner: types.FunctionType, handler: Any, signature: Any,
           static: bool = False) -> Tuple[Callable[..., Any], bool]:
    """One plain function calling ``handler(wrapped, self, args, kwargs)`` with ``inner``
    bound as ``wrapped`` (for a ``staticmethod``'s function, ``inner`` itself and no instance,
    as wrapt passes); for a gate, the gate in front of that function, if the gate has the
    very ``signature`` of Dynamo's method or takes any call (else the handler alone: slower,
    as correct, and False with it)."""
    slow = _handler_of(handler)
    handle = (_static_handle if static else _method_handle)(slow, inner)
    _mark(handle, inner)
    if slow is handler:
        return handle, True
    fast = handler(inner, handle)
    if _signature(fast) not in (signature, _GENERIC[static]):
        return handle, False
    _mark(fast, inner)
    return fast, True


def _routed_layer(inner: types.FunctionType, group: List[Any], build: Callable[..., Any], signature: Any,
                  static: bool) -> Tuple[Callable[..., Any], bool]:
    """The handlers of ``group`` (routed gates sharing ``build``, innermost first) chained over
    ``inner``, each behind a gate of its own route, all behind one gate built from the union of
    their routes, which sends every call none of them routes straight to ``inner`` (see
    :func:`tdcompat.wrappers.routed_gate`)."""
    chained: Any = inner
    for handler in group:
        handle = (_static_handle if static else _method_handle)(_handler_of(handler), chained)
        _mark(handle, chained)
        if len(group) > 1:  # each handler behind its own route: a routed call reaches only its handlers
            handle = handler(chained, handle)  # its route's gate, or its own
            _mark(handle, chained)
        chained = handle
    fast = build(inner, chained, frozenset().union(*(h.__tdcompat_route__[1] for h in group)))
    if _signature(fast) not in (signature, _GENERIC[static]):
        return chained, False
    _mark(fast, chained)
    return fast, True


#: A gate that takes any call (``(self, *args, **kwargs)``; no ``self`` for a staticmethod):
#: it fits every signature, for a method whose parameters differ between releases.
_GENERIC = {
    static: [*([] if static else [("self", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty)]),
             ("args", inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty),
             ("kwargs", inspect.Parameter.VAR_KEYWORD, inspect.Parameter.empty)]
    for static in (False, True)
}


def _mark(function: Any, inner: Any) -> None:
    functools.update_wrapper(function, inner)  # name, docstring, __wrapped__ = inner
    function.__tdcompat_layer__ = True


def _signature(function: Any) -> Any:
    """Parameter names, kinds and defaults (annotations differ in form between releases)."""
    try:
        parameters = inspect.signature(function, follow_wrapped=False).parameters.values()
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind, p.default) for p in parameters]


def is_layer(obj: Any) -> bool:
    """Is ``obj`` something the installer put in a class ``__dict__``?"""
    if isinstance(obj, staticmethod):
        obj = obj.__func__
    return getattr(obj, "__tdcompat_layer__", False) is True or type(obj) is wrapt.FunctionWrapper


def wrapped_methods() -> Dict[str, List[str]]:
    """Every Dynamo method tdcompat wraps now -> the patches handling it, in call order."""
    return {method.qualname: [name for name, _ in method.handlers] for method in _METHODS.values()}


def is_installed(patch: str) -> bool:
    """Are handlers of ``patch`` in place now? For a handler whose shortcut is sound only while another
    patch models what it reads (``delattr-missing`` asks about ``super-delattr``): a question about
    installed handlers, answered by their owner, below the life cycle."""
    return any(name == patch for method in _METHODS.values() for name, _ in method.handlers)


def unfit_gates() -> List[str]:
    """``"<method>: <patch>"`` for each gate installed as its handler alone, its signature being
    neither Dynamo's method's nor ``(self, *args, **kwargs)`` (or the method not a plain
    function): correct, but every call then pays the handler's fail-safe. Empty in a sound build."""
    return [f"{method.qualname}: {name}" for method in _METHODS.values() for name in method.unfit]


def resolve(path: str) -> Any:
    """``"pkg.module:Class.attr"`` -> object; NotApplicable naming what is missing."""
    module_name, _, dotted = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any failure means "not there"
        raise NotApplicable(f"cannot import {module_name} ({type(exc).__name__}: {exc})") from None
    walked = module_name
    for part in filter(None, dotted.split(".")):
        walked = f"{walked}.{part}" if walked != module_name else f"{module_name}:{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise NotApplicable(f"{walked} does not exist") from None
    return obj


def _raw_lookup(owner: type, attribute: str, past_owner: bool = False) -> Any:
    for klass in owner.__mro__[1:] if past_owner else owner.__mro__:
        if attribute in vars(klass):
            return vars(klass)[attribute]
    return _MISSING


def _check_params(target: Target, raw: Any) -> None:
    if not target.params:
        return
    func = getattr(raw, "__func__", raw)
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        raise NotApplicable(f"{target.qualname} has no readable signature") from None
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    missing = [p for p in target.params if p not in parameters and not accepts_any]
    if missing:
        raise NotApplicable(
            f"{target.qualname}{inspect.signature(func)} lacks parameter(s) {', '.join(missing)}"
        )


def _not_handled(*args: Any, **kwargs: Any) -> None:
    """What an ``added`` target wraps: ``None``, which Dynamo's ``call_<builtin>`` dispatch
    reads as "no handler here" (so a handler that defers leaves Dynamo as it was)."""
    return None


def _prepare(target: Target) -> tuple:
    owner = resolve(f"{target.module}:{target.owner}")
    if not isinstance(owner, type):
        raise NotApplicable(f"{target.module}:{target.owner} is not a class")
    own = vars(owner).get(target.attribute, _MISSING)
    raw = own if own is not _MISSING else _raw_lookup(owner, target.attribute)
    if target.added:
        if raw is not _MISSING:
            raise NotApplicable(f"{target.qualname} exists already (the upstream fix is in)")
        return owner, _MISSING, _not_handled
    if raw is _MISSING:
        raise NotApplicable(f"{target.qualname} does not exist")
    if own is _MISSING and not target.inherited:
        raise NotApplicable(f"{target.qualname} is no longer defined on {target.owner} itself")
    if not callable(getattr(raw, "__func__", raw)):
        raise NotApplicable(f"{target.qualname} is not a method")
    _check_params(target, raw)
    return owner, own, raw


def _serves_this_torch(target: Target) -> bool:
    if target.when is None:
        return True
    try:
        return bool(target.when())
    except Exception:  # noqa: BLE001 - unsure: install it (the handler defers by itself)
        return True


def install(patch: Patch) -> List[Installed]:
    """Wrap every target of ``patch`` this torch has a use for; all or nothing."""
    prepared, absent = [], []
    for target in patch.targets:
        if not _serves_this_torch(target):
            absent.append(f"{target.qualname}: not needed on this torch")
            continue
        try:
            prepared.append((target, *_prepare(target)))
        except NotApplicable as exc:
            if not target.optional:
                raise
            absent.append(str(exc))
    if not prepared:
        raise NotApplicable("; ".join(absent))
    for requirement in patch.requires:
        resolve(requirement)
    installed: List[Installed] = []
    for target, owner, own, raw in prepared:
        method = _METHODS.get((owner, target.attribute))
        if method is None:
            method = _METHODS[owner, target.attribute] = _Method(
                owner, target.attribute, target.qualname, own, raw, [],
                inherited=own is _MISSING and not target.added)
        method.handlers.append((patch.name, target.wrapper))
        method.install()
        installed.append(Installed(owner, target.attribute, patch.name))
    _drop_bound_handlers(entry.owner for entry in installed)
    return installed


#: Class attributes where Dynamo keeps handlers bound to methods tdcompat may wrap:
#: ``BuiltinVariable._make_handler`` binds ``call_<builtin>`` once per argument types and
#: keeps it in ``call_function_handler_cache`` (2.5-2.15). A wrapper installed after the
#: first use would never run, and one removed would keep running.
_HANDLER_CACHES = ("call_function_handler_cache",)


def _drop_bound_handlers(owners) -> None:
    for owner in owners:
        for klass in owner.__mro__:
            for name in _HANDLER_CACHES:
                cache = vars(klass).get(name)
                if isinstance(cache, dict):
                    cache.clear()


def uninstall(installed: List[Installed]) -> Optional[str]:
    """Restore what :func:`install` replaced; returns a note if someone re-wrapped on top."""
    note = None
    for entry in reversed(installed):
        method = _METHODS.get((entry.owner, entry.attribute))
        if method is None:
            continue
        if vars(entry.owner).get(entry.attribute, _MISSING) is not method.wrapper:
            note = f"{entry.owner.__name__}.{entry.attribute} was replaced by someone else after tdcompat patched it"
        method.handlers = [(name, h) for name, h in method.handlers if name != entry.patch]
        if method.handlers:
            method.install()
        else:
            method.restore()
            del _METHODS[entry.owner, entry.attribute]
    _drop_bound_handlers(entry.owner for entry in installed)
    return note
