"""``o.__dict__`` of an object made in the frame comes back empty when it leaves the frame (torch 2.12+).

Root cause: from 2.12 ``o.__dict__`` is a ``DunderDictVariable`` (torch/_dynamo/variables/dicts.py,
pytorch/pytorch#174570) whose items are a view of the side-effects record of ``o``. An object
made in the frame gives it no source, so when the dict (or a ``keys()``/``values()``/``items()``
view of it, which rebuilds its dict first) is returned or is live at a graph break, Dynamo
rebuilds it as a new dict with ``ConstDictVariable.reconstruct``, which writes only the items
it counts as new since the tracker was made: none. ``o = C(x); return o.__dict__`` returns
``{}``, ``return o.__dict__.keys()`` an empty view, and even where items survive, the dict is
a copy, not ``vars(o)``, so a later write to ``o`` does not show in it. Silently wrong on
2.12.1-2.15.0, with and without the rest of tdcompat.

Worse, the dict tracker reaches ``o`` only through its ``SideEffectsProxyDict`` (not a tracker
field), so Dynamo's liveness walk drops an ``o`` that only its dict keeps alive, with its
record of attribute stores.

The fix: the dict tracker of an object made in the frame keeps ``o`` in a field
(``DunderDictVariable.__init__``), so ``o`` stays live as long as its dict does, and the dict
is rebuilt as what it is, ``o.__dict__`` of the rebuilt ``o`` (the object, then ``LOAD_ATTR
__dict__``): the attributes the frame stored are set on ``o`` after the graph, into that very
dict, so contents, order and identity are eager's. A dict with a source (an object passed
in) is rebuilt from its source as before.
"""

from __future__ import annotations

from ..dynamo_api import made_in_frame
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "dunder-dict-escape"


@fail_safe(NAME)
def _reconstruct(wrapped, instance, args, kwargs):
    """``DunderDictVariable.reconstruct(codegen)`` (inherited from ``ConstDictVariable``)."""
    if not made_in_frame(instance) or len(args) != 1 or kwargs:
        return DEFER  # the dict of an object passed in: rebuilt from its source
    owner = getattr(instance.items, "item", None)
    if owner is None or not made_in_frame(owner):
        return DEFER
    (codegen,) = args
    effects_begin()  # emits bytecode
    codegen(owner)  # live through the field __init__ set: rebuilt by the side effects
    codegen.load_attr("__dict__")
    return None


@fail_safe(NAME)
def _init(wrapped, instance, args, kwargs):
    """``DunderDictVariable.__init__(vt, tx, **kwargs)``: for an object made in the frame, the
    dict tracker holds the object tracker in a field, so Dynamo's liveness walk over what the
    frame leaves behind (``VariableTracker.visit`` of every field) keeps the object, and its
    record of attribute stores, as long as its dict is reachable."""
    result = wrapped(*args, **kwargs)
    owner = getattr(getattr(instance, "items", None), "item", None)
    if owner is not None and made_in_frame(instance):
        instance.tdcompat_owner = owner
    return result


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`o = C(x); return o.__dict__` (or `.keys()`/`.values()`/`.items()` of it) **returns '
             '`{}`**; returned with `o` or held across a graph break it is **a copy**, not `vars(o)`',
         '2.12–2.15',
         '(`>=2.12`)'),
    ),
    fixes="`o = C(x); return o.__dict__` (or `o.__dict__.keys()`/`values()`/`items()`) returns an empty dict "
    "(view) for an object made in the frame, silently",
    upstream="torch/_dynamo/variables/dicts.py: DunderDictVariable.reconstruct (inherits ConstDictVariable's)",
    mirrors="CPython: `o.__dict__` is the object's own dict; open upstream (DunderDictVariable from "
    "pytorch/pytorch#174570)",
    torch=">=2.12",
    targets=(
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "__init__", _init, params=("vt", "tx")),
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "reconstruct", _reconstruct,
               inherited=True, params=("codegen",)),
    ),
    requires=(
        "torch._dynamo.variables.dicts:SideEffectsProxyDict",
        "torch._dynamo.codegen:PyCodegen.load_attr",
    ),
    summary="the __dict__ (or a view of it) of an object made in the frame leaves the frame as that object's dict",
    history=(
        ("2.5-2.11",
         "not this gap: `o.__dict__` is a `GetAttrVariable` there (tdcompat's `dunder-dict-views` breaks on a "
         "view that outlives the frame)"),
        ("2.12+",
         "`DunderDictVariable` of an object made in the frame is rebuilt as a new dict holding only the items "
         "it counts as new: `{}` (measured on 2.12.1, 2.13.0, 2.14.1, 2.15.0)"),
    ),
)
