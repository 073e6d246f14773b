"""``d.default_factory`` is opaque to Dynamo: ``is`` against it is wrong, ``==``/``callable`` break (torch 2.5-2.10).

Symptom: ``d.default_factory is list`` is ``False`` in compiled code for a ``defaultdict(list)`` made in the
frame (2.5-2.10) or passed in (2.7-2.10), ``d.default_factory is not list`` ``True``: silently wrong with
``fullgraph=True`` (case ``defaultdict_factory_read``; measured on 2.5.1-2.12.1, right from 2.11.0).
``d.default_factory == list``, ``callable(d.default_factory)``, ``d.default_factory()`` graph-break on
2.5-2.10. tdcompat's ``defaultdict-construction`` (2.5-2.9) builds ``defaultdict(list, {...})`` in the frame,
which reached the wrong ``is`` only with tdcompat (the construction was a graph break natively).

Root cause: ``DefaultDictVariable`` (torch/_dynamo/variables/dicts.py) has no ``var_getattr``: the read
falls through ``BuiltinVariable.call_getattr`` (builtin.py) to ``VariableTracker.var_getattr``, which only
folds literals, and ends as ``GetAttrVariable(d, "default_factory")``, a tracker that knows no value.
``handle_is`` (2.8+) answers ``is`` between trackers of different types with ``False`` without looking.
2.11 gives ``DefaultDictVariable`` a ``var_getattr`` that returns its factory tracker (and 2.13, where a
``defaultdict`` is a user object, keeps it): what this patch does.

What the handler accepts: ``var_getattr(tx, "default_factory")`` on an exact ``DefaultDictVariable`` of
the class ``collections.defaultdict`` itself (no subclass: it could define its own ``default_factory``)
with no attribute store pending on it, whose factory tracker (realized) is one whose identity Dynamo
answers right (:data:`_IDENTITY_SAFE`: a builtin, a Python function, a class, ``None``; measured with
``is`` against itself, an alias and the global, with a tensor op in the frame, on 2.5-2.10). It returns
that tracker: the factory Dynamo itself calls for a missing key. A ``functools.partial`` factory defers:
Dynamo folds ``p is p`` to ``False`` for a partial once the frame has a graph (2.5-2.6; ``ps[0] is ps[1]``
on 2.8-2.10, found writing this patch), so handing it out would turn a graph break into that wrong answer;
so does a function made in the frame (a lambda). Why that is sound: ``defaultdict.default_factory`` is
a member of the C struct, read without running user code, and Dynamo's tracker is exactly that member: for a
``defaultdict`` passed in it is built by ``VariableBuilder`` from the source ``d.default_factory``, so
its guard (``ID_MATCH`` and kin) recompiles when the input's factory changes; for one made in the frame it
is the argument the frame passed. Dynamo cannot change it in the frame (``d.default_factory = f``
graph-breaks on 2.5-2.10: the tracker is not tracked for attribute mutation; were it recorded as a store,
the handler defers). Everything else defers.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, dict_class, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "defaultdict-factory-read"

#: Factory trackers handed out: those whose ``is`` Dynamo answers right (exact types; not a partial, not a
#: function made in the frame, not a bound method).
_IDENTITY_SAFE = frozenset({"BuiltinVariable", "UserFunctionVariable", "UserDefinedClassVariable"})


def _identity_safe(vt) -> bool:
    from torch._dynamo.variables import ConstantVariable

    if type(vt) is ConstantVariable:
        return vt.value is None
    return type(vt).__name__ in _IDENTITY_SAFE and type(vt).__module__.startswith("torch._dynamo.variables")


@fail_safe(NAME)
def _var_getattr(wrapped, instance, args, kwargs):
    """``DefaultDictVariable.var_getattr(tx, "default_factory")``."""
    bound = bind_args(args, kwargs, ("tx", "name"))
    if bound is None or bound[1] != "default_factory":
        return DEFER
    from torch._dynamo.variables import VariableTracker
    from torch._dynamo.variables.dicts import DefaultDictVariable

    tx = bound[0]
    factory = getattr(instance, "default_factory", None)
    if (type(instance) is not DefaultDictVariable or dict_class(instance) is not collections.defaultdict
            or not isinstance(factory, VariableTracker)
            or tx.output.side_effects.has_pending_mutation_of_attr(instance, "default_factory")):
        return DEFER
    factory = realize(factory)
    return factory if _identity_safe(factory) else DEFER


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d.default_factory is list` for a `defaultdict(list)`: **`False`** (silently wrong); "
         "`d.default_factory == list`, `callable(d.default_factory)`: a graph break",
         "2.5–2.10",
         "(`<2.11`): the factory Dynamo holds"),
    ),
    fixes="d.default_factory read as an opaque attribute: `d.default_factory is list` False (silently wrong, "
    "2.5-2.10), `==`/`callable` graph breaks (2.5-2.10)",
    upstream="torch/_dynamo/variables/dicts.py: DefaultDictVariable (no var_getattr; "
    "VariableTracker.var_getattr, base.py, is what runs)",
    mirrors="torch 2.11's DefaultDictVariable.var_getattr('default_factory') (torch/_dynamo/variables/dicts.py), "
    "which returns the factory tracker",
    torch="<2.11",
    fixed_upstream="2.11: DefaultDictVariable.var_getattr returns the factory tracker",
    targets=(
        Target("torch._dynamo.variables.dicts", "DefaultDictVariable", "var_getattr", _var_getattr,
               params=("tx", "name"), inherited=True),
    ),
    summary="d.default_factory of a defaultdict is the factory Dynamo holds (is/==/callable/call right)",
    history=(
        ("2.5-2.6", "`d.default_factory` is a `GetAttrVariable`: `==`, `callable`, a call graph-break; `is` "
         "folds right for a defaultdict passed in, `False` for one made in the frame (silently wrong)"),
        ("2.7-2.10", "as 2.5-2.6, and `d.default_factory is list` is `False` for an input too (`handle_is`: "
         "trackers of different types are different objects)"),
        ("2.11+", "fixed upstream: `DefaultDictVariable.var_getattr` returns the factory tracker"),
    ),
)
