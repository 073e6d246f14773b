"""``vars(obj)`` on a user object is ``obj.__dict__`` (gap 3, issue 5).

Root cause: before torch 2.9 ``BuiltinVariable`` (torch/_dynamo/variables/builtin.py)
has no handler for the builtin ``vars``, so ``vars(obj)`` graph-breaks
(``Unsupported: builtin: vars [...]`` on 2.5/2.6, ``Failed to trace builtin
operator`` on 2.7/2.8) even where ``obj.__dict__`` is supported. 2.9 added
``BuiltinVariable.call_vars``, which returns ``obj.var_getattr(tx, "__dict__")``.
This entry does exactly that, for the receivers of ``instance-dict-writes``
(user objects, unspecialized nn.Modules, MutableMappings, context managers);
everything else (``vars()`` without argument, modules, classes, ...) defers.
The writes through the dictionary it returns are ``instance-dict-writes``'s.

It is a separate entry because its range differs (<2.9). It wraps
``InstructionTranslatorBase.call_function`` (torch/_dynamo/symbolic_convert.py),
where every traced call is dispatched, and acts only when the callee is the
``BuiltinVariable`` of ``vars``: there is no ``call_vars`` to wrap before 2.9, and
``BuiltinVariable.call_function`` is already wrapped by ``module-mapping-dict``
(two entries on one method cannot be reverted independently by the installer).
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe
from .instance_dict_writes import _bind, _realize, _receiver_types


_BUILTIN = []


def _builtin_variable():
    if not _BUILTIN:
        from torch._dynamo.variables.builtin import BuiltinVariable

        _BUILTIN.append(BuiltinVariable)
    return _BUILTIN[0]


def _is_vars(fn) -> bool:
    """Is ``fn`` the tracker of builtin ``vars``? Cheap, and realizes a lazy tracker only if so."""
    builtin = _builtin_variable()
    if type(fn) is builtin:
        return fn.fn is vars
    cache = getattr(fn, "__dict__", {}).get("_cache")  # LazyVariableTracker (2.8 loads builtins lazily)
    if cache is None:
        return False
    if cache.vt is not None:  # already realized
        return type(cache.vt) is builtin and cache.vt.fn is vars
    if getattr(cache, "value", None) is not vars:
        return False
    realized = fn.realize()
    return type(realized) is builtin and realized.fn is vars


def _call_function_gate(wrapped, instance, args, kwargs):
    """What is installed: a callee that is not ``vars`` goes straight to Dynamo.

    The test is :func:`_is_vars`'s first step without its calls: a ``BuiltinVariable``
    of another builtin, or a tracker that is not a lazy one (no ``_cache``)."""
    try:
        fn = args[0] if args else kwargs.get("fn")
        if type(fn) is _BUILTIN[0]:
            other = fn.fn is not vars
        else:
            attrs = fn.__dict__
            other = "_cache" not in attrs or attrs["_cache"] is None
    except Exception:  # noqa: BLE001 - not loaded yet, or an odd callee: the handler decides
        other = False
    if other:
        return wrapped(*args, **kwargs)
    return _call_function(wrapped, instance, args, kwargs)


@fail_safe("instance-dict-vars")
def _call_function(wrapped, instance, args, kwargs):
    """``InstructionTranslatorBase.call_function(fn, args, kwargs)`` for ``fn`` = builtin ``vars``."""
    fn = args[0] if args else kwargs.get("fn")
    if not _is_vars(fn):
        return DEFER
    bound = _bind(args, kwargs, ("fn", "args", "kwargs"))
    if bound is None:
        return DEFER
    _, call_args, call_kwargs = bound
    if call_kwargs or len(call_args) != 1:
        return DEFER
    obj = _realize(call_args[0])
    if type(obj) not in _receiver_types():
        return DEFER
    # What BuiltinVariable.call_vars does from 2.9 on.
    effects_begin()
    instance.push(obj.var_getattr(instance, "__dict__"))
    return None


PATCH = Patch(
    name="instance-dict-vars",
    fixes="Unsupported: builtin: vars [<class '...UserDefinedObjectVariable'>] False (2.5-2.6); "
    "Failed to trace builtin operator vars (2.7-2.8)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable (no call_vars before 2.9)",
    mirrors="BuiltinVariable.call_vars of torch 2.9",
    torch="<2.9",
    fixed_upstream="2.9: BuiltinVariable.call_vars",
    targets=(
        Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", "call_function", _call_function_gate,
               params=("fn", "args", "kwargs")),
    ),
    requires=(
        "torch._dynamo.variables.builtin:BuiltinVariable",
        "torch._dynamo.symbolic_convert:InstructionTranslatorBase.push",
    ),
    # vars(m) is m.__dict__: for an input mapping on 2.6-2.8 a stale copy without it; and
    # vars(o)[k] for a k a property shadows reads the property without instance-dict-writes'
    # reads (silently wrong with TDCOMPAT_DISABLE=instance-dict-writes, found by test_dependencies).
    needs=("mapping-dunder-dict", "instance-dict-writes"),
    summary="vars(obj) on user objects, modules, mappings and context managers is obj.__dict__",
)
