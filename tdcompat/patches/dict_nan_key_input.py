"""A dict with a float NaN key reaching a compiled frame crashes the compile (torch <2.15).

Symptom: ``torch.compile(f)(x, d)`` where ``d = {float('nan'): 1, 'a': 2}`` and ``f`` reads the dict
(``for k, v in d.items()``, ``len(d)``, ``sum(d.values())``, a write ``d['z'] = 3``; on 2.5-2.6 even ``d['a']``):
``InternalTorchDynamoError: NameError: name 'nan' is not defined``, also without ``fullgraph``: the user's
program stops. The same for an ``OrderedDict``/``defaultdict``, a key ``(nan, 1)``, a dict held by an
attribute, and an object's ``__dict__`` holding a NaN key (``o.__dict__[nan] = v``) once Dynamo wraps it, and for
a dict left on the stack by a graph break (the fuzzer met it so: seed 1356594609 on 2.6.0). Measured with
tests/test_dict_nan_key_input.py on 2.5.1, 2.6.0, 2.8.0, 2.10.0, 2.12.1, 2.13.0, 2.14.1; right on 2.15.0.

Root cause: torch/_dynamo/variables/builder.py ``VariableBuilder._wrap``, dict branch: where every key is a
literal (``ConstantVariable.is_literal``), each key is its own guard index (``GetItemSource(<dict>, key)``)
and the guards' code names it by ``repr(key)``; ``repr(float('nan'))`` is ``nan``, which the guard's
namespace does not define (it defines ``inf``), so building the guards raises ``NameError`` after tracing.
A dict with any non-literal key indexes its keys by position (``ConstDictKeySource``) and compiles.

What the handler accepts: ``_wrap(value)`` of a ``dict``, ``OrderedDict`` or ``defaultdict`` (exact types:
Dynamo's dict branch) whose keys are all literals and one of which is, or is a tuple or frozenset holding, a float
NaN. It graph-breaks there (Dynamo's clean ``Unsupported``), before any tracker or guard of the dict exists:
without ``fullgraph`` that part of the frame runs in Python, whose answer is CPython's. Nothing is computed
differently: the outcome changed is the crash that followed, at guard building, from a guard on an item or
on the dict's keys (measured: items, values, ``len``, a write, a loop over the keys on 2.10-2.14). On 2.12-2.14
an object's instance dict is not wrapped as a dict: ``SideEffectsProxyDict.get_value___dict__`` builds its items with
``DictGetItemSource(<o>.__dict__, key)``, the same name for every key; the handler lets Dynamo build them and
graph-breaks where a key holds a NaN and the object has a source (an object built in the frame has no guards).
Measured regressions (compiled before, a graph break now, never a wrong value): reading only other keys of such a
dict (``d['a']``, 2.7-2.14), only its keys (``list(d.keys())``), items by key in a loop over ``list(d.keys())``
(2.5-2.9). Every other value passes: the route is the type's name, the patch's own test
one C-level set test of the key types (a float, tuple or frozenset key), before any Python call.
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, graph_break, source_name, value_type_gate
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate, replay, routed_gate

NAME = "dict-nan-key-input"

_DICT_TYPES = (dict, collections.OrderedDict, collections.defaultdict)
#: key types that can hold a NaN and still be literals to Dynamo
_SUSPECT = frozenset({float, tuple, frozenset})


def _holds_nan(key) -> bool:
    kind = type(key)
    if kind is float:
        return key != key
    if kind is tuple or kind is frozenset:
        return any(_holds_nan(k) for k in key)
    return False


@fail_safe(NAME)
def _wrap(wrapped, instance, args, kwargs):
    """``VariableBuilder._wrap(value)`` of a dict whose literal keys hold a NaN: a graph break."""
    bound = bind_args(args, kwargs, ("value",))
    if bound is None or type(bound[0]) not in _DICT_TYPES:
        return DEFER
    keys = list(bound[0])
    from torch._dynamo.variables import ConstantVariable

    if not any(_holds_nan(k) for k in keys) or not all(ConstantVariable.is_literal(k) for k in keys):
        return DEFER
    source = getattr(instance, "source", None)
    graph_break("dict with a float NaN key", source_name(source),
                "this Dynamo names the guards of the dict's items by repr(key), 'nan', which the guards cannot "
                "evaluate: the compile would crash (InternalTorchDynamoError: NameError); tdcompat graph-breaks")


@fail_safe(NAME)
def _instance_items(wrapped, instance, args, kwargs):
    """``SideEffectsProxyDict.get_value___dict__(tx, vt)`` (2.12-2.14: the items of ``vars(o)``/``o.__dict__`` of
    an object passed in, each guarded through ``DictGetItemSource(<o>.__dict__, key)``, named by the key's repr):
    Dynamo's items, unless a key holds a NaN and the object has a source; then a graph break."""
    bound = bind_args(args, kwargs, ("tx", "vt"))
    if bound is None:
        return DEFER
    items = wrapped(*args, **kwargs)
    source = getattr(bound[1], "source", None)
    if source is None or _SUSPECT.isdisjoint(map(type, items)) or not any(_holds_nan(k) for k in list(items)):
        return items
    graph_break("instance dict with a float NaN key", source_name(source),
                "this Dynamo names the guards of its items by repr(key), 'nan', which the guards cannot evaluate: "
                "the compile would crash (InternalTorchDynamoError: NameError); tdcompat graph-breaks")


@gate(_instance_items)
def _instance_items_gate(original, handle):
    """What is installed on ``get_value___dict__``: Dynamo builds the items here, once; only a dict with a float,
    tuple or frozenset key (one C-level set test) reaches the handler, its result replayed as ``wrapped``."""

    def get_value___dict__(tx, vt):
        items = original(tx, vt)
        try:
            if _SUSPECT.isdisjoint(map(type, items)):
                return items
        except Exception:  # noqa: BLE001 - the handler decides, under the fail-safe
            pass
        return _instance_items(replay(items), None, (tx, vt), {})

    return get_value___dict__


def _proxies_instance_dicts() -> bool:
    """2.12 on: ``vars(o)`` is a ``DunderDictVariable`` whose items ``SideEffectsProxyDict`` builds."""
    from torch._dynamo.variables import dicts

    return hasattr(getattr(dicts, "SideEffectsProxyDict", None), "get_value___dict__")


def _own_gate(original, handle):
    """Only a dict with a float, tuple or frozenset key goes on (one set test, in C)."""

    def _wrap(self, value):
        try:
            mine = type(value) in _DICT_TYPES and not _SUSPECT.isdisjoint(map(type, value))
        except Exception:  # noqa: BLE001 - an odd value: the handler decides, under the fail-safe
            mine = True
        return handle(self, value) if mine else original(self, value)

    return _wrap


_wrap_gate = routed_gate(_wrap, value_type_gate, {t.__name__ for t in _DICT_TYPES}, own=_own_gate)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("a dict with a float NaN key passed in and read (`for k, v in d.items()`, `len(d)`, a write): **the "
         "compile crashes** (`InternalTorchDynamoError: NameError: name 'nan' is not defined`), also without "
         "`fullgraph` (tdcompat: a graph break)", "2.5–2.14", "(`<2.15`)"),
    ),
    fixes="a dict with a float NaN key reaching a compiled frame crashes the compile at guard building "
    "(NameError: name 'nan' is not defined), also without fullgraph",
    upstream="torch/_dynamo/variables/builder.py: VariableBuilder._wrap (dict branch: GetItemSource(<dict>, key) "
    "named by repr(key)); torch/_dynamo/variables/dicts.py: SideEffectsProxyDict.get_value___dict__ (2.12-2.14)",
    mirrors="2.15: the same dict compiles (its guards no longer evaluate the key's repr)",
    torch="<2.15",
    fixed_upstream="2.15: a NaN key's guard no longer evaluates its repr",
    targets=(
        Target("torch._dynamo.variables.builder", "VariableBuilder", "_wrap", _wrap_gate, params=("value",)),
        Target("torch._dynamo.variables.dicts", "SideEffectsProxyDict", "get_value___dict__", _instance_items_gate,
               params=("tx", "vt"), when=_proxies_instance_dicts),
    ),
    summary="a dict with a float NaN key passed in graph-breaks instead of crashing the compile",
    proven_by="tests/test_dict_nan_key_input.py::test_without_the_patch_the_compile_crashes",
    history=(
        ("2.5-2.6", "`InternalTorchDynamoError: NameError: name 'nan' is not defined` when an item, the length or a "
         "constant key is read or the dict written (its keys alone compile)"),
        ("2.7-2.14", "the same; reads of other constant keys alone compile too"),
        ("2.15+", "right"),
    ),
)
