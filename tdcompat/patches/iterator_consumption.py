"""An iterator that ``list()``, ``tuple()``, ``[*it]``, ``x in it`` ... consumed yields its items again (torch <2.13).

Symptom: ``it = iter(seq); list(it); list(it)`` lists the items twice where CPython's second ``list`` is empty
(also ``tuple``, ``set``, ``frozenset``, ``sorted``, ``[*it]``, ``f(*it)``, ``dict.fromkeys``, ``l.extend(it)``,
``filter``, ``zip``, ``map``, ``x in it``); ``zip(it, it)`` pairs each item with itself (2.5-2.8). ``map(f, it)`` /
``filter(f, it)`` draw ``it`` whole where they are made, so ``next(m); list(it)`` is empty (2.5-2.12). ``if it:`` is
``False`` for an exhausted iterator (2.5-2.12; CPython: an iterator is always true) and **consumes** the iterator on
2.9-2.12; ``len(it)`` is a number (CPython: ``TypeError``; 2.5-2.11, consuming it on 2.9-2.11); ``reversed(it)`` is
the reversed rest (CPython: ``TypeError``; 2.5-2.12, consuming it from 2.9). Silently wrong under
``fullgraph=True`` for every iterator Dynamo models as a list iterator: ``iter()`` of a list, tuple, range, dict or
dict view, and (2.5-2.6) a generator Dynamo ran. Measured on every release with the cases
``iterator_consumed_twice`` and ``iterator_truth`` and tests/test_iterator_consumption.py.

Root cause: torch/_dynamo/variables/lists.py ``ListIteratorVariable.unpack_var_sequence`` returns the rest without
advancing ``index`` (2.5-2.8; upstream pytorch/pytorch#156370 / #157797, 2.9: it exhausts the iterator and
``has_unpack_var_sequence`` no longer unpacks to answer); ``BuiltinVariable.call_zip`` (2.5-2.8), ``call_map`` and
``call_filter`` (2.5-2.12, variables/builtin.py) unpack an iterator argument instead of stepping it;
``ListIteratorVariable.call_method("__contains__")`` reads the rest without consuming (2.5-2.8). Truthiness:
``symbolic_convert.generic_jump`` takes ``len(value.unpack_var_sequence(tx))`` (2.5-2.12); ``len()``:
``VariableTracker.call_method("__len__")`` counts the unpacked rest; ``reversed()``: ``BuiltinVariable.call_reversed``
reverses it. 2.13 rewrote iteration on CPython's protocol (``generic_getiter``/``generic_iternext``).

What the handlers accept, on a ``ListIteratorVariable`` (or a subclass that does not answer the call itself) that the
frame may mutate (``is_mutable``): *unpacking* (2.5-2.8): the rest, and the iterator is left exhausted, with the
mutation recorded as ``next()`` records it - every caller of ``unpack_var_sequence``/``force_unpack_var_sequence`` on
an iterator is a consumer that runs it to its end in CPython (``list``, ``tuple``, ``set``, star-unpacking, ...),
truthiness excepted (below); ``has_unpack_var_sequence`` answers True without unpacking (2.9's answer). *``zip``
(2.5-2.8), ``map``, ``filter`` (2.6-2.12)*: an iterator argument is kept as the iterator (``has_unpack_var_sequence``
False during the call), which ``ZipVariable``/``MapVariable``/``FilterVariable`` step with ``next_variable`` item by
item as CPython's do (every consumer of a zip measured - ``list``, ``tuple``, ``set``, ``sorted``, ``[*z]``, ``a, b =
z`` - steps it); 2.5 filters eagerly where ``filter()`` is called: ``filter`` of an iterator graph-breaks there. *``x
in it``* (2.5-2.8): where ``x`` and every item up to the match are ``int``/``str``/``bool``/``None``/
``bytes``/non-NaN ``float`` constants (``==`` is then a pure function of their values, and identity adds nothing), the
answer, with the iterator advanced past the match (or to its end), as CPython's ``PySequence_Contains`` on an
iterator; anything else graph-breaks. *Truthiness* (2.5-2.12): when ``generic_jump`` asks (the caller's frame:
``generic_jump``'s ``inner`` in ``torch._dynamo.symbolic_convert``), a one-element list (all it reads is ``len``) and
nothing consumed: CPython finds no ``__bool__``/``__len__`` on an iterator type and answers True (checked on
``python_type()``). ``len(it)`` (2.5-2.11) and ``reversed(it)`` (2.5-2.12) graph-break: CPython raises ``TypeError``.
Everything else defers. Left as Dynamo has them (measured): ``s.isdisjoint(it)`` and ``set().union(it)`` (2.9-2.12)
read the rest without consuming it, as they did.
"""

