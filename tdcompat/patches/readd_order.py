"""An attribute deleted and set again moves to the end of a new object's ``__dict__`` (torch 2.5-2.13).

Root cause: Dynamo records an object's attribute stores in ``SideEffects.store_attr_mutations``,
one entry per name in the order of the *first* store (torch/_dynamo/side_effects.py,
``SideEffects.store_attr``); a deletion writes a ``DeletedVariable`` into that entry and a later
store overwrites it in place. CPython's instance dict moves the key to the end instead. An
object made in the frame is rebuilt after the graph by setting its recorded attributes in
record order, so ``o = C(); del o.a; o.a = v`` leaves the real object with ``a`` first:
``list(vars(o))``, ``o.__dict__`` iteration after a graph break and anything that reads the
order later are silently wrong (measured on 2.5.1-2.13.0 without tdcompat; right on 2.14.1
and 2.15.0). 2.13 passes the mutation kind after the value.

The fix: a store of a value under a name whose entry holds a ``DeletedVariable``, on an object
made in the frame, first removes that entry, so the store lands at the end of the record as
the key does in CPython. An object passed in (issue 26) is the shared
``instance_dict.readd_tracker()`` handler's, declared here too: a name its real ``__dict__``
lacked on entry (added, deleted, added again in the frame) is moved to the end of the record
the same way, under a guard that the real ``__dict__`` still lacks it; the real ``__dict__``'s
last key, with no key the frame added present at the store, keeps its place (which is then its
CPython place) under a guard on the real keys and their order; any other name it had graph-breaks
(the replay's ``setattr`` would leave the key in its old place: silently wrong natively on
2.5-2.15). On 2.14+ (outside this patch's range) Dynamo drops the recorded deletion in
``SideEffects.store_instance_dict_attr`` before ``store_attr``: dunder-dict-order declares
``instance_dict.readd_instance_dict_tracker()`` there, which asks the same question first.
"""

from __future__ import annotations

from ..dynamo_api import made_in_frame
from ..instance_dict import pending_stores, readd_tracker
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "readd-order"

_DELETED: list = []


def _store_attr_gate(wrapped, instance, args, kwargs):
    """What is installed on ``SideEffects.store_attr(item, name, value)``: a store of a deletion,
    or on an object with no recorded deletion of that name, goes straight to Dynamo."""
    try:
        entry = pending_stores(instance, args[0]).get(args[1])
        if entry is None or type(entry) is not _DELETED[0] or type(args[2]) is _DELETED[0]:
            return wrapped(*args, **kwargs)
    except Exception:  # noqa: BLE001  (not loaded yet, or an odd call: the handler decides)
        pass
    return _store_attr(wrapped, instance, args, kwargs)


@fail_safe(NAME)
def _store_attr(wrapped, instance, args, kwargs):
    from torch._dynamo.variables import DeletedVariable

    if not _DELETED:
        _DELETED.append(DeletedVariable)
    if len(args) < 3:  # 2.13+ pass the mutation kind (and a source) after the value
        return DEFER
    item, name, value = args[:3]
    if isinstance(value, DeletedVariable) or not made_in_frame(item):
        return DEFER
    record = pending_stores(instance, item)
    if not isinstance(record.get(name), DeletedVariable):
        return DEFER
    effects_begin()
    del record[name]  # the store below appends it: the key's place in CPython's dict
    return wrapped(*args, **kwargs)  # (the deletion tracker then sees it last: CPython's place)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`o = C(); del o.a; o.a = v`: after the frame (or a graph break) `list(vars(o))` **lists '
             '`a` first** (CPython: last)',
         '2.5–2.13',
         '(`<2.14`)'),
    ),
    fixes="`o = C(); del o.a; o.a = v` leaves `a` first in the rebuilt object's __dict__ "
    "(CPython: last), silently wrong for `list(vars(o))` after the frame or a graph break",
    upstream="torch/_dynamo/side_effects.py: SideEffects.store_attr",
    mirrors="CPython dict insertion order (a deleted key set again goes to the end); open upstream",
    torch="<2.14",
    fixed_upstream="2.14: the rebuilt object is right (measured on 2.14.1 and 2.15.0)",
    targets=(
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", _store_attr_gate,
               params=("item", "name", "value")),
        # objects passed in: reordered where their real __dict__ lacks the name, else a graph break
        Target("torch._dynamo.side_effects", "SideEffects", "store_attr", readd_tracker(),
               params=("item", "name", "value")),
    ),
    requires=("torch._dynamo.variables:DeletedVariable", "torch._dynamo.source:AttrSource"),
    summary="an attribute deleted and set again on an object made in the frame goes to the end of its __dict__",
    history=(
        ("2.5-2.13",
         "the record of attribute stores keeps a deleted and re-set key in its first place: the object "
         "made in the frame is rebuilt with it first (silently wrong key order; measured on 2.5.1-2.13.0)"),
        ("2.14+", "the rebuilt object is right natively (measured on 2.14.1 and 2.15.0)"),
    ),
)
