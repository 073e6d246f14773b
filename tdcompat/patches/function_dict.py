"""A function's or a bound method's ``__dict__`` is the interpreter's descriptor, not the dict (torch 2.5-2.11).

Symptom: ``g.__dict__ is Cls.meth.__dict__`` is ``True``, ``type(g.__dict__) is dict`` is ``False``,
``g.__dict__ == h.__dict__`` is ``True`` whatever the two functions hold: **silently wrong** in compiled
code; ``g.__dict__.get(k)``, ``k in g.__dict__``, ``list(g.__dict__)``, ``d[k] = v`` graph-break;
``obj.meth.__dict__`` of an object made in the frame breaks (``Unexpected type in sourceless builder``,
upstream's ``DunderDictVariableTests::test_method_dict_direct_fullgraph``) or, on 2.11, cannot be
returned (``Reconstruction failure``). Measured on 2.5.1-2.11.0; 2.12 models a function's ``__dict__``.

Root cause: ``UserFunctionVariable.var_getattr`` (torch/_dynamo/variables/functions.py; inherited by
``UserMethodVariable``) looks ``__dict__`` up statically on the function's type and wraps what it finds,
the ``getset_descriptor`` shared by every function (``GetSetDescriptorVariable``), whose identity,
type and equality are the descriptor's.

What the handler accepts: ``__dict__`` of an exact ``UserFunctionVariable`` with a source, and of an
exact ``UserMethodVariable`` whose function has one (the method's own source plus ``__func__``, or, for a
method of an object made in the frame, the source of the class it was built from plus the function's
``__name__`` where a static lookup of that name on the object's class finds exactly this function: the
lookup Dynamo itself made to bind it, and ``VariableBuilder`` guards the function's identity there). It
answers with what Dynamo builds for any dict reached through a source, ``VariableBuilder(tx,
AttrSource(<function>, "__dict__"))(fn.__dict__)``: a dict tracker guarded on the real dict's keys and
values, deduplicated by identity (two routes to one function give one tracker, as ``is`` expects),
whose writes replay into the real dict after the graph, as CPython's instance dict is written. The
same method's ``__func__`` of an object made in the frame gets that source (without it the function
tracker is sourceless and its ``__dict__`` could not be compared with the function's own).

Sound because the dict tracker is the function's ``__dict__`` itself (the object CPython returns for
``f.__dict__`` and for ``m.__dict__``, which ``method_getattro`` forwards to ``m.__func__``). The one seam
is the function's attributes, which live in that dict: after the frame wrote into the tracker, an
attribute read of that function (``g.k``, ``getattr(g, k, d)``, ``hasattr(g, k)``) that CPython answers
from the instance dict (no data descriptor of the function type, and for a method nothing on the method
type) is answered from the tracker, and a key the frame deleted raises ``AttributeError`` in the trace
(Dynamo would read the real, not yet written, function). Writes through ``setattr`` on a function are not
traced on these releases. A function or method without a reachable source, or whose dict holds a key
the function type also answers (or a key that is not a ``str``), defers: a graph break raised under
``getattr``'s handler is swallowed and folded into an unguarded constant (see :func:`_dict_tracker`).
Everything else defers.
"""

from __future__ import annotations

from ..dynamo_api import MISSING, is_data_descriptor, raise_observed, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate

NAME = "function-dict"


def _trackers():
    from torch._dynamo.variables.functions import UserFunctionVariable, UserMethodVariable

    return UserFunctionVariable, UserMethodVariable


def _class_source(method):
    """The source of ``method``'s function found through the class its object was built from, or None."""
    obj = getattr(method, "obj", None)
    cls_source = getattr(obj, "cls_source", None)
    value = getattr(obj, "value", None)
    fn = method.fn
    name = getattr(fn, "__name__", None)
    if cls_source is None or value is None or type(name) is not str:
        return None
    if static_lookup(type(value), name) is not fn:
        return None
    from torch._dynamo.source import AttrSource

    return AttrSource(cls_source, name)


