"""Keyword arguments to ``get``/``pop``/``setdefault`` of a dict: ignored or refused against CPython (torch 2.5-2.15).

Symptom: ``d.get("z", default=3)`` compiles to ``None`` and ``d.pop("a", default=3)`` to the value (2.5-2.14),
where CPython's ``dict.get``/``dict.pop``/``dict.setdefault`` take no keyword arguments and raise
``TypeError``; an ``OrderedDict``'s own ``pop``/``setdefault`` take ``key``/``default`` by keyword, and compiled
``od.pop("z", default=3)`` raises ``KeyError``, ``od.setdefault("z", default=3)`` stores ``None``,
``od.pop(key="a")`` raises ``TypeError`` (2.5-2.15). Silently wrong under ``fullgraph=True`` wherever the frame
catches the error or reads the result; measured with the case ``dict_method_keywords`` on 2.5.1-2.15.0.

Root cause: torch/_dynamo/variables/dicts.py ``ConstDictVariable.call_method`` (up to 2.14; 2.15: the
``tp_methods`` entries ``dict_get``/``dict_pop``/``dict_setdefault`` it dispatches to) reads the positional
arguments only and drops ``kwargs``; 2.15 checks the keywords against ``dict``'s flags, not
``OrderedDict``'s.

What the handler accepts: ``call_method(tx, name, args, kwargs)`` with ``name`` one of ``get``/``pop``/
``setdefault`` and at least one keyword, on a dict tracker (``ConstDictVariable`` and its subclasses: an exact
``dict``/``OrderedDict``/``defaultdict``, the storage of a dict subclass instance; ``UserDefinedDictVariable``,
2.7+) whose class's method of that name is CPython's own C method (``dict.get``/``pop``/``setdefault``,
``OrderedDict.pop``/``setdefault``: read with ``static_lookup``) and not shadowed in the instance's ``__dict__``.
It makes the same call through the method's descriptor, with ``None`` placeholders for every argument, on a new
empty instance of the class's builtin base: CPython parses the arguments before it reads them or the mapping, so a
``TypeError`` there is the user's call's ``TypeError``. For an exact ``dict`` it is raised in the trace with that
text (``d.get(...)`` and a bound ``f = d.get`` word it alike; 2.5-2.6 cannot raise it: a graph break), and for
``OrderedDict``'s own methods, whose Argument Clinic text names no class; ``dict``'s methods on any other class are
a clean graph break, since CPython words it after the class or ``dict`` depending on how the method was reached; on
2.15, whose ``tp_methods`` refuse ``dict``'s own methods' keywords, those defer. Any other outcome means the
keywords bind (only ``OrderedDict``'s ``key`` and ``default`` do): the handler passes the call on with the keywords
in their positional places, the same call for these Argument Clinic methods. Everything else defers: calls without
keywords, other methods, a class's own method.
"""

from __future__ import annotations

import collections

from ..dict_classes import builtin_base, instance_attribute, python_type
from ..dynamo_api import MISSING, bind_args, dict_methods_check_keywords, graph_break, raise_observed, static_lookup
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "dict-method-keywords"
PARAMS = ("tx", "name", "args", "kwargs")
#: The methods answered, with their parameters in positional order (CPython's Argument Clinic names).
_METHODS = {"get": ("key", "default"), "pop": ("key", "default"), "setdefault": ("key", "default")}
#: ``dict``'s own C methods of those names (no keywords), and with ``OrderedDict``'s (``key``/``default``).
_DICT_METHODS = frozenset(vars(dict)[name] for name in _METHODS)
_C_METHODS = _DICT_METHODS | frozenset(vars(collections.OrderedDict)[name] for name in _METHODS
                                       if name in vars(collections.OrderedDict))


