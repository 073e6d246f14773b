"""``if d:`` is True for an empty ``dict`` subclass (any builtin container's subclass) (torch 2.5-2.11).

Symptom: ``class D(dict): pass`` and ``if d:`` / ``if not d:`` / ``d or default`` / ``while d:`` on an
*empty* ``D`` in compiled code take the branch of a non-empty one: silently wrong, also without
``fullgraph`` (a ``while d: d.popitem()`` then raises ``KeyError`` in eager code after the break).
The same for subclasses of ``list``, ``set``, ``frozenset``, ``tuple``, ``str``, ``bytearray``,
``collections.deque`` and ``OrderedDict`` (measured on 2.5.1-2.11.0 for every one of them that Dynamo
traces as a user object there; 2.12 is right). A ``dict`` subclass emptied in the frame
(``d.clear(); if d:``) is wrong too on 2.7-2.11.

Root cause: ``generic_jump`` (torch/_dynamo/symbolic_convert.py, the handler of every conditional
jump) decides the truth of a ``UserDefinedObjectVariable`` from ``var_getattr("__bool__")`` /
``var_getattr("__len__")``: only a Python method (``UserMethodVariable``) is called; a builtin base's
C slot comes back as another tracker and the object is then taken as true ("``__bool__`` or
``__len__`` is non-function"). 2.12 calls that slot too.

What the handler accepts: the value on top of the stack at a conditional jump is a
``UserDefinedObjectVariable`` (any subclass of it) whose class (statically, over its real MRO)
defines no ``__bool__`` and whose ``__len__`` is the C slot of one of the builtin containers above.
CPython's truth test (``PyObject_IsTrue``) is then exactly ``len(obj) != 0``: no ``nb_bool`` slot,
the container's own length slot, no user code. The length: for a tracker that keeps the items
(``UserDefinedDictVariable``/``ListVariable``/``TupleVariable`` 2.7+, ``SetVariable`` 2.9+) Dynamo's own
``len(obj)``, which sees what the frame did to them; for any other tracker of an object passed in (no
other tracker of the same object tracked for mutation), the real object's length under a
``SEQUENCE_LENGTH`` guard (Dynamo keeps no items for it, so nothing in the trace can have changed them: a
change would go through a C method it cannot trace); otherwise, and for an object made in the frame,
Dynamo's ``len()`` (a graph break where it cannot trace it, never a guess). The jump is
then taken as ``generic_jump`` takes it for a constant. ``bool(obj)`` (2.8+, where
``BuiltinVariable.call_bool`` exists) and ``not obj`` (``call_not_``), which Dynamo refused ("Failed to
trace builtin operator"), answer the same truth. A list subclass with its own ``__bool__`` that 2.5-2.6
trace as a plain list (``RestrictedListSubclassVariable``: it "only adds methods") took the list's truth,
ignoring ``__bool__`` (silently wrong, natively): a graph break there. Deferred: any class with
``__bool__`` (a Python one is called by Dynamo itself), a Python ``__len__`` (the same), no ``__len__``
(always true, Dynamo's answer), other trackers.
"""

from __future__ import annotations

import collections

from ..dynamo_api import CONDITIONAL_JUMPS, MISSING, graph_break, realize, stack_top_gate, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, routed_gate

NAME = "builtin-subclass-truth"

_SLOT = type(dict.__dict__["__len__"])  # wrapper_descriptor: a C type's slot
#: Containers whose C ``__len__`` is their truth (CPython: no ``nb_bool`` slot of their own).
_CONTAINERS = frozenset({dict, list, set, frozenset, tuple, str, bytes, bytearray, collections.deque})

def _container_len(cls):
    """The builtin container whose C ``__len__`` decides ``cls``'s truth, or None."""
    if static_lookup(cls, "__bool__") is not MISSING:
        return None
    found = static_lookup(cls, "__len__")
    if type(found) is not _SLOT or found.__objclass__ not in _CONTAINERS:
        return None
    return found.__objclass__


def _item_models() -> tuple:
    """The trackers that keep a container subclass's items (2.7+: dict, list, tuple; 2.9+: set): a change
    the frame makes shows in Dynamo's own ``len()`` of them."""
    from torch._dynamo.variables import user_defined

    names = ("UserDefinedDictVariable", "UserDefinedListVariable", "UserDefinedSetVariable",
             "UserDefinedTupleVariable")
    return tuple(getattr(user_defined, name) for name in names if hasattr(user_defined, name))


def _restricted_list_type():
    """``RestrictedListSubclassVariable`` (2.5-2.6: a list subclass that only adds methods, ``__bool__``
    among them, traced as a plain list), or None."""
    from torch._dynamo.variables import lists

    return getattr(lists, "RestrictedListSubclassVariable", None)


