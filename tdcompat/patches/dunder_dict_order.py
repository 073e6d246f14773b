"""Iterating ``obj.__dict__`` after adding an attribute lists the new key first (torch 2.12 on).

Root cause: ``SideEffectsProxyDict.__iter__`` (torch/_dynamo/variables/dicts.py,
the storage of ``DunderDictVariable`` from pytorch/pytorch#174570) yields the
keys stored in the frame first and the object's own keys after them. CPython
keeps insertion order: the keys the object had, then the ones added. So
``list(o.__dict__)``, ``list(vars(o))``, ``dict(vars(o))`` and anything that
iterates them after ``o.z = 1`` come out in another order than eager
(silently wrong, measured on 2.12.1, 2.13.0 and 2.15.0, plain objects and
modules).

The fix yields the object's keys that are still there in their own order, then
the added keys in the order they were first stored. Not modelled (as in
Dynamo's replay, which writes the real ``__dict__`` the same way): a key the
object had, deleted and stored again in the frame, keeps its old position.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "dunder-dict-order"


@fail_safe(NAME)
def _iter(wrapped, instance, args, kwargs):
    """``SideEffectsProxyDict.__iter__()``."""
    if args or kwargs:
        return DEFER
    own = getattr(instance, "item_dict", None)
    if not isinstance(own, dict):
        return DEFER
    from torch._dynamo.variables import ConstantVariable, DeletedVariable
    from torch._dynamo.variables.dicts import HashableTracker

    table = instance.side_effects_table()
    keys = [k for k in own if not isinstance(table.get(k), DeletedVariable)]
    keys += [k for k, v in table.items() if k not in own and not isinstance(v, DeletedVariable)]
    return iter([HashableTracker(ConstantVariable.create(k)) for k in keys])


PATCH = Patch(
    name=NAME,
    fixes="`list(obj.__dict__)` / `vars(obj)` iterated after adding an attribute put the new key first "
    "(silently wrong, torch 2.12+)",
    upstream="torch/_dynamo/variables/dicts.py: SideEffectsProxyDict.__iter__",
    mirrors="CPython dict insertion order; open upstream; SideEffectsProxyDict from pytorch/pytorch#174570",
    torch=">=2.12",
    targets=(
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "__iter__", _iter),
    ),
    requires=(
        "torch._dynamo.variables.dicts:SideEffectsProxyDict.side_effects_table",
        "torch._dynamo.variables.dicts:HashableTracker",
        "torch._dynamo.variables:DeletedVariable",
    ),
    summary="obj.__dict__ iterates in CPython's order: the object's keys, then the added ones",
    history=(
        ("2.5-2.11",
         "not this gap: `SideEffectsProxyDict` comes with `DunderDictVariable` in 2.12 (pytorch/pytorch#174570)"),
        ("2.12+",
         "`SideEffectsProxyDict.__iter__` yields the keys stored in the frame first: `list(o.__dict__)`, "
         "`list(vars(o))`, `dict(vars(o))` after `o.z = v` put the new key first (silently wrong; measured on "
         "2.12.1, 2.13.0 and 2.15.0, plain objects and modules). Open upstream"),
    ),
)
