"""``k in d`` of a dict subclass passed in, empty when compiled: the answer is reused for a later non-empty one
(torch 2.5-2.6).

Symptom: a ``dict``/``OrderedDict`` subclass instance passed to the compiled function, empty on one call and
holding ``k`` on a later one: ``k in d`` (and ``k not in d``) answers ``False`` again, silently under
``fullgraph=True`` (found by the differential fuzzer at seed 2050506194 on 2.5.1; measured with the case
``dict_subclass_contains_guard`` on 2.5.1-2.15.0, right from 2.7).

Root cause: torch/_dynamo/variables/user_defined.py ``UserDefinedObjectVariable.call_method`` answers
``dict.__contains__`` of such an object (a ``MutableMappingVariable`` up to 2.6) by reading the real dict at
trace time, guarded with ``GuardBuilder.DICT_CONST_KEYS``; with the C++ guard manager that guard is one
accessor per key present (``guard_on_dict_keys_and_ignore_order``), so for an empty dict it checks nothing and
for a dict that later gains the key nothing fails.

What the handler accepts: ``call_method(tx, "__contains__", [key], {})`` on a tracker with a source whose
value is a ``dict`` (subclass) whose class's ``__contains__`` is ``dict``'s or ``OrderedDict``'s C method (read
with ``static_lookup``), not shadowed in the instance's ``__dict__``, and a ``str`` constant key. Dynamo's own
call runs; when it answers a constant ``bool``, the handler adds a ``DICT_CONTAINS`` guard that the key's
presence stays what it answered. Sound: ``dict.__contains__`` is a lookup in the object's table, which that
guard checks on the same object; the answer itself is Dynamo's. Everything else defers.
"""

from __future__ import annotations

import collections

from ..dict_classes import instance_attribute
from ..dynamo_api import MISSING, bind_args, guard_dict_contains, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, method_name_gate, routed_gate

NAME = "dict-subclass-contains-guard"
PARAMS = ("tx", "name", "args", "kwargs")
_CONTAINS = (vars(dict)["__contains__"], vars(collections.OrderedDict).get("__contains__", vars(dict)["__contains__"]))


@fail_safe(NAME)
def _contains(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.call_method(tx, "__contains__", [key], {})`` (2.5-2.6)."""
    bound = bind_args(args, kwargs, PARAMS)
    if bound is None:
        return DEFER
    _tx, name, call_args, call_kwargs = bound
    if name != "__contains__" or len(call_args) != 1 or call_kwargs:
        return DEFER
    value = getattr(instance, "value", MISSING)
    source = getattr(instance, "source", None)
    if source is None or not isinstance(value, dict) or instance_attribute(value, "__contains__"):
        return DEFER
    if static_lookup(type(value), "__contains__") not in _CONTAINS:
        return DEFER
    key = call_args[0]
    if not key.is_python_constant() or type(key.as_python_constant()) is not str:
        return DEFER
    result = wrapped(*args, **kwargs)
    if result.is_python_constant() and type(result.as_python_constant()) is bool:
        guard_dict_contains(source, key.as_python_constant(), result.as_python_constant())
    return result


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`'k' in d` of a dict subclass passed in, empty when compiled: **`False` again** for a later `d` "
         "holding `'k'` (no guard)", "2.5–2.6", "(`<2.7`)"),
    ),
    fixes="`k in d` of a dict subclass passed in is not guarded when d was empty: the answer is reused for a "
    "later d that holds k",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedObjectVariable.call_method (the dict.__contains__ "
    "branch guards with DICT_CONST_KEYS); torch/_dynamo/guards.py: GuardBuilder.DICT_CONST_KEYS",
    mirrors="2.7: a dict subclass is a UserDefinedDictVariable whose storage guards __contains__ (DICT_CONTAINS)",
    torch="<2.7",
    fixed_upstream="2.7: UserDefinedDictVariable (measured)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "call_method",
               routed_gate(_contains, method_name_gate, frozenset({"__contains__"})), params=PARAMS),
    ),
    summary="k in d of a dict subclass passed in is guarded on k's presence",
    history=(
        ("2.5-2.6", "answered from the real dict, guarded by DICT_CONST_KEYS: nothing checked for an empty dict"),
        ("2.7+", "right"),
    ),
)