def _truth(tx, value):
    """``bool(value)`` as CPython computes it, for the objects this patch accepts; None: not one."""
    from torch._dynamo.variables import BuiltinVariable
    from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

    value = realize(value)
    restricted = _restricted_list_type()
    if restricted is not None and type(value) is restricted:
        if static_lookup(value.user_cls, "__bool__") is MISSING:
            return None  # a list's own truth: Dynamo's len(), right
        effects_begin()
        graph_break("truth of a list subclass with its own __bool__", f"bool({value.user_cls.__qualname__})",
                    "this torch takes it as a list and would ignore its __bool__")
    if not isinstance(value, UserDefinedObjectVariable):
        return None
    cls = value.python_type()
    if not isinstance(cls, type) or _container_len(cls) is None:
        return None
    effects_begin()
    table = getattr(tx.output.side_effects, "id_to_variable", None)
    other = table.get(id(value.value)) if isinstance(table, dict) else None
    if value.source is not None and not isinstance(value, _item_models()) and other in (None, value):
        # Dynamo keeps no items for this tracker, so nothing in the trace can have changed them (a change
        # would go through a C method it cannot trace), and no other tracker of the same object is tracked
        # for mutation: the length is the real object's, guarded.
        from torch._dynamo.guards import GuardBuilder, install_guard

        install_guard(value.source.make_guard(GuardBuilder.SEQUENCE_LENGTH))
        return len(value.value) != 0  # the container's C slot: runs no user code
    length = BuiltinVariable(len).call_function(tx, [value], {})
    if length.is_python_constant() and type(length.as_python_constant()) is int:
        return length.as_python_constant() != 0
    graph_break("truth of a builtin container subclass", f"bool({cls.__qualname__})",
                f"len() of the object is not a constant here: {length}")


def _handler(truth_fn, push):
    @fail_safe(NAME)
    def jump(wrapped, instance, args, kwargs):
        """A conditional jump on a builtin container subclass: taken on ``len(obj) != 0``."""
        if kwargs or len(args) != 1 or not instance.stack:
            return DEFER
        truth = _truth(instance, instance.stack[-1])
        if truth is None:
            return DEFER
        value = instance.pop()
        if truth_fn(truth):
            if push:
                instance.push(value)
            instance.jump(args[0])
        return None

    return jump


def _gate_for(handler):
    """What is installed on a conditional jump: a value of any tracker type outside
    ``UserDefinedObjectVariable``'s family (and 2.5-2.6's ``RestrictedListSubclassVariable``) goes
    straight to Dynamo."""
    return routed_gate(handler, stack_top_gate, {"UserDefinedObjectVariable", "RestrictedListSubclassVariable"})


_HANDLERS = {rule: _handler(*rule) for rule in set(CONDITIONAL_JUMPS.values())}


def _builtin(negate):
    @fail_safe(NAME)
    def call(wrapped, instance, args, kwargs):
        """``bool(obj)`` / ``not obj`` (``BuiltinVariable.call_bool`` / ``call_not_``): the same truth as a jump."""
        if kwargs or len(args) != 2:
            return DEFER
        truth = _truth(args[0], args[1])
        if truth is None:
            return DEFER
        from torch._dynamo.variables import ConstantVariable

        return ConstantVariable.create(truth != negate)

    return call


_BOOL, _NOT = _builtin(False), _builtin(True)

PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`if d:`, `if not d:`, `d or x`, `while d:` on an **empty** `dict` subclass (also '
             '`OrderedDict`, `list`, `tuple`, `str`, `set`, `frozenset`, `deque`, `bytearray` '
             'subclasses) **take the non-empty branch**: silently wrong, also without `fullgraph` (a '
             '`dict`/`list` subclass emptied in the frame too, 2.7–2.11)',
         '2.5–2.11',
         "(`<2.12`): taken on `len(obj) != 0` (Dynamo's `len()` where its tracker keeps the items, "
             'else the guarded length of the object passed in; a graph break for one made in the frame '
             'whose `len()` Dynamo cannot trace)'),
    ),
    fixes="`if d:` / `if not d:` / `d or x` / `while d:` on an empty dict (list, set, tuple, str, deque, "
    "OrderedDict) subclass take the non-empty branch: silently wrong (torch 2.5-2.11)",
    upstream="torch/_dynamo/symbolic_convert.py: generic_jump (the UserDefinedObjectVariable branch: a "
    "__len__/__bool__ that is not a Python method counts as true)",
    mirrors="torch 2.12: generic_jump calls a builtin base's __len__ (GetAttrVariable) as it calls a Python one; "
    "pytorch/pytorch#141217 (dict subclasses)",
    torch="<2.12",
    fixed_upstream="2.12: generic_jump calls the __len__ slot of a builtin base (GetAttrVariable)",
    targets=tuple(
        Target("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", name, _gate_for(_HANDLERS[rule]),
               params=("inst",), optional=True)
        for name, rule in CONDITIONAL_JUMPS.items()
    ) + (
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_not_", _NOT, params=("tx",)),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_bool", _BOOL, params=("tx",),
               optional=True),
    ),
    requires=("torch._dynamo.variables:BuiltinVariable",
              "torch._dynamo.variables.user_defined:UserDefinedObjectVariable",
              "torch._dynamo.guards:GuardBuilder.SEQUENCE_LENGTH"),
    summary="a conditional jump on a builtin container subclass is taken on len(obj) != 0, as in CPython",
    history=(
        ("2.5-2.6", "an empty dict/set/tuple/str/deque/OrderedDict subclass is true in `if`/`not`/`or` "
         "(list subclasses are right)"),
        ("2.7-2.11", "the same, list subclasses too; a dict or list subclass emptied in the frame is true"),
        ("2.12+", "right"),
    ),
)
