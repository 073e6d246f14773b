"""``dict(x)``, ``dict(x, **kw)``, ``{**x}``, ``f(**x)`` and ``list(x.keys())`` for mappings
that Dynamo tracks as modules or as plain user objects.

CPython reads a mapping that is not a ``dict`` with ``keys()`` then
``x[key]`` (``PyDict_Merge`` for ``dict(x)``, ``dict.update``, ``DICT_UPDATE``
in ``{**x}`` and ``DICT_MERGE`` in ``f(**x)``); ``__iter__`` and ``items()`` are
never consulted. Dynamo (torch/_dynamo/variables/builtin.py
``BuiltinVariable.call_custom_dict``, torch/_dynamo/polyfills/__init__.py
``construct_dict``, torch/_dynamo/variables/dicts.py
``ConstDictVariable.call_method("update")``) does something else: it trusts
``items()`` or iterates the mapping, or cannot read it at all (a module that is a
mapping; the ``KeysView``/``ValuesView``/``ItemsView`` objects of ``Mapping.keys()``
etc.). ``for k in x.keys()``, ``len(x)`` and ``k in x`` work.
Version history: ``PATCH.history`` (rendered in docs/compatibility.md).

Upstream: pytorch/pytorch#141118 (TensorDictParams, multiple inheritance
nn.Module/MutableMapping). The FIXME in 2.10+ ``mutable_mapping_update`` names
the ``keys()`` branch CPython has and the polyfill does not.

The patch routes the read of a non-``dict`` ``collections.abc.Mapping`` that is
tracked as a ``UserDefinedObjectVariable`` (this includes
``UnspecializedNNModuleVariable`` and ``MutableMappingVariable``) through a small
function that Dynamo inlines like any user code and that does what CPython does:
``for key in data.keys(): out[key] = data[key]``, then the keyword arguments.
The result is an ordinary traced dict (``ConstDictVariable``), so later reads
and writes on it behave as in eager and the source mapping is not touched.

* ``BuiltinVariable.call_dict``, only where Dynamo has no ``construct_dict``
  polyfill (2.5, 2.6): ``dict(x)`` / ``dict(x, **kw)``; and ``call_list`` /
  ``call_tuple``, where Dynamo cannot unpack the view (2.5-2.8): ``list(view)`` /
  ``tuple(view)`` for a mapping view, by iterating it in inlined code. (These are
  the handlers Dynamo binds for those three builtins only; ``call_function``, which
  every builtin call passes, is left alone.)
* ``ConstDictVariable.call_method("update")``, only without ``construct_dict``
  (2.5, 2.6): ``{**x}``, ``f(**x)``, ``d.update(x)``.
* ``InstructionTranslatorBase.inline_user_function_return`` of
  ``polyfills.construct_dict(dict, x, **kw)`` (2.7+, reached by ``dict(x)`` and,
  before 2.13, by ``update``): taken over only when ``type(x)`` overrides
  ``keys`` or ``items`` (then Dynamo's read can differ from CPython's); a
  mapping that inherits both is read identically by Dynamo and is left alone.

Left alone: ``dict(d, key=v)`` for a real dict ``d`` on 2.5/2.6 (not a mapping
object; still ``Unsupported``); dict subclasses and ``OrderedDict(x)``/
``defaultdict(...)`` (``cls`` other than ``dict``); modules tracked as ``NNModuleVariable``: a
mapping module is always "dynamic", i.e. ``UnspecializedNNModuleVariable``,
except on 2.5/2.6 with the non-default ``inline_inbuilt_nn_modules=False``, where
Dynamo cannot even iterate ``NNModuleVariable(M)`` (``unpack_var_sequence``
asserts a container module), so routing it here would not help; duplicate or non-string
keys in ``f(**x)`` are merged like ``{**x}`` (Dynamo does not raise the
``TypeError`` CPython raises, patched or not). An unhashable module that is a
mapping additionally needs the "unhashable-module" patch.
"""

from __future__ import annotations

from ..dynamo_api import peek, realize
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, gate, method_name_gate, routed_gate

NAME = "module-mapping-dict"


# -- the functions Dynamo inlines (plain Python, CPython's protocol) ------------


