"""``u &= s`` (``|=``, ``-=``, ``^=``) on a set subclass rebinds ``u`` to another object (torch 2.9-2.14).

Symptom: ``k = u; u &= {"a"}`` for ``u`` an instance of a ``set`` subclass (passed in or built in the frame):
the items are updated, but afterwards ``u is k`` is False and ``type(u)`` is ``set``, so every later write
through ``u`` (``u.add(v)``) misses the caller's object and ``k``; ``u.__iand__(s) is u`` is False. Silently
wrong under ``fullgraph=True``, measured on 2.9.1-2.14.1 (with and without tdcompat: 4 operators x passed in /
built in the frame, and the explicit dunder); 2.15 right; 2.5-2.8 a graph break. The set analogue of
``dict-subclass-ior``.

Root cause: torch/_dynamo/variables/user_defined.py: ``UserDefinedSetVariable.call_method`` (2.12: inherited
from ``UserDefinedObjectVariable``) sends the set methods a subclass inherits to the tracker of its storage
(``_set_vt``; 2.12: ``_base_vt``), and ``SetVariable.call_method("__iand__")`` & co. (variables/dicts.py;
2.12: sets.py) return ``self``: the storage's tracker, not the instance, is what the in-place instruction
stores back into ``u``. 2.13 reaches it through ``nb_inplace_and_impl`` -> ``call_method``; 2.14 through the
number slot (``SLOT1`` -> the storage's ``__iand__``): the same answer.

What the handlers accept: ``__ior__``/``__iand__``/``__isub__``/``__ixor__`` with one positional operand that is
a set (an exact ``SetVariable`` or ``FrozensetVariable``, or a set subclass's tracker), through ``call_method``
or (2.13-2.14) the matching number slot, on a ``UserDefinedSetVariable`` with a storage tracker, where
Dynamo's answer (its own dispatch, which reaches the storage only for a class that inherits ``set``'s
dunder) is the storage's tracker itself. It returns the instance's tracker instead. Sound: with a set
operand CPython's ``set_ior``/``set_iand``/``set_isub``/``set_ixor`` update ``self`` and return ``self``; the
update itself is Dynamo's, recorded on the storage as without the patch. Any other operand (a dict view, a
list: ``NotImplemented`` in CPython, which Dynamo does not model), a class with its own dunder, another
answer or an error: Dynamo's.
"""

from __future__ import annotations

from ..dynamo_api import bind_args, user_set_storage
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, method_name_gate, routed_gate

NAME = "set-subclass-inplace"

_INPLACE = frozenset({"__ior__", "__iand__", "__isub__", "__ixor__"})


@fail_safe(NAME)
def _inplace(wrapped, instance, args, kwargs):
    """``UserDefinedSetVariable.call_method(tx, "__iand__" | ..., [set], {})``."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or bound[1] not in _INPLACE or len(bound[2]) != 1 or bound[3]:
        return DEFER
    return _the_instance_for_its_storage(wrapped, instance, bound[2][0], args, kwargs)


@fail_safe(NAME)
def _nb_inplace(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.nb_inplace_{or,and,subtract,xor}_impl(tx, other)`` on a set subclass's
    tracker (2.13-2.14)."""
    bound = bind_args(args, kwargs, ("tx", "other"))
    if bound is None:
        return DEFER
    return _the_instance_for_its_storage(wrapped, instance, bound[1], args, kwargs)


def _is_set(vt) -> bool:
    from torch._dynamo.variables import FrozensetVariable, SetVariable
    from torch._dynamo.variables.user_defined import UserDefinedSetVariable

    return type(vt) in (SetVariable, FrozensetVariable) or isinstance(vt, UserDefinedSetVariable)


def _the_instance_for_its_storage(wrapped, instance, operand, args, kwargs):
    """Dynamo's in-place operator, with the instance's tracker where it answered with its storage's."""
    storage = user_set_storage(instance)
    if storage is None or not _is_set(operand):
        return DEFER
    result = wrapped(*args, **kwargs)
    return instance if result is storage else result


def _slot(name: str) -> Target:
    return Target("torch._dynamo.variables.user_defined", "UserDefinedSetVariable", name, _nb_inplace,
                  inherited=True, params=("tx", "other"), optional=True)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`k = u; u &= {...}` (`\\|=`, `-=`, `^=`) on a `set` subclass: afterwards **`u is k` is False** and "
         "`type(u)` is `set`, so later writes through `u` miss the caller's object", "2.9–2.14", "(`>=2.9,<2.15`)"),
    ),
    fixes="`u &= s` on a set subclass rebinds `u` to its storage: `u is k` False, type `set`, later writes lost "
    "(torch 2.9-2.14)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedSetVariable.call_method (in-place dunders to "
    "the storage); torch/_dynamo/variables/sets.py: SetVariable.call_method ('__iand__' & co. return self)",
    mirrors="CPython's set_ior/set_iand/set_isub/set_ixor (return self); 2.15 answers with the instance",
    torch=">=2.9,<2.15",
    fixed_upstream="2.15: `u &= s` of a set subclass answers with the instance (measured)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedSetVariable", "call_method",
               routed_gate(_inplace, method_name_gate, _INPLACE), inherited=True,
               params=("tx", "name", "args", "kwargs")),
        # 2.13 routes the slots to call_method; 2.14 sends them to the storage's dunder (SLOT1)
        _slot("nb_inplace_or_impl"), _slot("nb_inplace_and_impl"), _slot("nb_inplace_subtract_impl"),
        _slot("nb_inplace_xor_impl"),
    ),
    summary="`u &= s` on a set subclass keeps `u` the same object (the storage's tracker was stored back)",
    history=(
        ("2.5-2.8", "a graph break"),
        ("2.9-2.13", "the storage's tracker stored back into `u`: another object, type `set`"),
        ("2.14", "the same answer through the number slots (`SLOT1`)"),
        ("2.15", "right"),
    ),
)
