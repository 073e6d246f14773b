"""``OrderedDict.update(od, ...)``: an ``OrderedDict`` method called through the class crashes, breaks or is
silently wrong (torch 2.5-2.13).

Symptom: ``OrderedDict.update(od, b)``, ``OrderedDict.setdefault(od, k, v)``, ``OrderedDict.__ior__(od, b)``,
``OrderedDict.move_to_end(od, k)`` ... (upstream's ``OrderedDictMethodsTests`` spell every method this way),
measured with the case ``ordered_dict_class_method`` and tests/test_ordered_dict_class_method.py:

* 2.5-2.6: the compile crashes (``InternalTorchDynamoError: AttributeError: 'method_descriptor' object has no
  attribute '__module__'``, also without ``fullgraph``: the user's program stops);
* 2.7-2.8: a graph break ("Attempted to call function marked as skipped ... OrderedDict.update");
* 2.9-2.12: compiled, but ``OrderedDict.update(d, ...)`` of a plain ``dict`` updates it where CPython raises
  ``TypeError`` (the descriptor does not apply to a ``dict``): silently wrong;
* 2.13: ``OrderedDict.__ior__(od, b)``, and ``od.__ior__(b)`` spelled out on the object, return a copy, not
  ``od`` (``r is od`` is ``False``; ``od |= b`` is right): silently wrong.
2.14 reads ``OrderedDict.update`` as a ``MethodDescriptorVariable`` and calls it on the object: right.

Root cause: 2.5-2.8 wrap ``OrderedDict``'s own method descriptors as ``SkipFunctionVariable``
(torch/_dynamo/variables/functions.py), whose ``call_function`` refuses them (2.5-2.6 crash while writing
the message). 2.9-2.13 send every method of a ``dict`` subclass read from the class to
``BuiltinVariable(dict).call_method`` in ``UserDefinedClassVariable.call_method``
(torch/_dynamo/variables/user_defined.py), which checks neither the receiver's type nor ``OrderedDict``'s
own semantics.

What the handlers accept: a call of one of ``OrderedDict``'s own instance methods (:data:`_OWN`: the
descriptors in ``vars(OrderedDict)``, not ``fromkeys``, ``__ror__``, comparisons or ``__init__``), identified
by the descriptor object Dynamo holds (2.5-2.8, ``SkipFunctionVariable.value``; Dynamo guards it by identity
where it came from a source) or by ``UserDefinedClassVariable(OrderedDict).call_method(name)`` (2.9-2.13: the
class is guarded by identity, and a C type's methods cannot change). With a first argument that is a dict
tracker of exactly ``collections.OrderedDict`` (``python_type()``, guarded by Dynamo's type guard on every
dict it wraps; a ``ConstDictVariable``, or 2.13's ``OrderedDictVariable``) the answer is ``od.<name>(*rest,
**kwargs)`` traced as Dynamo traces the bound call: in CPython the descriptor's ``__get__(od)`` is that bound
method, so the two are the same call; ``__ior__`` with one operand is ``od.update(b)`` then ``od`` itself,
which is ``odict_inplace_or`` (Dynamo's own ``od.__ior__(b)`` returns a copy on 2.13: native, left to Dynamo
for the bound spelling). With a first argument that is a plain ``dict`` or ``defaultdict`` tracker it raises
``TypeError`` in the trace, as the descriptor does (2.5-2.8 cannot raise it: a graph break). With no argument,
``TypeError``. Everything else (a subclass of ``OrderedDict``, whose overrides the descriptor bypasses; any
other receiver) defers. On 2.13 the same ``__ior__`` answer serves ``od.__ior__(b)`` spelled out on an
``OrderedDictVariable`` of exactly ``OrderedDict`` (``OrderedDictVariable.call_method``, routed on the name).
"""

from __future__ import annotations

import collections

from ..dynamo_api import bind_args, raise_observed, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate, method_name_gate, routed_gate

