"""``defaultdict(list, a=1)`` built in the frame drops its items; ``defaultdict()`` crashes Dynamo; ``defaultdict(int)``
breaks (torch 2.5-2.9).

Symptom: in compiled code ``collections.defaultdict(factory, a=1)`` is an empty dict (the keywords are
dropped: silently wrong), ``defaultdict()`` crashes the compile (``InternalTorchDynamoError: IndexError:
list index out of range``, also without ``fullgraph``), and ``defaultdict(None)`` /
``defaultdict(list, d)`` / ``defaultdict(list, d, k=v)`` are graph breaks, as is any ``defaultdict`` whose
factory is ``int``, ``float``, ``str`` or ``bool`` (the counter idiom ``defaultdict(int)``: Dynamo's
``DefaultDictVariable.is_supported_arg`` takes ``list``/``tuple``/``dict``/``set`` only before 2.11; upstream
``test_defaultdict_inplace_union_preserves_factory`` builds ``defaultdict(int, {...})``). Measured on 2.5.1-2.9.1
(2.10 is right). 2.5-2.7 rebuild any ``defaultdict`` made in the frame as a plain ``dict`` when it leaves
the frame (``DefaultDictVariable`` has no ``reconstruct`` of its own there; ``defaultdict-reconstruct`` adds
it): with that patch applied every shape is built there too (asked when the call is traced:
``"reconstruct" in vars(DefaultDictVariable)``); without it building more of them would turn crashes and
breaks into wrong types, so only the keyword shape ``defaultdict(f, a=x)`` is built (Dynamo's own result
is already wrong, an empty dict), and ``defaultdict()`` is a graph break instead of Dynamo's crash (once
``builtin-subclass-truth`` removed an earlier break, a frame that ran eagerly from there reached the crash:
fuzzer base 617587387756605 on 2.6.0).
Upstream's ``test_newly_constructed_default_dict_no_default_factory`` and
``test_newly_constructed_default_dict_with_dict`` (test_dicts.py) fail on 2.5-2.9 on it.

Root cause: ``UserDefinedClassVariable.call_function`` (torch/_dynamo/variables/user_defined.py) builds a
``DefaultDictVariable`` only for ``len(args) <= 1`` and reads ``args[0]`` first (``IndexError`` with no
argument); it ignores ``kwargs`` and any mapping argument. ``DefaultDictVariable.call_method("__getitem__")``
(dicts.py) raises a plain Python ``KeyError`` for a missing key when there is no factory.

What the handlers accept: a call of the class ``collections.defaultdict`` itself whose first argument, if any,
is ``None``, a factory Dynamo supports (``DefaultDictVariable.is_supported_arg``) or exactly the builtin
``int``, ``float``, ``str`` or ``bool`` (realized: guarded as Dynamo guards any builtin it calls; 2.8-2.10 do
not guard against a module global that later shadows the builtin's name, for every builtin call alike), with
at most one more positional argument and any keywords, where Dynamo's own path is not right (no argument,
``None``, a builtin-type factory, a mapping or keywords). A builtin-type factory is sound because
``DefaultDictVariable`` calls the factory tracker for a missing key (``BuiltinVariable.call_function`` with no
argument: a folded constant, ``0``/``0.0``/``''``/``False``, as CPython's ``__missing__``), reconstructs it as
the builtin's name and answers ``default_factory`` with it (``defaultdict-factory-read``); ``bytes()`` and
``complex()`` are left out, Dynamo does not fold them on every release of the range. The items are what
``dict(*rest, **kwargs)`` builds in the trace (``BuiltinVariable.call_custom_dict``: CPython's
``defaultdict.__init__`` is ``dict.__init__`` on the rest), the factory the argument (``None`` as a constant
tracker, so that the rebuilt object gets it back). And ``d[k]`` of a missing key of such a ``defaultdict``
with no factory raises ``KeyError`` in the trace, as ``dict.__missing__`` does. Everything else (a subclass,
an unsupported factory, more arguments) defers.
"""

from __future__ import annotations

import collections

from ..dict_classes import class_call_gate
from ..dynamo_api import graph_break, new_object_kwargs, peek, raise_observed, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate, routed_gate

NAME = "defaultdict-construction"


def _no_factory(vt) -> bool:
    from torch._dynamo.variables import ConstantVariable

    return type(vt) is ConstantVariable and vt.value is None


#: Builtin types whose call with no argument Dynamo folds to a constant on 2.5-2.9 (``int()`` is ``0``,
#: ``str()`` is ``''``; not ``bytes()`` nor, before 2.9, ``complex()``): the counter idiom ``defaultdict(int)``.
#: Dynamo's ``DefaultDictVariable.is_supported_arg`` takes only ``list``/``tuple``/``dict``/``set`` before
#: 2.11, so these were a graph break, any shape.
_CONSTANT_FACTORIES = (int, float, str, bool)


def _constant_factory(vt):
    """``vt`` realized (guarded as Dynamo guards the builtin) when it is one of :data:`_CONSTANT_FACTORIES`,
    else ``None``; a lazy tracker of anything else is left unrealized (no guard added on a deferred call)."""
    from torch._dynamo.variables import BuiltinVariable

    tracker, value = peek(vt)
    if tracker is None:
        if not any(value is t for t in _CONSTANT_FACTORIES):
            return None
        tracker = realize(vt)
    return tracker if type(tracker) is BuiltinVariable and tracker.fn in _CONSTANT_FACTORIES else None


