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

It is a separate entry because its range differs (<2.9). It adds upstream's fix
itself, ``BuiltinVariable.call_vars``, which ``BuiltinVariable._make_handler`` looks
up by name for the builtin ``vars`` only: no other traced call pays anything.
"""

from __future__ import annotations

from ..dynamo_api import realize
from ..instance_dict import instance_dict_receiver_types
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe


@fail_safe("instance-dict-vars")
def _call_vars(wrapped, instance, args, kwargs):
    """``BuiltinVariable(vars).call_vars(tx, obj)``: what 2.9's method does, for the receivers
    whose ``__dict__`` is their attribute storage; anything else (``vars()``, modules,
    classes, ...) defers, and Dynamo then breaks as it did without the method."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, obj = args
    obj = realize(obj)
    if type(obj) not in instance_dict_receiver_types():
        return DEFER
    return obj.var_getattr(tx, "__dict__")


PATCH = Patch(
    name="instance-dict-vars",
    symptoms=(
        ('`Unsupported: builtin: vars ...` / `Failed to trace builtin operator vars`',
         '2.5–2.8',
         '(`<2.9`)'),
    ),
    fixes="Unsupported: builtin: vars [<class '...UserDefinedObjectVariable'>] False (2.5-2.6); "
    "Failed to trace builtin operator vars (2.7-2.8)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable (no call_vars before 2.9)",
    mirrors="BuiltinVariable.call_vars of torch 2.9",
    torch="<2.9",
    fixed_upstream="2.9: BuiltinVariable.call_vars",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_vars", _call_vars, added=True),
    ),
    # vars(m) is m.__dict__: for an input mapping on 2.6-2.8 a stale copy without it; and
    # vars(o)[k] for a k a property shadows reads the property without instance-dict-writes'
    # reads (silently wrong with TDCOMPAT_DISABLE=instance-dict-writes, found by test_dependencies).
    needs=("mapping-dunder-dict", "instance-dict-writes"),
    summary="vars(obj) on user objects, modules, mappings and context managers is obj.__dict__",
    history=(
        ("2.5-2.6", "`BuiltinVariable` has no handler for `vars`: `Unsupported: builtin: vars [...]`"),
        ("2.7-2.8", "`Failed to trace builtin operator vars`"),
        ("2.9+", "fixed upstream: `BuiltinVariable.call_vars` returns `obj.var_getattr(tx, '__dict__')`"),
    ),
)
