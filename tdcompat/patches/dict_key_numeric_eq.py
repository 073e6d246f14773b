"""Dict and set keys that are equal numbers of different types are distinct (torch 2.5-2.9).

Root cause: ``ConstDictVariable._HashableTracker._eq_impl`` (torch/_dynamo/variables/dicts.py),
the equality of every key of a traced ``dict``/``set``/``frozenset``, starts with
``if type(a) != type(b): return False``. CPython compares dict and set keys with ``==``
once their hashes match, and ``1 == 1.0 == True`` (with ``hash(1) == hash(1.0) == hash(True)``),
so in eager ``{1: a, 1.0: b, True: c}`` has one key, ``{1, 2}`` contains ``1.0`` and
``d[1.0]`` finds ``d[1]``. Traced, the dict has three keys, ``1.0 in {1, 2}`` is
``False`` and ``d[1.0]`` raises an observed ``KeyError``: silently wrong results under
``fullgraph=True``, found by the differential fuzzer (``len({1.0, 1, 's'})`` is 3).
2.10 replaced ``_eq_impl`` by ``VariableTracker.is_python_equal`` per tracker
(pytorch/pytorch#169204), which compares numbers across types.

What the handler accepts: a call ``_eq_impl(a, b)`` (the trackers' underlying Python
values) where ``a`` and ``b`` are of *different* exact types both among ``int``,
``float``, ``bool`` and ``complex``; it answers ``a == b``. And one same-type case: ``a`` and
``b`` the very same ``float`` NaN object, which CPython's lookup finds by identity before it
compares (``{nan}`` contains ``nan``); Dynamo's ``a == b`` said no (found by the fuzzer on 2.5.1:
``_h = float('nan'); _h in {_h, 1}`` was False once ``hash-constant-fold`` let the frame trace).
The values are the objects the trackers hold, the ones eager computes with (Dynamo neither
merges nor splits float objects), so identity is eager's identity.

Why that is sound: for those exact types ``==`` is CPython's numeric comparison (no
user code: subclasses such as ``IntEnum`` members are excluded by the exact-type test)
and their hashes agree whenever they compare equal, so CPython's dict lookup (identity,
then hash, then ``==``) gives the same answer: two objects of different types are never
identical. Which key object and which value a dict keeps then follows from Dynamo's own
Python ``dict`` of trackers, which keeps the first key and the last value as CPython does.
The values are those Dynamo holds for constants it guards (or made in the frame), so the
answer holds for every input the guards admit.

Deferred (Dynamo's ``_eq_impl``): same types, tuples (whose elements then come back through
this handler), tensors, modules, functions, user objects, anything else.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate

NAME = "dict-key-numeric-eq"

#: Exact types whose cross-type ``==`` CPython defines by value, with equal hashes.
_NUMBERS = frozenset({int, float, bool, complex})


@fail_safe(NAME)
def _eq_impl(wrapped, instance, args, kwargs):
    """``ConstDictVariable._HashableTracker._eq_impl(a, b)`` (a staticmethod): numbers of two
    different exact numeric types compare by value; everything else defers."""
    if len(args) != 2 or kwargs:
        return DEFER
    a, b = args
    kind_a, kind_b = type(a), type(b)
    if kind_a is kind_b:
        # CPython's lookup tests identity first: the very same NaN object is its own key.
        return True if (kind_a is float and a is b and a != a) else DEFER
    if kind_a not in _NUMBERS or kind_b not in _NUMBERS:
        return DEFER
    return a == b


@gate(_eq_impl)
def _eq_impl_gate(original, handle):
    """What is installed on ``_eq_impl`` (every dict-key comparison): two keys of one exact type
    other than ``float`` go straight to Dynamo after one type test."""

    def _eq_impl(a, b):
        kind = type(a)
        if kind is type(b) and kind is not float:
            return original(a, b)
        return handle(a, b)

    return _eq_impl


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`{1: a, 1.0: b}` **has two keys**, `1.0 in {1, 2}` is **False**, `d[1.0]`/`d[True]` on a '
             'dict keyed by `1` raise an observed `KeyError`: equal numbers of different types (`int`, '
             '`float`, `bool`, `complex`) are distinct dict and set keys in compiled code',
         '2.5–2.9',
         '(`<2.10`)'),
    ),
    fixes="`{1: a, 1.0: b}` has two keys, `1.0 in {1, 2}` is False and `d[1.0]` misses `d[1]` in compiled "
    "code (torch <2.10): silently wrong results",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable._HashableTracker._eq_impl "
    "(`type(a) != type(b)` is unequal)",
    mirrors="pytorch/pytorch#169204 (2.10: _HashableTracker.__eq__ is VariableTracker.is_python_equal)",
    torch="<2.10",
    fixed_upstream="2.10: pytorch/pytorch#169204",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable._HashableTracker", "_eq_impl", _eq_impl_gate,
               params=("a", "b")),
    ),
    summary="dict/set keys that are equal numbers of different exact types (1, 1.0, True, 1+0j) are one key",
    history=(
        ("2.5-2.9",
         "`_HashableTracker._eq_impl` calls keys of different types unequal: `{1: a, 1.0: b}` has two keys, "
         "`1.0 in {1, 2}` is False, `d[1.0]` raises an observed KeyError"),
        ("2.10+",
         "fixed upstream: key equality is `VariableTracker.is_python_equal` (pytorch/pytorch#169204)"),
    ),
)