def _probe(method, base: type, nargs: int, keywords) -> "TypeError | None":
    """The ``TypeError`` of ``method(base(), None * nargs, **{k: None})``, or None where the arguments bind.
    Called through the descriptor, as ``d.get(...)`` is (a bound ``f = od.get`` words it ``OrderedDict.get()``)."""
    try:
        method(base(), *[None] * nargs, **dict.fromkeys(keywords))
    except TypeError as error:
        return error
    except Exception:  # noqa: BLE001 - the placeholder's KeyError: the arguments were parsed
        return None
    return None


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, name, args, kwargs)`` of ``get``/``pop``/``setdefault`` with keywords."""
    bound = bind_args(args, kwargs, PARAMS)
    if bound is None:
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if name not in _METHODS or not call_kwargs:
        return DEFER
    cls = python_type(instance)
    method = static_lookup(cls, name) if cls is not None and issubclass(cls, dict) else MISSING
    if method not in _C_METHODS:
        return DEFER  # a class's own method (Dynamo inlines it) or a tracker that is not a dict
    value = getattr(instance, "value", MISSING)  # a subclass instance's tracker (2.7+): its own attribute wins
    if value is not MISSING and instance_attribute(value, name):
        return DEFER
    error = _probe(method, builtin_base(cls), len(call_args), list(call_kwargs))
    if error is not None:
        if method in _DICT_METHODS and dict_methods_check_keywords():
            return DEFER  # 2.15 refuses dict's own itself (OrderedDict's take keywords by their flags)
        effects_begin()
        context = f"{cls.__name__}.{name}() with keywords"
        if cls is not dict and method in _DICT_METHODS:
            graph_break("dict method keywords", context,
                        f"CPython raises TypeError here, worded after {cls.__name__} or dict depending on how the "
                        "method was reached (a bound method or a direct call)")
        raise_observed(TypeError, tx, context, str(error))
    params = _METHODS[name]
    positional = list(call_args) + [call_kwargs.get(p, MISSING) for p in params[len(call_args):]]
    while positional and positional[-1] is MISSING:
        positional.pop()
    if MISSING in positional or len(positional) != len(call_args) + len(call_kwargs):
        return DEFER
    return wrapped(tx, name, positional, {})


def _keywords_gate(original, handle):
    """This patch's layer on the shared dict-method gate: only ``get``/``pop``/``setdefault`` with keywords go on
    to the handler (``d.get(k)`` is common, a keyword call rare)."""

    def call_method(self, tx, name, args, kwargs):
        if not kwargs or name not in _METHODS:
            return original(self, tx, name, args, kwargs)
        return handle(self, tx, name, args, kwargs)

    return call_method


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d.get('z', default=3)` / `d.pop('a', default=3)` of a dict: **`None` / the value** instead of CPython's "
         "`TypeError` (no keyword arguments)", "2.5–2.14", ""),
        ("`od.pop('z', default=3)` / `od.setdefault('z', default=3)` / `od.pop(key='a')` of an `OrderedDict`: "
         "`KeyError`, **`None` stored**, `TypeError` (CPython binds `key`/`default` by keyword)", "2.5–2.15",
         "(`>=2.5`)"),
    ),
    fixes="keyword arguments to a dict's get/pop/setdefault are dropped (d.get('z', default=3) is None) where "
    "CPython raises TypeError, or an OrderedDict's pop/setdefault ignore their default= keyword",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method (2.15: dict_get, dict_pop, "
    "dict_setdefault)",
    mirrors="open upstream (docs/upstream/dict-method-keywords/): CPython's Argument Clinic signatures "
    "dict.get(key, default=None, /), OrderedDict.pop(key, default=<unrepresentable>)",
    torch=">=2.5",
    fixed_upstream="",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method",
               routed_gate(_call_method, method_name_gate, frozenset(_METHODS), own=_keywords_gate),
               params=PARAMS, inherited=True),
        # a dict subclass instance: 2.7-2.14 send the call on to the storage above; 2.15 answers it from the
        # tracker's own tp_methods
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method",
               routed_gate(_call_method, method_name_gate, frozenset(_METHODS), own=_keywords_gate),
               params=PARAMS, inherited=True, optional=True),
    ),
    summary="keyword arguments of a dict's get/pop/setdefault are parsed as CPython parses them",
    history=(
        ("2.5-2.14", "keywords dropped: `get`/`pop` answer as if positional-only calls had no default"),
        ("2.15", "a dict refuses them with TypeError (right); an OrderedDict's `key`/`default` keywords are "
         "dropped or refused"),
    ),
)