from __future__ import annotations

import sys
import threading
from types import CodeType, FrameType
from typing import Any, Optional

from ..dynamo_api import MISSING, bind_args, graph_break, is_mutable, torch_release
from ..pure_values import hashes_by_value
from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe, method_name_gate, routed_gate

NAME = "iterator-consumption"
_state = threading.local()
_cache: dict = {}


def _unpack_consumes() -> bool:
    """2.9 on: Dynamo's own unpack exhausts a list iterator (pytorch/pytorch#156370)."""
    return torch_release() >= (2, 9)


def _list_iterator(vt: Any) -> bool:
    from torch._dynamo.variables.lists import ListIteratorVariable

    return isinstance(vt, ListIteratorVariable) and is_mutable(vt)


def _jump_inner() -> Any:
    """The code of ``symbolic_convert.generic_jump``'s nested ``inner`` (every ``POP_JUMP_IF_*`` handler runs it), or
    None. Read from ``generic_jump``'s constants: other patches wrap the jump handlers themselves."""
    found = _cache.get("jump", MISSING)
    if found is MISSING:
        from torch._dynamo import symbolic_convert

        outer = getattr(symbolic_convert, "generic_jump", None)
        codes = [c for c in getattr(getattr(outer, "__code__", None), "co_consts", ()) if isinstance(c, CodeType)]
        found = _cache["jump"] = next((c for c in codes if c.co_name == "inner"), None)
    return found


def _asked_by_jump(jump: Any) -> bool:
    """Is the caller of the wrapped ``unpack_var_sequence`` ``generic_jump``'s ``inner`` (``if it:``)? The caller is
    the first frame of torch's own code above the handler: whatever wraps Dynamo's method in between (tdcompat's
    installer, wrapt, a profiler) is not torch's. tdcompat's own frames are skipped by identity (no call)."""
    own = _cache.get("own")
    if own is None:
        from .. import installer, wrappers

        own = _cache["own"] = (vars(wrappers), vars(installer), globals())
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        if frame.f_code is jump:
            return True
        scope = frame.f_globals
        if scope is not own[0] and scope is not own[1] and scope is not own[2] and str(
                scope.get("__name__", "")).startswith("torch."):
            return False
        frame = frame.f_back
    return False


def _always_true(vt: Any) -> bool:
    try:
        cls = vt.python_type()
    except NotImplementedError:
        return False
    return not hasattr(cls, "__bool__") and not hasattr(cls, "__len__")


def _exhaust(tx: Any, it: Any, end: int) -> None:
    """Leave ``it`` at ``end`` (its length), recording the mutation as ``next()`` does."""
    if it.index < end:
        effects_begin()
        tx.output.side_effects.mutation(it)
        it.index = end


