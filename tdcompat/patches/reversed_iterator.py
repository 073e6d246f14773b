"""``reversed(seq)`` is a tuple, not an iterator (torch 2.5-2.12), nor lazy (2.13-2.14).

Symptom: ``it = reversed(l); a = next(it); b = next(it)`` gives ``a == b`` (the first item
twice); ``next(it)`` then ``list(it)`` lists every item again; ``list(it)`` twice gives the
items twice, where CPython's second is empty; ``return reversed(l)`` hands the caller a
*tuple*. Plain ``for v in reversed(l)`` is right. Found by the differential fuzzer's Enum
family on 2.12.1 (an Enum metaclass whose ``__iter__`` returns ``reversed([...])``,
returned from the frame: a tuple where CPython's iterator had advanced). Silently wrong on
2.5.1-2.12.1 (measured on each).

Root cause: ``BuiltinVariable.call_reversed`` (torch/_dynamo/variables/builtin.py) returns
``TupleVariable(list(reversed(items)))``; ``call_next`` on a tuple tracker falls back to
``items[0]`` without consuming. Upstream: pytorch/pytorch#152262, fixed by #185629 /
#183077 (2.13: a ``ListIteratorVariable``) and #185179 (2.15: CPython's
``builtin_reversed_impl``, a lazy reverse sequence iterator).

Accepted: ``reversed(x)`` with one argument where ``x``'s tracker is exactly a
``ListVariable``, ``TupleVariable`` or ``RangeVariable``, whose types do not define
``__reversed__`` beyond the C one CPython uses (``list_reverseiterator`` for a list,
``reversed`` over ``__len__``/``__getitem__`` for a tuple, ``range_iterator`` for a range).
The result is an iterator tracker that does what those C iterators do, step for step: it
starts at index ``len(x) - 1``, and each step reads ``x[index]`` from the list as the frame
sees it *then* (a list's tracker holds its items as mutated so far), stopping for good once
``index`` leaves ``[0, len(x))``. ``python_type()`` is CPython's iterator type. Reading
nothing else, it needs no guard beyond what reading the sequence already installed.
On 2.5-2.12 anything that would rebuild the iterator outside the frame (returned, stored,
alive at a graph break) graph-breaks: a rebuilt copy would no longer read the list. Every other
argument (dicts, strings, user sequences, ``__reversed__`` of a class): Dynamo's own, except
``reversed(E)`` of an Enum class whose metaclass has an ``__iter__`` or ``__reversed__`` of its
own, which graph-breaks: Dynamo reverses what ``__iter__`` yields where CPython runs
``__reversed__`` (2.12.1: ``RevMeta.__iter__`` iterating backwards gave the members forwards;
right from 2.13).

On 2.13-2.14 Dynamo's own answer is a ``ListIteratorVariable`` over a snapshot: consumed
right, but ``type(it)`` is ``list_iterator`` and ``l[0] = 7`` after ``it = reversed(l)`` is
not seen; there the iterator is rebuilt outside the frame as Dynamo rebuilds its own (an
iterator over the items still to come, read when rebuilt), so no graph Dynamo compiles
today is lost. Costs on 2.5-2.12: ``x in it`` graph-breaks (it was wrong), and on 2.5
``max``/``min`` of a reversed list of constants graph-breaks (2.5 only folds them as
constants, which would not consume the iterator).
"""

from __future__ import annotations

import functools

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "reversed-iterator"

_kinds: tuple = ()  # (ListVariable, TupleVariable, RangeVariable, the class trackers), once loaded
_ITERATOR: list = []


def _load_kinds() -> tuple:
    global _kinds
    from torch._dynamo import variables
    from torch._dynamo.variables import user_defined

    # the sequences it models, then the class trackers (2.11: UserDefinedEnumClassVariable too)
    _kinds = (variables.ListVariable, variables.TupleVariable, variables.RangeVariable,
              user_defined.UserDefinedClassVariable,
              *[k for k in (getattr(user_defined, "UserDefinedEnumClassVariable", None),) if k is not None])
    return _kinds