def _function_source(vt):
    """The source of the function behind ``vt`` (a function or a bound-method tracker), or None."""
    function_cls, method_cls = _trackers()
    kind = type(vt)
    if kind is function_cls:
        return vt.source
    if kind is method_cls:
        if vt.source is not None:
            from torch._dynamo.source import AttrSource

            return AttrSource(vt.source, "__func__")
        return _class_source(vt)
    return None


def _shadowed_keys(real: dict) -> bool:
    """Does the dict hold a key the function type also answers (``__call__``, ``__get__``, ...), or a key
    that is not a ``str``? A frame that deletes such a key would make a later read fall back to the type:
    not modelled here."""
    import types

    return any(type(k) is not str or static_lookup(types.FunctionType, k) is not MISSING for k in real)


def _dict_tracker(tx, vt):
    """``vt``'s function ``__dict__`` as Dynamo tracks a dict reached through a source, or DEFER.

    Never a graph break here: ``getattr``'s handler (``BuiltinVariable.call_getattr``) swallows one and
    folds ``getattr(f, "__dict__")`` over the real function into an unguarded constant dict (measured on
    2.11: the second call read the first call's dict). Deferring leaves Dynamo's own answer."""
    from torch._dynamo.source import AttrSource
    from torch._dynamo.variables.builder import VariableBuilder

    source = _function_source(vt)
    real = vt.fn.__dict__
    if source is None or type(real) is not dict or _shadowed_keys(real):
        return DEFER
    effects_begin()
    _BUILT.add(id(vt.fn))
    return VariableBuilder(tx, AttrSource(source, "__dict__"))(real)


#: ``id()`` of every function whose ``__dict__`` a tracker was built for (never cleared: an id reused by
#: another function only sends its reads to the handler, which checks the side effects itself). The gates
#: send an attribute read of any other function straight to Dynamo.
_BUILT: set = set()


_DELETED = object()


def _pending(tx, vt, name):
    """What ``vt.name`` reads where the frame wrote into the function's ``__dict__`` tracker: the
    tracker's value, :data:`_DELETED` (the key was in the real dict and the frame removed it; the type has
    no such attribute, :func:`_shadowed_keys`), or None (not written, or a name the dict does not answer:
    Dynamo's own read is CPython's)."""
    import types

    from torch._dynamo.variables import ConstantVariable

    side_effects = tx.output.side_effects
    real = getattr(vt.fn, "__dict__", None)
    if type(real) is not dict or real not in side_effects:
        return None
    tracker = side_effects[real]
    if not side_effects.is_modified(tracker) or type(name) is not str:
        return None
    if type(vt) is not _trackers()[0] and static_lookup(types.MethodType, name) is not MISSING:
        return None  # method_getattro: the method type's own attribute first
    if is_data_descriptor(types.FunctionType, name):
        return None  # __name__, __code__, __defaults__, ...: not read from the dict
    key = ConstantVariable.create(name)
    if tracker.call_method(tx, "__contains__", [key], {}).as_python_constant():
        return tracker.call_method(tx, "__getitem__", [key], {})
    return _DELETED if name in real else None


def _getattr(tx, instance, name):
    """``instance.name`` for a function or bound-method tracker, or DEFER."""
    if type(instance) not in _trackers():
        return DEFER
    if name == "__dict__":
        return _dict_tracker(tx, instance)
    found = _pending(tx, instance, name)
    if found is None:
        return DEFER
    effects_begin()
    if found is _DELETED:
        raise_observed(AttributeError, tx, f"{instance}.{name}",
                       f"'function' object has no attribute '{name}'")
    return found


@fail_safe(NAME)
def _var_getattr(wrapped, instance, args, kwargs):
    """``UserFunctionVariable.var_getattr(tx, name)`` (``UserMethodVariable`` calls it through ``super()``
    from 2.7)."""
    if len(args) != 2 or kwargs:
        return DEFER
    return _getattr(args[0], instance, args[1])


@fail_safe(NAME)
def _hasattr(wrapped, instance, args, kwargs):
    """``call_hasattr(tx, name)`` / ``call_obj_hasattr``: read as :func:`_var_getattr` reads."""
    if len(args) != 2 or kwargs or type(instance) not in _trackers():
        return DEFER
    found = _pending(args[0], instance, args[1])
    if found is None:
        return DEFER
    from torch._dynamo.variables import ConstantVariable

    return ConstantVariable.create(found is not _DELETED)


