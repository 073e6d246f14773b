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
It is a separate entry because its range differs (<2.9) and it wraps another
method (``BuiltinVariable.call_function``; ``call_vars`` does not exist to wrap).
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe
from .instance_dict_writes import _bind, _realize, _receiver_types


@fail_safe("instance-dict-vars")
def _builtin_call_function(wrapped, instance, args, kwargs):
    if getattr(instance, "fn", None) is not vars:
        return DEFER
    bound = _bind(args, kwargs, ("tx", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, call_args, call_kwargs = bound
    if call_kwargs or len(call_args) != 1:
        return DEFER
    obj = _realize(call_args[0])
    if type(obj) not in _receiver_types():
        return DEFER
    return obj.var_getattr(tx, "__dict__")


PATCH = Patch(
    name="instance-dict-vars",
    fixes="Unsupported: builtin: vars [UserDefinedObjectVariable] / Failed to trace builtin operator vars",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_function (call_vars from 2.9)",
    mirrors="BuiltinVariable.call_vars of torch 2.9",
    torch="<2.9",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_function", _builtin_call_function,
               params=("tx", "args", "kwargs")),
    ),
    summary="vars(obj) on user objects, modules, mappings, context managers is obj.__dict__",
)
