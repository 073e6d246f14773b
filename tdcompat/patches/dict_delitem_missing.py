"""``del d[k]`` of a key the dict does not have crashes Dynamo (torch 2.5-2.12).

Root cause: ``ConstDictVariable.call_method`` (torch/_dynamo/variables/dicts.py),
branch ``__delitem__``, runs ``self.items.__delitem__(Hashable(key))`` without
asking whether the key is there: Python's own ``KeyError`` escapes from inside
Dynamo as ``InternalTorchDynamoError: KeyError: <..._HashableTracker object>``,
under ``fullgraph=False`` too, where eager raises ``KeyError`` that the user's
``try: del d[k] / except KeyError`` catches (a working program made to crash).
2.13 checks the key and raises ``KeyError`` inside the trace. Measured without
tdcompat on 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0, 2.12.1 (crash) and
2.13.0 (right). The fuzzer met it through ``del m.__dict__[k]`` on Dynamo's own copy of an
input mapping's ``__dict__`` (seed-0 program 259 on 2.8-2.10, under a trial model since withdrawn)
and the grammar's ``delitem`` op reaches it on user mappings.

The fix, as 2.13: for a constant key (``str``/``bytes``/``int``/``bool``/``None``/non-NaN
``float``, whose lookup is by value) of a plain ``dict``/``OrderedDict``/``defaultdict``
tracker that is not in it, guard that it is absent (``install_dict_contains_guard``,
2.7+; 2.5-2.6 guard a dict passed in on its whole key set) and raise ``KeyError(key)``
inside the trace (a graph break where the torch cannot raise it there). Sound: the
answer is the dict's own state as traced, and the absence is guarded. Everything
else (a present key, a key that is not a constant, sets, dict subclasses with their
own ``__delitem__``) is Dynamo's.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-delitem-missing"


def _plain_key(value) -> bool:
    """A key whose dict lookup is by value alone, as Dynamo's ``key in dict`` decides it: ``str``,
    ``bytes``, ``int``, ``bool``, ``None`` and non-NaN ``float`` of exactly those types (a NaN is
    found by identity in CPython, an unhashable key raises ``TypeError``, a subclass may define
    ``__eq__``/``__hash__``)."""
    kind = type(value)
    if kind is float:
        return value == value
    return kind in (str, bytes, int, bool, type(None))


@fail_safe(NAME)
def _delitem(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "__delitem__", [key], {})`` of a missing constant key."""
    import collections

    from torch._dynamo.variables import ConstDictVariable, SetVariable

    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, margs, mkwargs = args
    if name != "__delitem__" or len(margs) != 1 or mkwargs:
        return DEFER
    if not isinstance(instance, ConstDictVariable) or isinstance(instance, SetVariable):
        return DEFER
    if getattr(instance, "user_cls", dict) not in (dict, collections.OrderedDict, collections.defaultdict):
        return DEFER
    key = margs[0]
    if not key.is_python_constant():
        return DEFER
    value = key.as_python_constant()
    if not _plain_key(value) or key in instance:
        return DEFER
    from ..dynamo_api import raise_observed

    effects_begin()
    guard = getattr(instance, "install_dict_contains_guard", None)
    if guard is not None:
        guard(tx, [key])
    raise_observed(KeyError, tx, f"del {instance}[{value!r}]", value)


#: On ``ConstDictVariable.call_method`` (every dict method Dynamo traces): only ``__delitem__``
#: reaches the handler, through the name gate it shares with the other dict-method patches.
_call_method_gate = routed_gate(_delitem, method_name_gate, frozenset({'__delitem__'}))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`try: del d[k] / except KeyError:` of a missing key **crashes Dynamo** '
             '(`InternalTorchDynamoError: KeyError: <_HashableTracker ...>`, also under '
             '`fullgraph=False`), e.g. `del m[k]` on a user `MutableMapping` backed by a dict',
         '2.5–2.12',
         '(`<2.13`)'),
    ),
    fixes="`try: del d[k] / except KeyError` of a missing key: InternalTorchDynamoError: KeyError: "
    "<_HashableTracker> out of Dynamo (torch <2.13), e.g. `del m.__dict__[k]` of an input mapping",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method (the __delitem__ branch)",
    mirrors="torch 2.13: ConstDictVariable.call_method raises KeyError for a missing key",
    torch="<2.13",
    fixed_upstream="2.13: __delitem__ of a missing key raises KeyError in the trace",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    summary="del d[k] of a missing key raises KeyError in the trace instead of crashing Dynamo",
    history=(
        ("2.5-2.12",
         "`ConstDictVariable.call_method('__delitem__')` deletes without asking: Python's `KeyError` escapes "
         "as `InternalTorchDynamoError` (also under `fullgraph=False`), where eager raises `KeyError`"),
        ("2.13+", "fixed upstream: `KeyError` raised inside the trace"),
    ),
)