@fail_safe(NAME)
def _method_getattr(wrapped, instance, args, kwargs):
    """``UserMethodVariable.var_getattr(tx, name)`` (inherited on 2.5-2.6, where it does not reach the
    function's handler): as :func:`_var_getattr`, and ``__func__`` of a method Dynamo holds without a
    source gets the function's source through the class."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, name = args
    _function_cls, method_cls = _trackers()
    if type(instance) is not method_cls:
        return DEFER
    if name != "__func__":
        return _getattr(tx, instance, name)
    if instance.source is not None or getattr(instance, "source_fn", None) is not None:
        return DEFER
    source = _class_source(instance)
    if source is None:
        return DEFER
    from torch._dynamo.variables.builder import VariableBuilder

    effects_begin()
    return VariableBuilder(tx, source)(instance.fn)


def _read_gate(handler, names: frozenset):
    """The gate in front of a read ``handler`` (``(self, tx, name)``): a name in ``names``, or any read of
    a function whose ``__dict__`` the handler tracked, goes to it; every other read straight to Dynamo
    after one id test."""

    @gate(handler)
    def factory(original, handle):
        def read(self, tx, name):
            try:
                mine = name in names or id(self.fn) in _BUILT
            except Exception:  # noqa: BLE001 - the handler decides under the fail-safe
                mine = True
            return handle(self, tx, name) if mine else original(self, tx, name)

        return read

    return factory


#: ``UserFunctionVariable.var_getattr``; ``UserMethodVariable.var_getattr`` (also ``__func__``);
#: ``call_hasattr`` / ``call_obj_hasattr`` (only for a function whose ``__dict__`` was tracked).
_var_getattr_gate = _read_gate(_var_getattr, frozenset({"__dict__"}))
_method_getattr_gate = _read_gate(_method_getattr, frozenset({"__dict__", "__func__"}))
_hasattr_gate = _read_gate(_hasattr, frozenset())


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`f.__dict__ is g.__dict__` is True, `type(f.__dict__) is dict` False, `f.__dict__ == g.__dict__` "
         "True for any two functions or bound methods: **silently wrong** (Dynamo answers with the shared "
         "getset descriptor); `obj.meth.__dict__`, `f.__dict__.get(k)`, `list(f.__dict__)` break",
         "2.5–2.11",
         "(`<2.12`)"),
    ),
    fixes="`f.__dict__` of a function or bound method is the getset descriptor shared by all functions: "
    "`f.__dict__ is g.__dict__` True, `type(f.__dict__) is dict` False (torch 2.5-2.11)",
    upstream="torch/_dynamo/variables/functions.py: UserFunctionVariable.var_getattr, UserMethodVariable.var_getattr",
    mirrors="torch 2.12: a function's __dict__ is a DunderDictVariable (upstream test_dicts.py "
    "DunderDictVariableTests::test_method_dict_direct_fullgraph)",
    torch="<2.12",
    fixed_upstream="2.12: BaseUserFunctionVariable.get_dict_vt",
    targets=(
        Target("torch._dynamo.variables.functions", "UserFunctionVariable", "var_getattr", _var_getattr_gate,
               params=("tx", "name")),
        Target("torch._dynamo.variables.functions", "UserMethodVariable", "var_getattr", _method_getattr_gate,
               params=("tx", "name"), inherited=True),
        Target("torch._dynamo.variables.functions", "UserFunctionVariable", "call_hasattr", _hasattr_gate,
               params=("tx", "name"), optional=True, inherited=True),
        Target("torch._dynamo.variables.functions", "UserFunctionVariable", "call_obj_hasattr", _hasattr_gate,
               params=("tx", "name"), optional=True, inherited=True),
    ),
    summary="a function's or bound method's __dict__ is the function's dict, tracked through its source",
    history=(
        ("2.5-2.11", "the shared getset descriptor (`GetSetDescriptorVariable`): `is`, `type`, `==` silently "
         "wrong; dict methods break; a method of an object made in the frame: sourceless-builder break"),
        ("2.12+", "a `DunderDictVariable` per tracker (`function-dict-write` breaks its writes)"),
    ),
)
