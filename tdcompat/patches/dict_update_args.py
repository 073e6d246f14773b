"""``d.update(...)`` with no argument, too many, or a mapping-like object (torch 2.5-2.12).

Symptom: ``d.update(m)`` where ``m`` is an object with ``keys()`` and ``__getitem__`` that is
not a ``dict`` (CPython's "mapping protocol", no ``Mapping`` base needed), and ``{**m, ...}``
over one, graph-break (``Unsupported: dict(): ...`` on 2.5, ``Unsupported method call`` on
2.8, ``Observed exception`` on 2.12); so do ``d.update()`` (a no-op), ``d.update(k=v)`` on 2.5 and ``try: d.update(a,
b) / except TypeError``.

Root cause: ``ConstDictVariable.call_method`` (torch/_dynamo/variables/dicts.py), branch
``update``, builds ``dict(arg)`` with ``BuiltinVariable.call_custom_dict``, which knows dicts,
sequences of pairs and ``MutableMapping`` trackers only, and sends any other argument count to
``VariableTracker.call_method`` (unsupported). Upstream 2.13 rewrote the branch after CPython's
``PyDict_Merge`` (pytorch/pytorch#185428, "Fix Dynamo dict update semantics").

What the handler accepts, on a plain ``dict`` tracker (``user_cls`` ``dict``, mutable; not a
``set``, an ``OrderedDict`` whose ``update`` is ``MutableMapping.update``, or a subclass):

* ``d.update()``: returns ``None``, ``d`` unchanged (CPython's ``dict_update_arg`` is not called).
* ``d.update(k=v, ...)``, keywords alone (2.5: ``call_method ConstDictVariable() update [] {...}``):
  ``d[k] = v`` for each keyword in the call's order, as ``dict_update_common`` merges the keyword dict
  (``PyDict_Merge``, no user code: the keys are ``str``), then ``None``.
* ``d.update(a, b, ...)``: ``TypeError`` raised in the trace ("update expected at most 1
  argument, got N"), before anything is read or changed, as ``dict_update`` does (a graph break
  where this torch cannot raise ``TypeError`` there, 2.5-2.8).
* ``d.update(m, **kw)`` and ``DICT_UPDATE`` (``{**m}``) where ``m`` is a user object
  (``UserDefinedObjectVariable`` exactly, not a ``dict`` instance) whose class defines ``keys``
  as a plain function and does not override ``__getattribute__``: CPython (``dict_update_arg``
  sees a ``keys`` attribute, ``dict_merge`` for a non-dict) takes ``list(m.keys())`` first, then
  for each key ``m[key]`` and ``d[key] = value`` in turn, then the keywords. The handler traces
  exactly that: ``m.keys()`` and ``m[key]`` are Dynamo's own calls of the user's methods (their
  guards are Dynamo's), each store is Dynamo's ``d[key] = value``; so a ``__getitem__`` that
  raises leaves ``d`` updated up to that key, as in CPython.

Everything else is Dynamo's: a ``dict`` or pairs argument, objects without a class ``keys``
(pairs, in CPython), trackers of other kinds, ``dict(m)``. Not mirrored from the upstream PR:
its ``ValueError`` for a pair of the wrong length (``DICT_UPDATE`` raises ``TypeError`` there
and Dynamo's ``call_method`` cannot tell the two apart).
"""

from __future__ import annotations

import inspect
import types

from ..dynamo_api import MISSING, is_mutable, peek, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-update-args"


def _mapping_like(arg) -> bool:
    """A user object CPython merges through ``keys()`` and ``__getitem__`` (see the module)."""
    from torch._dynamo.variables import UserDefinedObjectVariable

    if type(arg) is not UserDefinedObjectVariable or isinstance(arg.value, dict):
        return False
    cls = type(arg.value)
    keys = inspect.getattr_static(cls, "keys", None)
    return (type(keys) is types.FunctionType
            and inspect.getattr_static(cls, "__getattribute__") is object.__getattribute__)


def _plainly_not_mapping(arg) -> bool:
    """Told without realizing ``arg`` (no guard) and without a call but the peek: a tracker that is
    not a user object's, or a lazy value that is a ``dict`` or whose class has no ``keys``. Dynamo's
    own ``update`` takes those (the handler tests the tracker's class exactly after this)."""
    tracker, value = peek(arg)
    if tracker is not None:
        return type(tracker).__name__ != "UserDefinedObjectVariable"
    return isinstance(value, dict) or static_lookup(type(value), "keys") is MISSING