@fail_safe(NAME)
def _unpack(wrapped, instance, args, kwargs):
    """``ListIteratorVariable.unpack_var_sequence(tx)``: consumed (2.5-2.8); ``if it:`` true (2.5-2.12)."""
    bound = bind_args(args, kwargs, ("tx",))
    if bound is None or not is_mutable(instance):
        return DEFER
    jump = _jump_inner()
    if jump is None:
        return DEFER  # cannot tell `if it:` from a consumer: consume nothing
    if _asked_by_jump(jump) and _always_true(instance):
        return [instance]  # generic_jump reads len() only: an iterator is true
    if _unpack_consumes():
        return DEFER
    start = instance.index
    items = list(wrapped(*args, **kwargs))
    _exhaust(bound[0], instance, start + len(items))
    return items


@fail_safe(NAME)
def _has_unpack(wrapped, instance, args, kwargs):
    """``ListIteratorVariable.has_unpack_var_sequence(tx)``: False inside ``zip``/``map``/``filter`` so that they keep
    the iterator; elsewhere True without unpacking (2.5-2.8, where Dynamo's answer unpacks: 2.9's answer)."""
    if getattr(_state, "lazy", False) and is_mutable(instance):
        return False
    if _unpack_consumes():
        return DEFER
    return True


@fail_safe(NAME)
def _lazy(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_zip(tx, *its)`` (2.5-2.8) / ``call_map(tx, fn, *its)`` / ``call_filter(tx, fn, it)``
    with an iterator argument."""
    if not any(_list_iterator(arg) for arg in args[1:]):
        return DEFER
    return _stepping(wrapped, args, kwargs)


def _stepping(wrapped, args, kwargs):
    """Dynamo's call, with its iterator arguments kept as iterators (``has_unpack_var_sequence`` False)."""
    effects_begin()
    _state.lazy = True
    try:
        return wrapped(*args, **kwargs)
    finally:
        _state.lazy = False


@fail_safe(NAME)
def _filter(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_filter(tx, fn, it)``: stepped where ``FilterVariable`` can (2.6 on); 2.5 filters the
    whole iterator where ``filter()`` is called, which cannot leave it where CPython's lazy filter does: a break."""
    bound = bind_args(args, kwargs, ("tx", "fn", "seq"))
    if bound is None or not _list_iterator(bound[2]):
        return DEFER
    if not _lazy_filter():
        graph_break("filter() of an iterator", f"filter({bound[1]}, {bound[2]})",
                    "this Dynamo filters eagerly; CPython's filter draws from the iterator as it is stepped")
    return _stepping(wrapped, args, kwargs)


def _plain(vt: Any) -> bool:
    """A constant ``int``/``str``/``bool``/``None``/``bytes``/non-NaN ``float``: ``==`` a pure function of the value."""
    if not vt.is_python_constant():
        return False
    value = vt.as_python_constant()
    return type(value) not in (tuple, frozenset) and hashes_by_value(value)


@fail_safe(NAME)
def _call_method(wrapped, instance, args, kwargs):
    """``ListIteratorVariable.call_method(tx, "__contains__" | "__len__", args, kwargs)``."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or not is_mutable(instance):
        return DEFER
    tx, name, call_args, call_kwargs = bound
    if call_kwargs:
        return DEFER
    if name == "__len__" and not call_args and torch_release() < (2, 12):
        graph_break("len() of an iterator", f"len({instance})", "CPython raises TypeError: an iterator has no len()")
    if name != "__contains__" or len(call_args) != 1 or _unpack_consumes():
        return DEFER
    from torch._dynamo.variables import ConstantVariable

    needle = call_args[0]

    def refuse():
        graph_break("x in iterator", f"{needle} in {instance}", "the match decides how far CPython consumes it")

    if not _plain(needle):
        refuse()
    read, found = 0, False
    for item in instance.items[instance.index:]:  # CPython reads up to the match, or to the end
        read += 1
        if not _plain(item):
            refuse()
        if item.as_python_constant() == needle.as_python_constant():
            found = True
            break
    _exhaust(tx, instance, instance.index + read)
    return ConstantVariable.create(found)


@fail_safe(NAME)
def _reversed(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_reversed(tx, obj)`` of an iterator: a graph break."""
    bound = bind_args(args, kwargs, ("tx", "obj"))
    if bound is None or not _list_iterator(bound[1]):
        return DEFER
    try:
        cls = bound[1].python_type()
    except NotImplementedError:
        return DEFER
    if hasattr(cls, "__reversed__") or hasattr(cls, "__len__"):
        return DEFER
    graph_break("reversed() of an iterator", f"reversed({bound[1]})",
                "CPython raises TypeError: an iterator is not reversible")


def _lazy_filter() -> bool:
    """``filter`` is an iterator tracker that can step another (``FilterVariable``, 2.6 on; 2.5 filters eagerly)."""
    from torch._dynamo.variables import iter as iter_variables

    return hasattr(iter_variables, "FilterVariable")


def _before_2_9() -> bool:
    """Dynamo's unpack of a list iterator does not consume it (2.5-2.8)."""
    return not _unpack_consumes()


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`list(it)` / `tuple(it)` / `[*it]` / `zip(it, it)` / `x in it` do not consume an iterator: "
         "**its items again** after it", "2.5–2.8", "(`<2.9`)"),
        ("`if it:` of an exhausted iterator **`False`** (2.9–2.12: `if it:` **consumes it**); `len(it)` a number, "
         "`reversed(it)` the reversed rest, where CPython raises `TypeError`", "2.5–2.12", "(`<2.13`): `len`/"
         "`reversed` a graph break"),
    ),
    fixes="an iterator consumed by list()/tuple()/zip()/`in` yields its items again; `if it:` is False when "
    "exhausted and consumes it (2.9-2.12); len(it)/reversed(it) answer where CPython raises TypeError",
    upstream="torch/_dynamo/variables/lists.py: ListIteratorVariable.unpack_var_sequence, "
    "has_unpack_var_sequence, call_method; torch/_dynamo/variables/builtin.py: BuiltinVariable.call_zip, "
    "call_map, call_filter, call_reversed; torch/_dynamo/symbolic_convert.py: generic_jump",
    mirrors="pytorch/pytorch#156370 / #157797 ([iter] exhaust ListIterator when unpack_var_sequence is called, 2.9); "
    "2.13's generic_getiter / generic_iternext",
    torch="<2.13",
    fixed_upstream="2.13: iteration on CPython's protocol (generic_getiter), measured",
    targets=(
        Target("torch._dynamo.variables.lists", "ListIteratorVariable", "unpack_var_sequence", _unpack,
               params=("tx",)),
        Target("torch._dynamo.variables.lists", "ListIteratorVariable", "has_unpack_var_sequence", _has_unpack,
               params=("tx",), inherited=True),
        Target("torch._dynamo.variables.lists", "ListIteratorVariable", "call_method",
               routed_gate(_call_method, method_name_gate, frozenset({"__contains__", "__len__"})),
               params=("tx", "name", "args", "kwargs"), inherited=True),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_zip", _lazy, params=("tx",),
               when=_before_2_9),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_map", _lazy, params=("tx", "fn")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_filter", _filter,
               params=("tx", "fn", "seq")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_reversed", _reversed,
               params=("tx", "obj")),
    ),
    summary="an iterator consumed by list()/tuple()/zip()/in is exhausted; `if it:` is true and consumes nothing",
    history=(
        ("2.5-2.8", "unpacking a list iterator does not advance it; zip/map copy it; `in` does not consume; "
         "`if it:` is len(rest) > 0; len(it) counts the rest; reversed(it) the reversed rest (2.5-2.6: in some frames "
         "TypeError, as CPython)"),
        ("2.9-2.11", "unpacking exhausts it (pytorch/pytorch#156370), so `if it:`, len(it) and reversed(it) "
         "consume it"),
        ("2.12", "as 2.9 but len(it) raises TypeError"),
        ("2.13+", "right (generic_getiter)"),
    ),
)