@functools.lru_cache(maxsize=None)
def _tuple_era() -> bool:
    """torch <2.13, where Dynamo's ``reversed()`` is a tuple (2.13 made it an iterator)."""
    from ..dynamo_api import torch_release

    return torch_release() < (2, 13)


def _reversed_enum_class(obj):
    """``reversed(E)`` of an Enum class: CPython runs ``type(E).__reversed__``; Dynamo reverses
    what iterating ``E`` gives (2.12: through ``type(E).__iter__``). Those agree when the
    metaclass leaves both to ``enum.EnumMeta`` (both walk ``_member_names_``): Dynamo's then.
    A metaclass with its own ``__iter__`` or ``__reversed__`` (one that iterates backwards
    inherits a ``__reversed__`` that does not): graph break. Any other class: Dynamo's."""
    import enum

    from ..dynamo_api import graph_break, static_lookup

    cls = getattr(obj, "value", None)
    if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
        return DEFER
    meta = type(cls)
    if all(static_lookup(meta, name) is static_lookup(enum.EnumMeta, name) for name in ("__iter__", "__reversed__")):
        return DEFER
    graph_break("reversed() of an Enum class with a metaclass protocol of its own", repr(cls),
                "CPython runs type(E).__reversed__; Dynamo reverses what type(E).__iter__ yields")


def _iterator_type():
    """CPython's reverse iterator over a sequence tracker, as a ``ListIteratorVariable``
    subclass (so Dynamo's ``FOR_ITER``, ``next``, ``zip``, ``list`` treat it as an iterator).
    ``items``/``index`` of the base stay empty: every read goes through ``seq``."""
    if _ITERATOR:
        return _ITERATOR[0]
    from torch._dynamo.variables import ListIteratorVariable

    from ..dynamo_api import graph_break, raise_observed

    class ReversedIteratorVariable(ListIteratorVariable):
        _nonvar_fields = {"pos", "rtype", *ListIteratorVariable._nonvar_fields}

        def __init__(self, items=None, index=0, seq=None, pos=-1, rtype=None, **kwargs):
            super().__init__([] if items is None else items, index, **kwargs)
            self.seq = seq  # the list/tuple tracker, or a list of range items
            self.pos = pos
            self.rtype = rtype

        def _items(self):
            return self.seq if isinstance(self.seq, list) else self.seq.items

        def _step(self, tx):
            items = self._items()
            if 0 <= self.pos < len(items):
                tx.output.side_effects.mutation(self)
                self.pos -= 1
                return items[self.pos + 1]
            if self.pos != -1:
                tx.output.side_effects.mutation(self)
                self.pos = -1  # exhausted for good, as CPython's (it drops the sequence)
            return None

        def next_variable(self, tx):
            item = self._step(tx)
            if item is None:
                raise_observed(StopIteration, tx, "reversed")
            return item

        def has_unpack_var_sequence(self, tx):
            return True

        def unpack_var_sequence(self, tx):
            out = []
            while (item := self._step(tx)) is not None:
                out.append(item)
            return out

        def force_unpack_var_sequence(self, tx):
            return self.unpack_var_sequence(tx)

        def python_type(self):
            return self.rtype

        def as_python_constant(self):
            raise NotImplementedError

        def call_method(self, tx, name, args, kwargs):
            if name == "__next__" and not args and not kwargs:
                return self.next_variable(tx)
            if name == "__iter__" and not args and not kwargs:
                return self
            graph_break("reversed() iterator method", name,
                        "tdcompat models reversed() over a list, tuple or range for iteration only")

        def tp_iternext_impl(self, tx):  # 2.13+: the object protocol's tp_iternext
            return self.next_variable(tx)

        def reconstruct(self, codegen):
            if _tuple_era():
                graph_break("reversed() iterator outlives the frame", repr(self),
                            "CPython's reads the sequence lazily; a rebuilt copy would not")
            # 2.13-2.14: what Dynamo itself rebuilds there, an iterator over the items still to come
            # (read now, as CPython's would yield them from here), so nothing it rebuilds changes
            from torch._dynamo.bytecode_transformation import create_instruction

            items = self._items()
            rest = items[self.pos::-1] if 0 <= self.pos < len(items) else []
            codegen.foreach(rest)
            codegen.extend_output([create_instruction("BUILD_TUPLE", arg=len(rest)),
                                   create_instruction("GET_ITER")])

        def __repr__(self):
            return f"ReversedIteratorVariable(pos={self.pos})"

    _ITERATOR.append(ReversedIteratorVariable)
    return ReversedIteratorVariable


