"""A ``functools.partial`` made in the frame is a different object each time Dynamo looks (torch 2.5-2.12).

Symptom: ``p = functools.partial(f, 1); p in {p, 1}`` is False (2.5-2.9), ``p == p`` is False
(2.5-2.12), and two equal partials ``partial(f, 1)`` made apart are one set member (2.10-2.12), in
compiled code under ``fullgraph=True``: silently wrong. A partial passed in is no member of a set
holding it (2.5-2.9). Found by the differential fuzzer's hash family (2.5.1, program
84641730932192: the frame traced once ``hash-constant-fold`` answered a later ``hash(True)``).

Root cause: ``FunctoolsPartialVariable.as_python_constant`` (torch/_dynamo/variables/functions.py)
builds a new ``functools.partial`` on every call, and a partial hashes and compares by identity:
``p == p`` folds two fresh objects, and 2.5-2.9's ``ConstDictVariable._HashableTracker``
(torch/_dynamo/variables/dicts.py) hashes and compares every key through that constant, so the same
partial is a new key at every lookup. 2.10 (pytorch/pytorch#169204) compares keys with
``FunctoolsPartialVariable.is_python_equal``, which compares the function and arguments: by value,
where CPython compares by identity. 2.13 gets all of it right.

What the handlers accept:

- ``as_python_constant`` of a ``FunctoolsPartialVariable`` (exact type) with no source (made in
  the frame): the constant is built once per tracker and kept on it, so one tracker is one
  object. Sound because within a frame a partial made there is one tracker: Dynamo passes the
  tracker itself through locals, containers and calls, and a clone (``VariableTracker.clone``)
  stands for the same object and carries the kept constant with it. Two ``functools.partial``
  calls make two trackers, two objects, as in CPython. No guard reads the constant: it only
  decides identity, which CPython decides by the same rule.
- ``is_python_equal`` (2.10-2.12) of two such partials: identity of the trackers (or of their kept
  constants). A partial made in the frame and one with a source are never the same object (False).
  Two sourced partials: Dynamo's comparison.
- ``_HashableTracker.__init__`` (2.5-2.9) of a partial with a source (an input, realized or still
  lazy): a graph break ("partial input as a dict key"). Two trackers can stand for the same input
  partial, and nothing Dynamo holds tells whether they are the same object.

Everything else defers.
"""

from __future__ import annotations

import functools

from ..dynamo_api import key_tracker_gate
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, routed_gate

NAME = "dict-key-partial-identity"

#: Where a sourceless partial tracker keeps the one constant that stands for it.
_KEPT = "_tdcompat_partial_constant"


@fail_safe(NAME)
def _as_python_constant(wrapped, instance, args, kwargs):
    """``FunctoolsPartialVariable.as_python_constant()``: one constant per sourceless tracker."""
    if args or kwargs or getattr(instance, "source", None) is not None:
        return DEFER
    from torch._dynamo.variables.functions import FunctoolsPartialVariable

    if type(instance) is not FunctoolsPartialVariable:
        return DEFER
    kept = instance.__dict__.get(_KEPT)
    if kept is None:
        kept = wrapped()
        if type(kept) is not functools.partial:
            return kept
        instance.__dict__[_KEPT] = kept
    return kept


@fail_safe(NAME)
def _hashable_init(wrapped, instance, args, kwargs):
    """``ConstDictVariable._HashableTracker.__init__(vt)``: a sourced partial is a graph break."""
    if len(args) != 1 or kwargs:
        return DEFER
    vt = args[0]
    from ..dynamo_api import graph_break, peek

    tracker, value = peek(vt)
    if tracker is None:
        if type(value) is not functools.partial:
            return DEFER
    else:
        from torch._dynamo.variables.functions import FunctoolsPartialVariable

        if type(tracker) is not FunctoolsPartialVariable or getattr(tracker, "source", None) is None:
            return DEFER
    graph_break("partial input as a dict key",
                "a functools.partial reached through a source, used as a dict key or set member",
                "tdcompat: Dynamo cannot tell whether two trackers of an input partial are the same object, "
                "and a partial is hashed and compared by identity")


@fail_safe(NAME)
def _is_python_equal(wrapped, instance, args, kwargs):
    """``FunctoolsPartialVariable.is_python_equal(other)`` (2.10-2.12: key equality): by identity."""
    if len(args) != 1 or kwargs:
        return DEFER
    other = args[0]
    from torch._dynamo.variables.functions import FunctoolsPartialVariable

    if type(instance) is not FunctoolsPartialVariable or type(other) is not FunctoolsPartialVariable:
        return DEFER
    mine, theirs = getattr(instance, "source", None), getattr(other, "source", None)
    if mine is None and theirs is None:
        return instance is other or instance.__dict__.get(_KEPT, instance) is other.__dict__.get(_KEPT, other)
    if (mine is None) != (theirs is None):
        return False  # a partial made in the frame is never one passed in
    return DEFER


def _keys_hash_through_constants() -> bool:
    """2.5-2.9 hash dict keys through ``_HashableTracker.underlying_value``."""
    from torch._dynamo.variables.dicts import ConstDictVariable

    tracker = getattr(ConstDictVariable, "_HashableTracker", None)
    return tracker is not None and hasattr(tracker, "underlying_value")


#: On ``_HashableTracker.__init__`` (every dict key Dynamo builds): a partial tracker or a lazy key
#: reaches the handler, through the gate it shares with the other key patches.
_hashable_init_gate = routed_gate(_hashable_init, key_tracker_gate, ("FunctoolsPartialVariable",))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`p = functools.partial(f, 1)`: `p in {p, 1}` and `p == p` are **False**, two equal '
             'partials made apart are **one** set member, in compiled code (CPython compares partials by '
             'identity); a partial passed in is no member of a set holding it',
         '2.5–2.12',
         '(`<2.13`)'),
    ),
    fixes="`p = functools.partial(f, 1); p in {p}` and `p == p` are False, two equal partials are one set "
    "member, in compiled code (torch <2.13): silently wrong",
    upstream="torch/_dynamo/variables/functions.py: FunctoolsPartialVariable.as_python_constant (a new partial "
    "per call); torch/_dynamo/variables/dicts.py: ConstDictVariable._HashableTracker (keys hashed through it)",
    mirrors="CPython: functools.partial hashes and compares by identity; torch 2.13's FunctoolsPartialVariable",
    torch="<2.13",
    fixed_upstream="2.13: partials compare by identity",
    targets=(
        Target("torch._dynamo.variables.functions", "FunctoolsPartialVariable", "as_python_constant",
               _as_python_constant),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable._HashableTracker", "__init__",
               _hashable_init_gate, params=("vt",), optional=True, when=_keys_hash_through_constants),
        Target("torch._dynamo.variables.functions", "FunctoolsPartialVariable", "is_python_equal",
               _is_python_equal, params=("other",), optional=True),
    ),
    summary="a functools.partial made in the frame is one object (one constant per tracker); a partial input "
            "as a dict key or set member is a graph break",
    history=(
        ("2.5-2.9",
         "`FunctoolsPartialVariable.as_python_constant` makes a new partial per call and dict keys hash through "
         "it: `p in {p}` and `p == p` are False (silently wrong)"),
        ("2.10-2.12", "keys compared by value (`is_python_equal`): two equal partials are one key; `p == p` is "
         "False"),
        ("2.13+", "right"),
    ),
)
