"""``Sub.get(d, k)``: a dict method called through a dict subclass's class (torch 2.7 on).

Symptom: ``SimpleDict.get(d, "b")``, ``SimpleDict.keys(d)``, ``SimpleDict.pop(d, "a")`` ... where
``class SimpleDict(dict)`` does not override the method: ``Unsupported: Unsupported method call ...
Dynamo does not know how to trace method `get` of class `type``, although ``dict.get(d, "b")``
compiles. Upstream's ``test_dicts.py`` calls dict methods this way in every test of
``DictSubclassMethodsTests`` (10 of them fail on 2.8.0 on this alone).

Root cause: ``UserDefinedClassVariable.call_method`` (torch/_dynamo/variables/user_defined.py)
has no case for a dict method read from a dict subclass: ``var_getattr`` finds ``dict``'s method
descriptor, returns a ``GetAttrVariable`` and its call ends in ``call_method(name)`` on the class,
which falls through to the generic break. 2.9 sends every name but
``__new__`` on a dict subclass to ``BuiltinVariable(dict).call_method``, with no guard: once the
class (or a base) gains its own ``get`` after the first call, compiled code still runs
``dict.get``, silently wrong on 2.9-2.15 (measured); and ``Sub.keys()`` with no argument crashes
2.9-2.12 (``InternalTorchDynamoError: IndexError``, also without ``fullgraph``) where CPython raises
``TypeError``. Open upstream: docs/upstream/dict-subclass-class-method/.

What the handler accepts: ``call_method(tx, name, args, kwargs)`` on an exact
``UserDefinedClassVariable`` with a source, whose class is a proper subclass of ``dict`` with
metaclass ``type``, ``name`` one of dict's instance methods (:data:`_METHODS`), and ``name``
resolving along the class's MRO to ``dict``'s own method descriptor (not overridden, by a static
lookup that runs no user code). It installs ``ID_MATCH`` on ``<class>.<name>`` and answers
``<dict's tracker>.call_method(tx, name, args, kwargs)`` (``BuiltinVariable(dict)``; 2.13's
``DictBuiltinVariable``): what Dynamo does for the program that writes ``dict.<name>(...)``.
With no argument it raises ``TypeError`` in the trace, as CPython's descriptor does. From 2.14
Dynamo reads ``Sub.get`` as a ``MethodDescriptorVariable`` in ``resolve_cls_descriptor`` and
never calls ``call_method``: the same accepted values get the same guard there, then Dynamo's own
answer.

Why that is sound: with metaclass ``type``, ``Sub.name`` is the first ``name`` on ``Sub``'s MRO
(no data descriptor of ``type`` has a dict method's name), here ``dict``'s method descriptor,
whose ``__get__(None, Sub)`` is the descriptor itself; so ``Sub.name(*args)`` is
``dict.name(*args)`` in CPython, call for call, and the guard holds it for every later call
(an override or a class attribute set later changes ``Sub.name`` and recompiles). The answer is
Dynamo's own for ``dict.name(*args)``, measured right on 2.7.1-2.15.0 for plain dicts and
dict subclasses, passed in or made in the frame (and 2.9+'s own answer, now guarded).

Deferred: ``dict`` itself, ``__new__``, ``fromkeys`` (a classmethod: it builds a ``Sub``),
``__eq__``/``__ne__`` (Dynamo compares classes there), overridden methods (Dynamo inlines
them), classes with a metaclass or no source.
"""

from __future__ import annotations

from ..dynamo_api import bind_args, build_sourceless, raise_observed, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "dict-subclass-class-method"

#: dict's instance methods whose class-level call is ``dict.<name>(self, ...)``.
_METHODS = frozenset({
    "get", "keys", "items", "values", "pop", "popitem", "setdefault", "update", "clear", "copy",
    "__contains__", "__getitem__", "__setitem__", "__delitem__", "__len__", "__iter__",
})


def _accepts(instance, name) -> bool:
    """A dict subclass with metaclass ``type`` and a source, whose ``name`` is dict's own method."""
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    cls = getattr(instance, "value", None)
    return (type(instance) is UserDefinedClassVariable and getattr(instance, "source", None) is not None
            and name in _METHODS and isinstance(cls, type) and type(cls) is type and cls is not dict
            and issubclass(cls, dict) and static_lookup(cls, name) is dict.__dict__[name])


