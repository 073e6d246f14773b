"""``o.__dict__.copy()`` crashes the compile (torch 2.12).

Symptom: ``o.__dict__.copy()`` or ``vars(o).copy()`` in compiled code raises
``InternalTorchDynamoError: AttributeError: 'SideEffectsProxyDict' object has no attribute
'copy'``, with or without ``fullgraph``: the user's program stops (not a graph break).

Root cause: 2.12 models ``o.__dict__`` as ``DunderDictVariable`` (torch/_dynamo/variables/dicts.py,
pytorch/pytorch#174570), a ``ConstDictVariable`` whose ``items`` is a ``SideEffectsProxyDict``
(a ``MutableMapping`` over the object's attribute side effects, with no ``copy``).
``ConstDictVariable.call_method("copy")`` calls ``self.items.copy()``.

The fix, as torch 2.13 does it (``DunderDictVariable.call_method`` answers ``copy`` with
``ConstDictVariable(dict(self.items), mutation_type=ValueMutationNew(), source=None)``; upstream's
``test_dunder_dict_copy_does_not_alias_instance_dict``): a new dict of the entries now. It accepts
``copy()`` with no arguments of an instance dict whose real dict is exactly a ``dict`` and that the
frame did not replace (a ``dict`` subclass may define its own ``copy``, which CPython would call).
Sound because ``dict.copy`` is ``dict(d)`` for an exact ``dict``: the same keys in the same order,
the same value objects, no user code run. The entries come from iterating the proxy, which
``dunder-dict-order`` (declared in ``needs``: without it the order is Dynamo's, wrong, and
unguarded) makes CPython's order, guarding an input's keys and their order, and which graph-breaks
where it cannot; each value is what ``o.__dict__[k]`` reads in the frame. Anything else: Dynamo's
own method.
"""

from __future__ import annotations

from ..dynamo_api import new_object_kwargs, pending_stores
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dunder-dict-copy"


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``DunderDictVariable.call_method(tx, "copy", [], {})``."""
    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if name != "copy" or call_args or call_kwargs:
        return DEFER
    from torch._dynamo.variables import ConstDictVariable
    from torch._dynamo.variables.dicts import SideEffectsProxyDict

    proxy = instance.items
    if type(proxy) is not SideEffectsProxyDict:
        return DEFER
    if "__dict__" in pending_stores(tx.output.side_effects, proxy.item):
        return DEFER  # the frame replaced the instance dict
    if type(SideEffectsProxyDict.get_example_value_dict(proxy.item)) is not dict:
        return DEFER  # a dict subclass: its own copy() may run
    effects_begin()
    return ConstDictVariable(dict(proxy), **new_object_kwargs())


PATCH = Patch(
    name=NAME,
    fixes="InternalTorchDynamoError: AttributeError: 'SideEffectsProxyDict' object has no attribute 'copy' "
    "(`o.__dict__.copy()`, `vars(o).copy()`, with or without fullgraph)",
    upstream="torch/_dynamo/variables/dicts.py: DunderDictVariable.call_method (inherits ConstDictVariable's)",
    mirrors="torch 2.13 DunderDictVariable.call_method('copy') (upstream test "
    "test_dunder_dict_copy_does_not_alias_instance_dict)",
    torch=">=2.12,<2.13",
    fixed_upstream="2.13: DunderDictVariable.call_method answers copy with a new ConstDictVariable",
    targets=(
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "call_method", _call_method,
               inherited=True, params=("tx", "name", "args", "kwargs")),
    ),
    needs=("dunder-dict-order",),  # its SideEffectsProxyDict.__iter__: CPython's order, an input's keys guarded
    requires=(
        "torch._dynamo.variables.dicts:SideEffectsProxyDict.get_example_value_dict",
        "torch._dynamo.variables:ConstDictVariable",
    ),
    summary="o.__dict__.copy() is a new dict of the entries now, as on 2.13",
    history=(
        ("2.5-2.11", "not this gap: `o.__dict__` is a `GetAttrVariable` there (`dunder-dict-views` answers `copy`)"),
        ("2.12", "`ConstDictVariable.call_method('copy')` calls `SideEffectsProxyDict.copy`, which does not exist: "
         "`InternalTorchDynamoError` (measured on 2.12.1, also without fullgraph)"),
        ("2.13+", "fixed upstream: `DunderDictVariable.call_method` answers `copy`"),
    ),
)