def tdcompat_dict_from_mapping(data, /, **kwargs):
    """``dict(data, **kwargs)`` for a mapping ``data``, as ``PyDict_Merge`` reads it."""
    out = {}
    for key in data.keys():
        out[key] = data[key]
    for key, value in kwargs.items():
        out[key] = value
    return out


def tdcompat_update_from_mapping(dst, data, /, **kwargs):
    """``dst.update(data, **kwargs)`` for a mapping ``data``."""
    for key in data.keys():
        dst[key] = data[key]
    for key, value in kwargs.items():
        dst[key] = value


def tdcompat_list_of(iterable):
    out = []
    for item in iterable:
        out.append(item)
    return out


def tdcompat_tuple_of(iterable):
    return tuple(tdcompat_list_of(iterable))


# -- predicates -------------------------------------------------------------------

_env = None


def _load():
    """The Dynamo classes and polyfill this patch reads, by name (imported on first use)."""
    global _env
    if _env is None:
        import types
        from collections.abc import ItemsView, KeysView, Mapping, ValuesView

        from torch._dynamo import polyfills
        from torch._dynamo.variables.functions import UserFunctionVariable
        from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

        _env = types.SimpleNamespace(
            user_object=UserDefinedObjectVariable,
            user_function=UserFunctionVariable,
            construct_dict=getattr(polyfills, "construct_dict", None),  # 2.7 on
            mapping=Mapping,
            views=(KeysView, ValuesView, ItemsView),
        )
    return _env


def _peek(vt):
    """The Python object behind ``vt`` without realizing a lazy tracker."""
    tracker, value = peek(vt)
    if tracker is None:
        return value, True
    if isinstance(tracker, _load().user_object):
        return tracker.value, True
    return None, False


def _mapping_object(vt):
    """The realized tracker if ``vt`` is a non-dict Mapping tracked as a user
    object (``UserDefinedObjectVariable`` and its subclasses
    ``UnspecializedNNModuleVariable`` and ``MutableMappingVariable``)."""
    env = _load()
    value, known = _peek(vt)
    if not known or isinstance(value, dict) or not isinstance(value, env.mapping):
        return None
    realized = realize(vt)
    return realized if isinstance(realized, env.user_object) else None


def _protocol_may_differ(value) -> bool:
    """Dynamo's own read (iteration, or ``items()``) can differ from CPython's
    ``keys()`` + ``__getitem__`` only when the type overrides one of them."""
    mapping = _load().mapping
    cls = type(value)
    return getattr(cls, "keys", None) is not mapping.keys or getattr(cls, "items", None) is not mapping.items


def _inline(tx, fn, args, kwargs):
    function_variable = _load().user_function
    effects_begin()  # inlined user code: no fallback to the original after this
    return tx.inline_user_function_return(function_variable(fn), list(args), dict(kwargs))


def _has_construct_dict() -> bool:
    """Only where Dynamo has the polyfill ``construct_dict`` (2.7 on): before, ``dict(x)`` never inlines it."""
    return _load().construct_dict is not None


# -- gates: what is installed; everything that is not the pattern goes straight to Dynamo --


# -- handlers -------------------------------------------------------------------------


