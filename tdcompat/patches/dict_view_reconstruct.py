"""``o.v = d.keys()`` then ``d["s"] = 1``: ``o.v`` is a view of a dict that holds only ``s`` (torch 2.6-2.12).

Symptom: a view of a dict passed in (``d.keys()``, ``d.values()``, 2.8+ ``d.items()``) stored on an object (or
in a list, a dict, anything rebuilt after the frame) while the frame also changes ``d``: after the call the
stored view shows only the items the frame changed (``len(o.v)`` 1 instead of 4), not ``d``. **Silently
wrong**, measured on 2.6.0-2.7.1 (keys, values), 2.8.0-2.12.1 (keys, values, items) when the frame added or
changed keys of the dict and deleted none; 2.5 and 2.13+ are right (case ``dict_view_reconstruct``). A view
returned from the frame is right.

Root cause: ``DictViewVariable.reconstruct`` (``DictView`` on 2.6; torch/_dynamo/variables/dicts.py) rebuilds the
view as ``codegen(self.dv_dict).<kind>()``. To replay the frame's changes to a dict passed in, ``SideEffects.
codegen_update_mutated`` rebuilds the dict tracker without its source into a temporary dict of the changed
items (``cg(var, allow_cache=False)``) that it merges into the object; on 2.6-2.12 ``PyCodegen`` caches that
temporary for the tracker, and the view rebuilt after it is a view of the temporary.

What the handler accepts: ``reconstruct(codegen)`` of exactly a keys, values or items view tracker whose dict
tracker has a source (a dict passed in, or reached from one). It emits ``<the source>.<kind>()``: a view of the
object itself, which the side effects update in place, so what it shows after the call is what CPython's view
of that dict shows. Every other view (a dict made in the frame, which has no object to refer to before the
frame's end) is Dynamo's.
"""

from __future__ import annotations

from ..dynamo_api import rebuild_dict_view
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "dict-view-reconstruct"


def _view_kinds() -> tuple:
    from torch._dynamo.variables import dicts

    names = ("DictKeysVariable", "DictValuesVariable", "DictItemsVariable", "DictKeys", "DictValues")  # 2.6: no suffix
    return tuple(getattr(dicts, name) for name in names if hasattr(dicts, name))


@fail_safe(NAME)
def _reconstruct(wrapped, instance, args, kwargs):
    """``DictViewVariable.reconstruct(codegen)`` (``DictView`` on 2.6): a view of a dict with a source is rebuilt
    from that source."""
    if len(args) != 1 or kwargs or type(instance) not in _view_kinds():
        return DEFER
    kind = getattr(instance, "kv", None)
    if kind not in ("keys", "values", "items") or not rebuild_dict_view(args[0], getattr(instance, "dv_dict", None),
                                                                        kind):
        return DEFER
    return None


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`o.v = d.keys()` (`values()`, `items()`) of a dict passed in that the frame also changes: after the call "
         "**`o.v` shows only the changed items** (a view of Dynamo's temporary dict, not of `d`)",
         "2.6–2.12",
         "(`>=2.6,<2.13`)"),
    ),
    fixes="a view of a dict passed in, stored on an object while the frame changes the dict, is rebuilt as a view "
    "of the temporary dict of changed items (silently wrong, torch 2.6-2.12)",
    upstream="torch/_dynamo/variables/dicts.py: DictViewVariable.reconstruct (codegen(self.dv_dict), served from "
    "the temporary that SideEffects.codegen_update_mutated builds with allow_cache=False)",
    mirrors="torch 2.13: the view of a dict passed in is rebuilt over the object itself",
    torch=">=2.6,<2.13",
    fixed_upstream="2.13: the stored view shows the dict passed in",
    targets=(
        Target("torch._dynamo.variables.dicts", "DictViewVariable", "reconstruct", _reconstruct,
               params=("codegen",), optional=True),
        Target("torch._dynamo.variables.dicts", "DictView", "reconstruct", _reconstruct,  # 2.6
               params=("codegen",), optional=True),
    ),
    summary="a view of a dict passed in is rebuilt over the dict object itself, not over the temporary of its "
    "changes",
    history=(
        ("2.5", "right (the view is rebuilt from the dict's source)"),
        ("2.6-2.12", "rebuilt over the temporary dict of the frame's changes when the dict was changed"),
        ("2.13+", "right"),
    ),
)