@fail_safe(NAME)
def _construct(wrapped, instance, args, kwargs):
    """``UserDefinedClassVariable(defaultdict).call_function(tx, args, kwargs)``."""
    if len(args) != 3 or kwargs or getattr(instance, "value", None) is not collections.defaultdict:
        return DEFER
    tx, call_args, call_kwargs = args
    from torch._dynamo.variables import BuiltinVariable, ConstantVariable
    from torch._dynamo.variables.dicts import DefaultDictVariable

    call_args, call_kwargs = list(call_args), dict(call_kwargs or {})
    factory = call_args[0] if call_args else ConstantVariable.create(None)
    rest = call_args[1:]
    constant = _constant_factory(factory)
    factory = constant if constant is not None else factory
    supported = constant is None and DefaultDictVariable.is_supported_arg(factory)
    if len(rest) > 1 or not (_no_factory(factory) or supported or constant is not None):
        return DEFER
    if call_args and not rest and not call_kwargs and supported:
        return DEFER  # defaultdict(list): Dynamo's own, right
    if "reconstruct" not in vars(DefaultDictVariable) and (rest or not supported or not call_args):
        if not call_args:  # Dynamo's own crashes (IndexError): a graph break instead, so eager builds it
            graph_break("defaultdict() with no argument", "collections.defaultdict()",
                        "this torch cannot return a defaultdict built in the frame as one")
        return DEFER  # 2.5-2.7: only the keyword shape, which Dynamo builds empty (see the module docstring)
    effects_begin()
    items = {}
    if rest or call_kwargs:
        items = dict(BuiltinVariable.call_custom_dict(tx, dict, *rest, **call_kwargs).items)
    return DefaultDictVariable(items, collections.defaultdict, factory, **new_object_kwargs())


@fail_safe(NAME)
def _getitem(wrapped, instance, args, kwargs):
    """``DefaultDictVariable.call_method(tx, "__getitem__", [key], {})`` with no factory."""
    if len(args) != 4 or kwargs:
        return DEFER
    tx, name, call_args, call_kwargs = args
    if name != "__getitem__" or len(call_args) != 1 or call_kwargs:
        return DEFER
    if not _no_factory(getattr(instance, "default_factory", None)) or call_args[0] in instance:
        return DEFER
    effects_begin()
    key = call_args[0]
    value = key.as_python_constant() if key.is_python_constant() else None
    raise_observed(KeyError, tx, f"{instance}[{key}]", value)


@gate(_getitem)
def _getitem_gate(original, handle):
    """What is installed on ``DefaultDictVariable.call_method``: any method but ``__getitem__`` goes on."""

    def call_method(self, tx, name, args, kwargs):
        if name != "__getitem__":
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`collections.defaultdict(list, a=x)` built in the frame **is empty** (keywords dropped: '
             'silently wrong); `defaultdict()` **crashes the compile** (`InternalTorchDynamoError: '
             'IndexError`, also without `fullgraph`); `defaultdict(None)`, `defaultdict(list, mapping)`, '
             '`defaultdict(int)` (any `int`/`float`/`str`/`bool` factory): graph breaks',
         '2.5–2.9',
         '(`<2.10`; 2.5–2.7 with `defaultdict-reconstruct`, else the keyword shape only and `defaultdict()` '
             'a graph break instead of the crash)'),
    ),
    fixes="`defaultdict(list, a=1)` built in the frame is empty (silently wrong); `defaultdict()` crashes the "
    "compile (`InternalTorchDynamoError: IndexError`, also without fullgraph); `defaultdict(None)`, "
    "`defaultdict(list, d)`, `defaultdict(int)` break (torch <2.10; 2.5-2.7: the keyword shape only)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedClassVariable.call_function (the "
    "collections.defaultdict branch); torch/_dynamo/variables/dicts.py: DefaultDictVariable.call_method",
    mirrors="torch 2.10: the defaultdict branch takes no factory, None, any factory, a mapping and keywords "
    "(2.11: DefaultDictVariable.is_supported_arg takes every BuiltinVariable)",
    torch="<2.10",
    fixed_upstream="2.10: UserDefinedClassVariable.call_function builds the items with call_custom_dict",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedClassVariable", "call_function",
               routed_gate(_construct, class_call_gate, frozenset({collections.defaultdict})),
               params=("tx", "args", "kwargs")),
        Target("torch._dynamo.variables.dicts", "DefaultDictVariable", "call_method", _getitem_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=("torch._dynamo.variables.builtin:BuiltinVariable.call_custom_dict",
              "torch._dynamo.variables.dicts:DefaultDictVariable.is_supported_arg"),
    summary="defaultdict() / defaultdict(None) / defaultdict(int) / defaultdict(f, mapping, **kw) built in the "
    "frame as CPython does",
    history=(
        ("2.5-2.7", "as 2.8-2.9, and a defaultdict made in the frame leaves it as a plain dict (no "
         "DefaultDictVariable.reconstruct there: `defaultdict-reconstruct`); patched: every shape with "
         "`defaultdict-reconstruct`, the keyword shape only without it"),
        ("2.8-2.9", "`defaultdict(f, a=1)` silently empty; `defaultdict()` crashes (IndexError); `None`, a "
         "mapping argument or an `int`/`float`/`str`/`bool` factory: a graph break"),
        ("2.10+", "right"),
    ),
)