def _guard(instance, name) -> None:
    """``ID_MATCH`` on ``<class>.<name>``: a method the class (or a base) gains later recompiles."""
    from torch._dynamo.guards import GuardBuilder, install_guard
    from torch._dynamo.source import AttrSource

    effects_begin()
    install_guard(AttrSource(instance.source, name).make_guard(GuardBuilder.ID_MATCH))


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.call_method(tx, name, args, kwargs)`` of a dict method not overridden."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or not _accepts(instance, bound[1]):
        return DEFER
    tx, name, call_args, call_kwargs = bound
    _guard(instance, name)
    if not call_args:
        raise_observed(TypeError, tx, f"{instance.value.__name__}.{name}()",
                       f"unbound method dict.{name}() needs an argument")
    return build_sourceless(tx, dict).call_method(tx, name, list(call_args), dict(call_kwargs))


@gate(_call_method)
def _call_method_gate(original, handle):
    """What is installed on ``UserDefinedClassVariable.call_method``: a name that is not one of
    dict's instance methods goes straight to Dynamo (one set test)."""

    def call_method(self, tx, name, args, kwargs):
        if name not in _METHODS:
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


@fail_safe(NAME)
def _resolve_cls_descriptor(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable.resolve_cls_descriptor(tx, name, cls_attr, source)`` (2.14+, where
    ``Sub.get`` is read as a ``MethodDescriptorVariable``): the same guard, then Dynamo's own answer."""
    bound = bind_args(args, kwargs, ("tx", "name", "cls_attr", "source"))
    if bound is None or not _accepts(instance, bound[1]) or bound[2] is not dict.__dict__[bound[1]]:
        return DEFER
    _guard(instance, bound[1])
    return wrapped(*args, **kwargs)


@gate(_resolve_cls_descriptor)
def _resolve_cls_descriptor_gate(original, handle):
    """What is installed on ``resolve_cls_descriptor`` (every class attribute that is a descriptor):
    a name that is not one of dict's instance methods goes straight to Dynamo."""

    def resolve_cls_descriptor(self, tx, name, cls_attr, source):
        if name not in _METHODS:
            return original(self, tx, name, cls_attr, source)
        return handle(self, tx, name, cls_attr, source)

    return resolve_cls_descriptor


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Sub.get(d, k)`, `Sub.keys(d)`, `Sub.pop(d, k)` for `class Sub(dict)`: **graph break** '
             '"Dynamo does not know how to trace method `get` of class `type`" (2.7–2.8); compiled code '
             '**keeps calling `dict.get`** after `Sub` gains its own `get` (2.9–2.15, silently wrong); '
             '`Sub.keys()` with no argument **crashes the compile** (2.9–2.12)',
         '2.7–2.15',
         '(`>=2.7`)'),
    ),
    fixes="`Sub.get(d, k)`, `Sub.keys(d)`, `Sub.pop(d, k)` for `class Sub(dict)`: `Unsupported method call ... "
    "Dynamo does not know how to trace method `get` of class `type`` (torch 2.7-2.8); still `dict.get` after "
    "`Sub` gains its own `get` (2.9+: silently wrong); `Sub.keys()` crashes (2.9-2.12)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_method",
    mirrors="torch 2.9: UserDefinedClassVariable.call_method sends a dict subclass's methods to "
    "BuiltinVariable(dict).call_method; the guard is open upstream (docs/upstream/dict-subclass-class-method/)",
    torch=">=2.7",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_method",
               _call_method_gate, params=("tx", "name", "args", "kwargs")),
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "resolve_cls_descriptor",
               _resolve_cls_descriptor_gate, params=("tx", "name", "cls_attr", "source"), optional=True),
    ),
    requires=("torch._dynamo.variables.builtin:BuiltinVariable.call_method",),
    summary="a dict method called through a dict subclass that does not override it (`Sub.get(d, k)`) is "
            "`dict.get(d, k)`, under a guard on `Sub.get`; with no argument, TypeError",
    history=(
        ("2.5-2.6", "a graph break, as `dict.get(d, k)` is too (no dict method through BuiltinVariable(dict))"),
        ("2.7-2.8", "`dict.get(d, k)` compiles, `Sub.get(d, k)` is a graph break: \"Dynamo does not know how to "
         "trace method `get` of class `type`\""),
        ("2.9-2.12", "`Sub.get(d, k)` compiles without a guard on `Sub.get`: a `get` set on the class later is "
         "ignored (silently wrong); `Sub.keys()` with no argument crashes (InternalTorchDynamoError: IndexError)"),
        ("2.13+", "`Sub.get(d, k)` compiles without a guard on `Sub.get` (silently wrong once the class gains it)"),
    ),
)