@fail_safe(NAME)
def _update(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "update", args, kwargs)`` on a plain dict."""
    from torch._dynamo.variables import ConstantVariable, ConstDictVariable

    from ..dynamo_api import raise_observed, realize

    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, margs, mkwargs = args
    if (name != "update" or type(instance) is not ConstDictVariable
            or getattr(instance, "user_cls", dict) is not dict or not is_mutable(instance)):
        return DEFER
    margs, mkwargs = list(margs), dict(mkwargs or {})
    none = ConstantVariable.create(None)
    if not margs and not mkwargs:
        return none
    if len(margs) > 1:
        effects_begin()
        raise_observed(TypeError, tx, f"{instance}.update(<{len(margs)} args>)",
                       f"update expected at most 1 argument, got {len(margs)}")
    if margs:
        if _plainly_not_mapping(margs[0]):
            return DEFER
        other = realize(margs[0])
        if not _mapping_like(other):
            return DEFER
        effects_begin()
        keys = other.call_method(tx, "keys", [], {}).force_unpack_var_sequence(tx)
        for key in keys:
            value = other.call_method(tx, "__getitem__", [key], {})
            wrapped(tx, "__setitem__", [key, value], {})
    effects_begin()
    for word, value in mkwargs.items():  # CPython merges the keywords after the mapping, in order
        wrapped(tx, "__setitem__", [ConstantVariable.create(word), value], {})
    return none


def _update_gate(original, handle):
    """This patch's layer on ``ConstDictVariable.call_method``: every other method name, and an
    ``update`` the handler would defer (one argument :func:`_plainly_not_mapping` tells), goes
    straight to Dynamo."""

    def call_method(self, tx, name, args, kwargs):
        if name != "update" or (len(args) == 1 and _plainly_not_mapping(args[0])):
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


#: On ``ConstDictVariable.call_method`` (every dict method Dynamo traces): only ``update`` passes the
#: name gate it shares with the other dict-method patches, then this patch's own finer gate.
_call_method_gate = routed_gate(_update, method_name_gate, frozenset({"update"}), own=_update_gate)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`d.update(m)` / `{**m, ...}` where `m` has `keys()` and `__getitem__` but no `Mapping` '
             'base: `Unsupported: dict(): (UserDefinedObjectVariable(...),)` / `Unsupported method '
             'call`, and on 2.9-2.12 `{**m}` inside `try/except TypeError` **silently takes the '
             "`except`** (Dynamo's `DICT_UPDATE` raises an observed `TypeError`); `d.update()`; `try: "
             'd.update(a, b) / except TypeError`',
         '2.5–2.12 (`TypeError` in the trace: 2.8–2.12)',
         '(`<2.13`)'),
    ),
    fixes="`d.update(m)` / `{**m}` over an object with keys() and __getitem__: Unsupported: dict(): "
    "(UserDefinedObjectVariable(...),) / Unsupported method call / Observed exception; `d.update()`; "
    "`d.update(a, b)` in try/except TypeError (torch <2.13)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method (the update branch)",
    mirrors="pytorch/pytorch#185428 (Fix Dynamo dict update semantics, 2.13)",
    torch="<2.13",
    fixed_upstream="2.13: pytorch/pytorch#185428",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _call_method_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=("torch._dynamo.variables:UserDefinedObjectVariable",),
    summary="dict.update() with no argument, too many, or a keys()/__getitem__ object, as CPython's PyDict_Merge",
    history=(
        ("2.5-2.6", "`update` of a non-dict goes through `BuiltinVariable.call_custom_dict`: `Unsupported: dict(): "
         "(UserDefinedObjectVariable(...),)`; any other argument count is unsupported"),
        ("2.7-2.8", "the same branch: `Unsupported method call`"),
        ("2.9-2.12", "`call_custom_dict` raises an observed `TypeError`: a graph break, and inside `try/except "
         "TypeError` the `except` runs for `{**m}` (silently wrong)"),
        ("2.13+", "fixed upstream: pytorch/pytorch#185428 follows `PyDict_Merge`"),
    ),
)
