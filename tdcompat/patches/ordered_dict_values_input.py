"""``od.values()`` of an ``OrderedDict`` reaching a compiled frame as an input crashes the compile (every release).

Symptom: ``torch.compile(f)(x, od.values())`` where ``f`` iterates the view (``for v in vals``, ``list(vals)``,
``sum(vals)``) or, on 2.13+, returns it: ``InternalTorchDynamoError: TypeError: 'odict_values' object is not
subscriptable``, also without ``fullgraph``: the user's program stops. The same view reaches a frame without the
user passing it where an earlier graph break leaves it on the stack: ``for i, v in enumerate(od.values())`` in a
frame that broke before the loop (upstream's ``test_ordered_dict_subclass_reordered_keys`` on 2.5-2.6, an
``OrderedDict`` subclass that overrides ``keys``). Measured with tests/test_ordered_dict_values_input.py on
2.5.1-2.15.0; ``len(vals)`` alone compiles (no item is read).

Root cause: torch/_dynamo/variables/builder.py: ``VariableBuilder._wrap`` sends an ``odict_values`` input to
``VariableBuilder.wrap_listlike`` with lists and tuples, which gives each item the source
``GetItemSource(<the view>, i)``: a guard on an item (``CONSTANT_MATCH``/``TENSOR_MATCH`` of ``L['vals'][0]``)
indexes the view, which ``odict_values`` does not support, and building that guard raises ``TypeError`` after
tracing (``CheckFunctionManager``), which Dynamo reports as an internal error.

What the handler accepts: ``VariableBuilder._wrap(value)`` where ``type(value)`` is exactly ``odict_values`` (C
``OrderedDict.values()``, also of a subclass; a plain dict's ``dict_values`` is not wrapped as a list). Dynamo's own
answer is kept (a list tracker whose length is guarded with ``SEQUENCE_LENGTH``, which ``len()`` evaluates on the
view), and each item, a lazy tracker not yet read (2.15: a lazy constant), is replaced by a lazy tracker of the
same value and source that graph-breaks when Dynamo first reads it, before any guard on it exists. Sound: no value
is computed differently; the only outcome changed is a crash that followed every item read (each read installs a
guard through the unindexable source), now Dynamo's clean graph break at that read (without ``fullgraph`` the
rest of the frame runs in Python). An item Dynamo already read graph-breaks at once. ``_wrap`` is patched, not
``wrap_listlike``: ``VariableBuilder._type_dispatch`` caches the function it found for a type, so a patch there
could neither be reverted nor reach a builder made before it. Every other value passes the gate unchanged.
"""

from __future__ import annotations

import collections
import functools
from typing import Any

from ..dynamo_api import bind_args, graph_break, source_name, value_type_gate
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, routed_gate

NAME = "ordered-dict-values-input"

_ODICT_VALUES: type = type(collections.OrderedDict().values())


@functools.lru_cache(maxsize=None)
def _unreadable_cache_class() -> Any:
    """A ``LazyCache`` (torch/_dynamo/variables/lazy.py) whose realization graph-breaks."""
    from torch._dynamo.variables.lazy import LazyCache

    class UnguardableItem(LazyCache):
        def realize(self) -> None:
            _item_break(getattr(self, "source", None))

    return UnguardableItem


def _item_break(source: Any) -> None:
    graph_break("item of an OrderedDict values view passed in", source_name(source),
                "Dynamo would guard the item through the view's index (view[i]), which odict_values does not "
                "support and which crashes the compile; the read runs in Python (tdcompat)")


@fail_safe(NAME)
def _wrap(wrapped, instance, args, kwargs):
    """``VariableBuilder._wrap(value)`` of an ``odict_values``: Dynamo's list tracker, its items replaced by lazy
    trackers that graph-break when read."""
    bound = bind_args(args, kwargs, ("value",))
    if bound is None or type(bound[0]) is not _ODICT_VALUES:
        return DEFER
    from torch._dynamo.variables.lazy import LazyCache, LazyVariableTracker

    result = wrapped(*args, **kwargs)
    items = getattr(result, "items", None)
    if not isinstance(items, list):
        return result
    fresh = []
    for item in items:
        cache = getattr(item, "_cache", None)  # 2.15: constants are LazyConstantVariable, with a LazyCache too
        if not isinstance(item, LazyVariableTracker) or type(cache) is not LazyCache or cache.vt is not None:
            _item_break(getattr(item, "source", None) or getattr(instance, "source", None))
        fresh.append(LazyVariableTracker(_unreadable_cache_class()(cache.value, cache.source), source=cache.source))
    items[:] = fresh
    return result


#: Every value Dynamo wraps: only an ``odict_values`` goes on (a routed gate: it shares its frame with
#: dict-nan-key-input's).
_wrap_gate = routed_gate(_wrap, value_type_gate, {_ODICT_VALUES.__name__})


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`torch.compile(f)(x, od.values())` where `f` reads an item of the view (a `for` loop, `list()`; "
         "2.13+: returning it): **the compile crashes** (`InternalTorchDynamoError: TypeError: 'odict_values' "
         "object is not subscriptable`), also without `fullgraph` (tdcompat: a graph break)",
         "2.5–2.15", "(`>=2.5`)"),
    ),
    fixes="an OrderedDict's values view passed to a compiled function crashes the compile on the guard of an "
    "item (TypeError: 'odict_values' object is not subscriptable), also without fullgraph",
    upstream="torch/_dynamo/variables/builder.py: VariableBuilder.wrap_listlike (GetItemSource items of an "
    "odict_values)",
    mirrors="open upstream (tdcompat graph-breaks; a fix would wrap the view as the dict's values, see "
    "docs/upstream/ordered-dict-values-input/PR.md)",
    torch=">=2.5",
    targets=(
        # _wrap, not wrap_listlike: VariableBuilder._type_dispatch caches the function it found for a type
        Target("torch._dynamo.variables.builder", "VariableBuilder", "_wrap", _wrap_gate, params=("value",)),
    ),
    summary="an OrderedDict values view passed in graph-breaks at its first item read instead of crashing the "
    "compile",
    proven_by="tests/test_ordered_dict_values_input.py::test_without_the_patch_the_compile_crashes",
    history=(
        ("2.5-2.15", "`InternalTorchDynamoError: TypeError: 'odict_values' object is not subscriptable` when an "
         "item is read (2.13+: also when the view is returned), also without fullgraph"),
    ),
)