def _reverse_iterator(tx, obj):
    from torch._dynamo import variables

    from ..dynamo_api import new_object_kwargs

    kind = type(obj)
    if kind in (_kinds or _load_kinds())[3:]:
        return _reversed_enum_class(obj) if _tuple_era() else DEFER
    if kind is variables.ListVariable:
        seq, rtype = obj, type(reversed([]))
    elif kind is variables.TupleVariable:
        seq, rtype = obj, type(reversed(()))
    elif kind is variables.RangeVariable:
        seq, rtype = list(obj.unpack_var_sequence(tx)), type(reversed(range(0)))
    else:
        return DEFER
    items = seq if isinstance(seq, list) else seq.items
    if type(items) is not list or obj.python_type() not in (list, tuple, range):
        return DEFER  # a subclass (its own __reversed__, __getitem__ or __len__)
    return _iterator_type()(seq=seq, pos=len(items) - 1, rtype=rtype, **new_object_kwargs())


@fail_safe(NAME)
def _call_reversed(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_reversed(tx, obj)``: ``reversed(x)`` of a list, tuple or range."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, obj = args
    return _reverse_iterator(tx, obj)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`it = reversed(l); next(it); next(it)` gives **the first item twice**, `list(it)` after '
             "`next(it)` lists every item again, `return reversed(l)` returns a **tuple** (Dynamo's "
             '`reversed()` is a tuple that `next()` never consumes); 2.13–2.14: a write to `l` after '
             '`reversed(l)` is not seen, `type(it)` is `list_iterator`',
         '2.5–2.14',
         '(`<2.15`)'),
    ),
    fixes="reversed(list/tuple/range) is a tuple in compiled code: next() does not consume it, it is "
    "returned as a tuple, list(it) twice repeats it (torch <2.13); it is a list_iterator that does not see "
    "the list's later writes (2.13-2.14)",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_reversed (returns a TupleVariable; "
    "pytorch/pytorch#152262)",
    mirrors="pytorch/pytorch#185179 (torch 2.15: call_reversed mirrors CPython's builtin_reversed_impl, a lazy "
    "reverse sequence iterator); #185629/#183077 (2.13: a ListIteratorVariable)",
    torch="<2.15",
    fixed_upstream="2.15: call_reversed mirrors CPython's builtin_reversed_impl (#185179; 2.13's #185629 made it "
    "a ListIteratorVariable)",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_reversed", _call_reversed,
               params=("tx", "obj")),
    ),
    requires=(
        "torch._dynamo.variables:ListIteratorVariable",
        "torch._dynamo.variables:ListVariable",
        "torch._dynamo.variables:TupleVariable",
        "torch._dynamo.variables:RangeVariable",
    ),
    summary="reversed() of a list, tuple or range is CPython's lazy reverse iterator (consumed by next(), "
    "its own type; rebuilt outside the frame: graph break)",
    history=(
        ("2.5-2.12",
         "`reversed(x)` is `TupleVariable(reversed(items))`: `next(it)` returns the first item without "
         "consuming it (twice: the same item), `list(it)` after `next(it)` or a second `list(it)` lists every "
         "item again, `return reversed(l)` returns a tuple (silently wrong); `for v in reversed(l)` is right"),
        ("2.13-2.14",
         "a `ListIteratorVariable` over a snapshot, consumed right; `type(it)` is `list_iterator` and "
         "`l[0] = 7` after `it = reversed(l)` is not seen (silently wrong)"),
        ("2.15+", "CPython's `builtin_reversed_impl` (#185179)"),
    ),
)