@fail_safe(NAME)
def _call_dict(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_dict(tx, x, **kw)``: ``dict(x)`` / ``dict(x, **kw)`` (2.5, 2.6)."""
    if len(args) != 2 or _has_construct_dict():
        return DEFER  # 2.7+: dict() inlines construct_dict, handled there
    tx, data_vt = args
    data = _mapping_object(data_vt)
    if data is None:
        return DEFER
    return _inline(tx, tdcompat_dict_from_mapping, [data], kwargs)


@fail_safe(NAME)
def _call_list_or_tuple(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_list(tx, view)`` / ``call_tuple(tx, view)`` of a mapping view (2.5-2.8)."""
    fn = getattr(instance, "fn", None)
    if (fn is not list and fn is not tuple) or len(args) != 2 or kwargs:
        return DEFER
    tx, view_vt = args
    value, known = _peek(view_vt)
    if not known or not isinstance(value, _load().views):
        return DEFER
    view = realize(view_vt)
    if not isinstance(view, _load().user_object):
        return DEFER
    can_unpack = getattr(view, "has_force_unpack_var_sequence", None)
    if can_unpack is None or can_unpack(tx):
        return DEFER
    return _inline(tx, tdcompat_list_of if fn is list else tdcompat_tuple_of, [view], {})


def _no_construct_dict() -> bool:
    """``dict(x)`` reaches ``call_dict`` with the mapping itself (2.5, 2.6; 2.7 inlines ``construct_dict``)."""
    return not _has_construct_dict()


def _views_not_unpackable() -> bool:
    """``list(view)`` of a user object fails (2.5-2.8): Dynamo's base ``has_force_unpack_var_sequence``
    is not overridden for user objects (2.9 iterates them; 2.13 renamed the protocol)."""
    from torch._dynamo.variables.base import VariableTracker

    return hasattr(VariableTracker, "has_force_unpack_var_sequence") and (
        "has_force_unpack_var_sequence" not in vars(_load().user_object))


@fail_safe(NAME)
def _dict_call_method(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "update", [x], kwargs)`` (2.5, 2.6)."""
    if len(args) != 4 or kwargs or args[1] != "update":
        return DEFER
    if _load().construct_dict is not None:
        return DEFER  # 2.7+: update goes through construct_dict (or is right, 2.13+)
    tx, _, call_args, call_kwargs = args
    if not isinstance(call_args, (list, tuple)) or len(call_args) != 1:
        return DEFER
    try:
        if not issubclass(instance.python_type(), dict):
            return DEFER  # SetVariable and friends share this method
    except NotImplementedError:
        return DEFER
    data = _mapping_object(call_args[0])
    if data is None:
        return DEFER
    return _inline(tx, tdcompat_update_from_mapping, [instance, data], call_kwargs or {})


@fail_safe(NAME)
def _inline_user_function_return(wrapped, instance, args, kwargs):
    """``tx.inline_user_function_return(fn, args, kwargs)`` of ``polyfills.construct_dict`` (2.7+)."""
    construct_dict = _load().construct_dict
    fn = args[0] if args else kwargs.get("fn")
    if construct_dict is None or getattr(fn, "fn", None) is not construct_dict:
        return DEFER
    call_args = args[1] if len(args) > 1 else kwargs.get("args")
    call_kwargs = args[2] if len(args) > 2 else kwargs.get("kwargs")
    if not isinstance(call_args, (list, tuple)) or len(call_args) != 2:
        return DEFER
    cls_vt, data_vt = call_args
    try:
        if cls_vt.as_python_constant() is not dict:
            return DEFER
    except Exception:  # noqa: BLE001 - not a constant: a dict subclass or unknown
        return DEFER
    value, known = _peek(data_vt)
    if not known or not _protocol_may_differ(value):
        return DEFER
    data = _mapping_object(data_vt)
    if data is None:
        return DEFER
    return _inline(instance, tdcompat_dict_from_mapping, [data], call_kwargs or {})


#: On ``ConstDictVariable.call_method`` (every dict method Dynamo traces): only ``update``
#: reaches the handler, through the name gate it shares with the other dict-method patches.
_dict_call_method_gate = routed_gate(_dict_call_method, method_name_gate, frozenset({'update'}))


@gate(_inline_user_function_return)
def _inline_user_function_return_gate(original, handle):
    """``inline_user_function_return``: a function other than ``construct_dict`` (installed from 2.7)."""

    def inline_user_function_return(self, *args, **kwargs):  # 2.13 added a parameter
        env = _env  # loaded by the first call the handler sees
        try:
            fn = args[0] if args else kwargs["fn"]
            other = env is not None and getattr(fn, "fn", None) is not env.construct_dict
        except Exception:  # noqa: BLE001 - the handler decides, under the fail-safe
            other = False
        if other:
            return original(self, *args, **kwargs)
        return handle(self, *args, **kwargs)

    return inline_user_function_return


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: dict(): (UnspecializedNNModuleVariable(TensorDictParams),) {}`, `dict(): '
             '(LazyVariableTracker(),) {}`, `dict(): (UserDefinedObjectVariable(ItemsView),) {}`',
         '2.5–2.6',
         '(`>=2.5`)'),
        ('`Unsupported: Observed exception` from `TensorDict(**TensorDictParams(...))` (Dynamo '
             'iterates the mapping instead of reading `keys()`)',
         '2.7–2.9',
         ''),
        ('`dict(m)` / `{**m}` / `f(**m)` differ from eager for a mapping whose `keys()` or `items()` '
             'disagree with `__iter__`/`__getitem__`',
         'every release',
         ''),
    ),
    fixes=(
        "Unsupported: dict(): (UnspecializedNNModuleVariable(TensorDictParams),) / "
        "(UserDefinedObjectVariable(ItemsView),) on 2.5-2.6; "
        "Observed exception for TensorDict(**TensorDictParams(...)) on 2.7-2.9; dict(x) ignoring x.keys() "
        "(2.7+); list(x.keys()) 'Failed to trace builtin operator' on 2.5-2.8"
    ),
    upstream=(
        "torch/_dynamo/variables/builtin.py: BuiltinVariable.call_custom_dict; torch/_dynamo/polyfills/__init__.py: "
        "construct_dict / mutable_mapping_update; "
        "torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method('update')"
    ),
    mirrors="pytorch/pytorch#141118 (TensorDictParams: nn.Module + MutableMapping); CPython PyDict_Merge protocol",
    torch=">=2.5",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_dict", _call_dict,
               params=("tx",), optional=True, when=_no_construct_dict),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_list", _call_list_or_tuple,
               params=("tx", "obj"), optional=True, when=_views_not_unpackable),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_tuple", _call_list_or_tuple,
               params=("tx", "obj"), optional=True, when=_views_not_unpackable),
        Target(
            "torch._dynamo.variables.dicts",
            "ConstDictVariable",
            "call_method",
            _dict_call_method_gate,
            inherited=True,
            params=("tx", "name", "args", "kwargs"),
        ),
        Target(
            "torch._dynamo.symbolic_convert",
            "InstructionTranslatorBase",
            "inline_user_function_return",
            _inline_user_function_return_gate,
            params=("fn", "args", "kwargs"),
            when=_has_construct_dict,
        ),
    ),
    requires=(
        "torch._dynamo.variables.functions:UserFunctionVariable",
        "torch._dynamo.variables.lazy:LazyVariableTracker",
        "torch._dynamo.variables.user_defined:UserDefinedObjectVariable",
    ),
    summary="dict()/**/views over non-dict mappings (modules, TensorDictParams, user MutableMappings) "
            "read as CPython does",
    history=(
        ("2.5-2.6",
         "`BuiltinVariable.call_custom_dict` knows dicts, sequences of pairs and `MutableMappingVariable` (whose "
         "`items()` it inlines and silently trusts, even where it disagrees with `keys()`/`__getitem__`): a "
         "module that is a mapping (`TensorDictParams`) fails with `dict(): (UnspecializedNNModuleVariable(M),)` "
         "(`LazyVariableTracker()` on 2.5), a plain mapping that inherits `items()` with `dict(): "
         "(UserDefinedObjectVariable(ItemsView),)`; `dict(x, key=v)` fails for every `x`; `{**x}`/`f(**x)` fail "
         "the same way through `update`. `list()`/`tuple()` of a mapping view breaks (`builtin: list "
         "[UserDefinedObjectVariable]` / `Failed to trace builtin operator`)"),
        ("2.7-2.8",
         "the polyfill `construct_dict` reads `for key in src: dst[key] = src[key]`: "
         "`TensorDict(**TensorDictParams(...))` is `Observed exception` (`TensorDict.__iter__` walks the batch "
         "dimension; iterating a 0-d TensorDict raises); a mapping whose iteration differs from `keys()` "
         "silently gets the wrong keys. `list(view)` still breaks"),
        ("2.9", "as 2.7-2.8, but mapping views unpack (`UserDefinedObjectVariable.has_force_unpack_var_sequence`)"),
        ("2.10-2.12",
         "`construct_dict` calls `mutable_mapping_update`, which reads `items()`: right unless `keys()` or "
         "`items()` is overridden and disagrees (then silently wrong)"),
        ("2.13+",
         "`ConstDictVariable.update` (`{**x}`, `f(**x)`) follows `keys()` + `__getitem__`; `dict(x)` still goes "
         "through the polyfill (silently wrong for a disagreeing `keys()`/`items()`). Open upstream "
         "(pytorch/pytorch#141118)"),
    ),
)