NAME = "ordered-dict-class-method"

#: ``OrderedDict``'s own instance methods whose class-level call is the bound call on an ``OrderedDict``.
_OWN = frozenset({
    "update", "setdefault", "pop", "popitem", "keys", "items", "values", "clear", "copy", "move_to_end",
    "__setitem__", "__delitem__", "__iter__", "__reversed__", "__or__", "__ior__",
})

#: ``{descriptor id: name}`` for the 2.5-2.8 path, where Dynamo holds the descriptor itself.
_BY_ID = {id(vars(collections.OrderedDict)[name]): name for name in _OWN}


def _answer(tx, name, args, kwargs):
    """``OrderedDict.<name>(*args, **kwargs)``: the bound call on an exact ``OrderedDict``, ``TypeError``
    where CPython's descriptor raises it, ``DEFER`` for anything else."""
    from torch._dynamo.variables import ConstDictVariable

    if not args:
        effects_begin()
        raise_observed(TypeError, tx, f"OrderedDict.{name}()", f"unbound method OrderedDict.{name}() needs an argument")
    receiver = realize(args[0])
    if not (isinstance(receiver, ConstDictVariable) or type(receiver).__name__ == "OrderedDictVariable"):
        return DEFER  # 2.13 tracks an OrderedDict as an OrderedDictVariable (a user-dict tracker)
    cls = receiver.python_type()
    if cls is collections.OrderedDict:
        if name == "__ior__":  # odict_inplace_or: update, then the receiver itself (2.13's own __ior__ copies)
            return _in_place_or(tx, receiver, list(args[1:]), dict(kwargs))
        effects_begin()
        return receiver.call_method(tx, name, list(args[1:]), dict(kwargs))
    if cls in (dict, collections.defaultdict) and isinstance(receiver, ConstDictVariable):
        effects_begin()
        raise_observed(TypeError, tx, f"OrderedDict.{name}({cls.__name__})",
                       f"descriptor '{name}' for 'collections.OrderedDict' objects doesn't apply to a "
                       f"'{cls.__name__}' object")
    return DEFER


@fail_safe(NAME)
def _skipped_call(wrapped, instance, args, kwargs):
    """``SkipFunctionVariable.call_function(tx, args, kwargs)`` of an ``OrderedDict`` descriptor (2.5-2.8)."""
    bound = bind_args(args, kwargs, ("tx", "args", "kwargs"))
    name = _BY_ID.get(id(getattr(instance, "value", None)))
    if bound is None or name is None or vars(collections.OrderedDict)[name] is not instance.value:
        return DEFER
    tx, call_args, call_kwargs = bound
    return _answer(tx, name, list(call_args), dict(call_kwargs or {}))


@gate(_skipped_call)
def _skipped_call_gate(original, handle):
    """What is installed on ``SkipFunctionVariable.call_function`` (every skipped callable): anything but an
    ``OrderedDict`` descriptor goes straight to Dynamo after one dict lookup."""

    def call_function(self, tx, args, kwargs):
        if id(getattr(self, "value", None)) not in _BY_ID:
            return original(self, tx, args, kwargs)
        return handle(self, tx, args, kwargs)

    return call_function


def _in_place_or(tx, receiver, args, kwargs):
    """``odict_inplace_or``: ``receiver.update(b)``, then ``receiver`` itself; ``DEFER`` for another arity."""
    if len(args) != 1 or kwargs:
        return DEFER
    effects_begin()
    receiver.call_method(tx, "update", [args[0]], {})
    return receiver


