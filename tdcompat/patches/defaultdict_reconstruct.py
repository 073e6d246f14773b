"""A ``defaultdict`` made in the frame comes back as a plain ``dict`` (torch 2.5-2.7).

Symptom: ``d = collections.defaultdict(list); ...; return d`` (also ``dd.copy()``, ``dd | {...}`` of a
defaultdict, or one stored on an object or held across a graph break) leaves compiled code as a plain
``dict``: its items are right, its type and factory are lost, so ``d[missing]`` raises ``KeyError``
afterwards where eager appends to a new list. Silently wrong, also without ``fullgraph``; measured on
2.5.1-2.7.1 (2.8 is right).

Root cause: ``DefaultDictVariable`` (torch/_dynamo/variables/dicts.py) has no ``reconstruct`` of its own
before 2.8 and inherits ``ConstDictVariable.reconstruct``, which emits ``BUILD_MAP`` (``OrderedDict(...)``
for an ``OrderedDict``, nothing for a ``defaultdict``). 2.8 added ``DefaultDictVariable.reconstruct``:
``collections.defaultdict(<factory>, <the dict ConstDictVariable builds>)``.

What the handler does: for exactly a ``DefaultDictVariable``, what 2.8 emits: ``collections.defaultdict``
loaded from the module (a shadowed name changes nothing), the factory tracker (``default_factory`` of an
input, through its source; the factory the frame passed), then Dynamo's own dict of the items (the same
items, in the same order, that it rebuilt before: for an input's replayed ``update`` only the new ones,
as for a plain dict), then the call. CPython's ``defaultdict(f, mapping)`` copies the mapping's items in
order and sets the factory: the object the frame made. Everything else (any other dict tracker) defers.
"""

from __future__ import annotations

import collections

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "defaultdict-reconstruct"


@fail_safe(NAME)
def _reconstruct(wrapped, instance, args, kwargs):
    """``DefaultDictVariable.reconstruct(codegen)`` (inherited from ``ConstDictVariable`` before 2.8)."""
    if len(args) != 1 or kwargs:
        return DEFER
    from torch._dynamo.bytecode_transformation import create_call_function
    from torch._dynamo.variables.dicts import DefaultDictVariable

    factory = getattr(instance, "default_factory", None)
    if type(instance) is not DefaultDictVariable or factory is None:
        return DEFER
    codegen = args[0]
    effects_begin()
    codegen.add_push_null(lambda: codegen.extend_output([
        codegen.create_load_python_module(collections), codegen.create_load_attr("defaultdict")]))
    codegen(factory)
    wrapped(codegen)  # Dynamo's own dict of the items
    codegen.extend_output(create_call_function(2, False))
    return None


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d = collections.defaultdict(list)` made in the frame (or `dd.copy()`, `dd | {...}`) **comes back as "
         "a plain `dict`** (returned, stored, or held across a graph break): the factory is lost, a later "
         "`d[missing]` raises `KeyError` where eager creates the item",
         "2.5–2.7",
         "(`<2.8`): rebuilt as `defaultdict(factory, items)`, as 2.8 does"),
    ),
    fixes="a collections.defaultdict made in the frame leaves compiled code as a plain dict (type and factory "
    "lost; silently wrong, torch <2.8)",
    upstream="torch/_dynamo/variables/dicts.py: DefaultDictVariable (no reconstruct of its own before 2.8)",
    mirrors="torch 2.8: DefaultDictVariable.reconstruct (collections.defaultdict(factory, items))",
    torch="<2.8",
    fixed_upstream="2.8: DefaultDictVariable.reconstruct",
    targets=(
        Target("torch._dynamo.variables.dicts", "DefaultDictVariable", "reconstruct", _reconstruct,
               inherited=True, params=("codegen",)),
    ),
    requires=("torch._dynamo.bytecode_transformation:create_call_function",
              "torch._dynamo.codegen:PyCodegen.add_push_null",
              "torch._dynamo.codegen:PyCodegen.create_load_python_module"),
    summary="a defaultdict made in the frame is rebuilt as a defaultdict with its factory",
    history=(
        ("2.5-2.7", "a `defaultdict` made in the frame is rebuilt as a plain `dict` "
         "(`ConstDictVariable.reconstruct`'s `BUILD_MAP`): type and factory lost, silently"),
        ("2.8+", "right (`DefaultDictVariable.reconstruct`)"),
    ),
)