@fail_safe(NAME)
def _bound_ior(wrapped, instance, args, kwargs):
    """``OrderedDictVariable.call_method(tx, "__ior__", [b], {})``: ``od.__ior__(b)`` spelled out (2.13, whose
    own answer is a copy: ``od.__ior__(b) is od`` is ``False``)."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or bound[1] != "__ior__" or type(instance).__name__ != "OrderedDictVariable":
        return DEFER
    tx, _, call_args, call_kwargs = bound
    if instance.python_type() is not collections.OrderedDict:
        return DEFER
    return _in_place_or(tx, instance, list(call_args), dict(call_kwargs or {}))


_bound_ior_gate = routed_gate(_bound_ior, method_name_gate, frozenset({"__ior__"}))


@fail_safe(NAME)
def _class_call_method(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable(OrderedDict).call_method(tx, name, args, kwargs)`` (2.9-2.13)."""
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or type(instance) is not UserDefinedClassVariable or bound[1] not in _OWN:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    return _answer(tx, name, list(call_args), dict(call_kwargs or {}))


@gate(_class_call_method)
def _class_call_method_gate(original, handle):
    """What is installed on ``UserDefinedClassVariable.call_method``: any class but ``OrderedDict`` goes
    straight to Dynamo after one identity test."""

    def call_method(self, tx, name, args, kwargs):
        if getattr(self, "value", None) is not collections.OrderedDict:
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`OrderedDict.update(od, b)`, `OrderedDict.setdefault(od, k, v)`, `OrderedDict.__ior__(od, b)` (a method "
         "called through the class): **crashes the compile** (2.5–2.6, `InternalTorchDynamoError: AttributeError`), "
         "a graph break (2.7–2.8); `OrderedDict.update(plain_dict)` **updates it** where CPython raises "
         "`TypeError` (2.9–2.12); `OrderedDict.__ior__(od, b) is od` and `od.__ior__(b) is od` **are False** (2.13)",
         "2.5–2.13",
         "(`<2.14`)"),
    ),
    fixes="`OrderedDict.update(od, b)` and the other OrderedDict methods called through the class: a crash "
    "(2.5-2.6), a graph break (2.7-2.8), no TypeError for a plain dict (2.9-2.12, silently wrong), "
    "`OrderedDict.__ior__(od, b)` / `od.__ior__(b)` not `od` (2.13, silently wrong)",
    upstream="torch/_dynamo/variables/functions.py: SkipFunctionVariable.call_function (2.5-2.8); "
    "torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_method (2.9-2.13)",
    mirrors="torch 2.14: UserDefinedClassVariable.resolve_cls_descriptor reads OrderedDict.update as a "
    "MethodDescriptorVariable and calls it on the receiver",
    torch="<2.14",
    fixed_upstream="2.14: MethodDescriptorVariable (UserDefinedClassVariable.resolve_cls_descriptor)",
    targets=(
        Target("torch._dynamo.variables.functions", "SkipFunctionVariable", "call_function", _skipped_call_gate,
               params=("tx", "args", "kwargs")),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_method",
               _class_call_method_gate, params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.user_defined", "OrderedDictVariable", "call_method", _bound_ior_gate,
               params=("tx", "name", "args", "kwargs"), optional=True),  # 2.13
    ),
    # 2.5-2.6: `OrderedDict.__ior__(od, b) is od` would fold to False there (a crash natively): the identity
    # is container-alias-identity's.
    needs=("container-alias-identity",),
    summary="OrderedDict.<method>(od, ...) through the class is od.<method>(...) on an exact OrderedDict; "
    "TypeError for a plain dict",
    history=(
        ("2.5-2.6", "the compile crashes: `InternalTorchDynamoError: AttributeError: 'method_descriptor' object has "
         "no attribute '__module__'` (SkipFunctionVariable.call_function)"),
        ("2.7-2.8", "a graph break: \"Attempted to call function marked as skipped\""),
        ("2.9-2.12", "compiled through `BuiltinVariable(dict).call_method`: a plain dict receiver is updated "
         "where CPython raises TypeError (silently wrong)"),
        ("2.13", "`OrderedDict.__ior__(od, b)` and `od.__ior__(b)` return a copy, not `od` (silently wrong)"),
        ("2.14+", "right"),
    ),
)
