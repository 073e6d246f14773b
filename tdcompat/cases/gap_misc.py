"""Failures of the documented tensordict cells outside the three main gaps, in plain Python.

* ``weakref-reconstruct``: a ``weakref.ref`` made in the compiled region that
  leaves it (stored on an object, returned). tensordict 0.7 does exactly this:
  ``out._last_op = (name, (args, kwargs, weakref.ref(self)))``.
* ``reversed-iterator``: ``reversed(l)`` consumed with ``next()``, listed twice, returned
  (a tuple that ``next()`` never consumes on 2.5-2.12).
* ``skipped-module-init``: an ``nn.Module`` built in the compiled region by a class
  whose ``__init__`` calls ``nn.Module.__init__(self)`` explicitly, as
  ``TensorDictParams.__init__`` does in tensordict 0.8-0.14 (reached from
  ``to_module`` via ``copy()`` -> ``_new_unsafe``).
* ``object-str-repr``: ``str(o)`` of an object whose class defines only ``__repr__``, after the frame
  rewrote what that repr reads (folded from the real object while tracing on 2.5-2.13).
"""

from __future__ import annotations

import functools
import weakref

import torch
from torch import nn

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, CaseList, Expect, vary

WEAKREF = ("weakref-reconstruct",)
REVERSED = ("reversed-iterator",)
#: Measured without tdcompat: wrong on 2.5.1-2.12.1 (a tuple; next() returns its first item
#: without consuming it), right from 2.13.0.
REVERSED_TUPLE = (Expect("<2.13", WRONG_RESULT),)
#: 2.13-2.14 iterate a snapshot of the list (a later write is not seen) of type list_iterator.
REVERSED_SNAPSHOT = (Expect("<2.15", WRONG_RESULT),)
MODULE_INIT = ("skipped-module-init",)

#: Measured without tdcompat: 2.5.1 cannot call weakref.ref in the compiled region
#: (``unsupported builtin None.ReferenceType.__new__``); 2.6.0 cannot rebuild it
#: (``reconstruct: WeakRefVariable()``); 2.7.1 on: ok.
WEAKREF_ESCAPES = (Expect("<2.7", GRAPH_BREAK),)
#: ``patched_init`` is skipped on every release measured (2.5.1 ... 2.15.0).
MODULE_INIT_SKIPPED = (Expect(">=2.5", GRAPH_BREAK),)


class Node:
    """A plain object that can be weakly referenced."""

    def __init__(self, value):
        self.value = value


class Holder:
    """Receives what the compiled function stores."""

    def __init__(self, node):
        self.node = node
        self.refs = []


def _node_inputs():
    node = Node(torch.randn(3))
    return torch.randn(3), Holder(node), node


def weakref_stored(x, holder, node):
    holder.ref = weakref.ref(node)
    return x + node.value


def weakref_last_op(x, holder, node):
    # tensordict 0.7: out._last_op = (func.__name__, (args, kwargs, weakref.ref(self)))
    holder.last_op = ("to_module", ((x,), {}, weakref.ref(node)))
    return x * 2


def weakref_in_list(x, holder, node):
    holder.refs = holder.refs + [weakref.ref(node), weakref.ref(holder)]
    return x - 1


def weakref_returned(x, holder, node):
    return x + 1, weakref.ref(node)


def weakref_new_referent(x, holder, node):
    made = Node(x * 3)
    holder.made = made
    holder.ref = weakref.ref(made)
    return x + holder.ref().value


def _note_death(ref):
    pass


def weakref_with_callback(x, holder, node):
    holder.ref = weakref.ref(node, _note_death)
    return x + 1


def weakref_called_in_frame(x, holder, node):
    ref = weakref.ref(node)
    return x + ref().value


class ExplicitInit(nn.Module):
    """``nn.Module.__init__(self)`` called explicitly, as TensorDictParams 0.8-0.14 does."""

    def __init__(self, weight, scale=2.0):
        nn.Module.__init__(self)
        self.weight = weight
        self.scale = scale


class ParamsLike(nn.Module):
    """The shape of tensordict 0.14's ``TensorDictParams``: ``copy()`` goes through a
    ``_new_unsafe`` classmethod that builds a new instance with ``__init__``."""

    def __init__(self, weight, *, no_convert=False):
        nn.Module.__init__(self)
        self.no_convert = no_convert
        self.weight = weight if no_convert == "skip" else nn.Parameter(weight)

    @classmethod
    def _new_unsafe(cls, weight):
        # tensordict: `if is_compiling(): return TensorDictParams(parameters, no_convert="skip", ...)`
        return ParamsLike(weight, no_convert="skip")

    def copy(self):
        return ParamsLike._new_unsafe(self.weight)


class SuperInit(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight


def _module_inputs():
    return torch.randn(3), nn.Parameter(torch.randn(3)), []


def _params_like_inputs():
    return torch.randn(3), None, [ParamsLike(torch.randn(3))]


def module_made_in_frame(x, weight, out):
    m = ExplicitInit(weight)
    return x * m.scale + m.weight


def module_made_and_kept(x, weight, out):
    m = ExplicitInit(weight, scale=3.0)
    out.append(m)
    return x + m.weight


def module_copy_new_unsafe(x, _, out):
    swap = out[0].copy()
    out.append(swap)
    return x * swap.weight


def module_super_init_control(x, weight, out):
    m = SuperInit(weight)
    out.append(m)
    return x + m.weight


class Seq:
    """An int that changes between calls and a list built from it."""

    def __init__(self, n):
        self.n = n
        self.items = [n, n + 1, 2 * n]


def _seq_inputs():
    return Seq(3), torch.randn(3)


def _seq_vary(args):
    vary(args)
    args[0].items.append(args[0].n)


def reversed_consumed(o, x):
    """``next()`` twice, then ``list()`` twice, of ``reversed()`` of a list made in the frame."""
    it = reversed([o.n, o.n + 1, 2 * o.n])
    a = next(it)
    b = next(it)
    rest = list(it)
    again = list(it)
    return x * a + b, rest, again


def reversed_of_input_list(o, x):
    """``reversed()`` of an input's list: consumed by ``next()`` and a loop, its rest stored."""
    it = reversed(o.items)
    first = next(it)
    o.rest = [v for v in it]
    return x + first, list(it)


def reversed_range_and_tuple(o, x):
    """``reversed(range(n))`` and ``reversed(tuple)`` after ``next()``, zipped and listed."""
    r = reversed(range(o.n))
    t = reversed((o.n, 2, "s"))
    next(r)
    u = next(t)
    return list(zip(r, t)), list(r), x * len(str(u))


def reversed_reads_lazily(o, x):
    """A write to the list after ``reversed(l)`` shows in what it yields; its type is CPython's."""
    items = list(o.items)
    it = reversed(items)
    items[0] = o.n * 10
    items.append(x)
    return list(it), type(it).__name__, x + items[0]


CASES = CaseList()
CASES.add(
    Case("reversed_reads_list_lazily", REVERSED, reversed_reads_lazily, _seq_inputs, vary=_seq_vary,
         unpatched=REVERSED_SNAPSHOT,
         doc="`it = reversed(l); l[0] = 10 * n; l.append(x); list(it)`: the write shows, the append does not; "
             "`type(it)` is `list_reverseiterator` (a tuple on 2.5-2.12, a snapshot list_iterator on 2.13-2.14)"),
    Case("reversed_next_consumes", REVERSED, reversed_consumed, _seq_inputs, unpatched=REVERSED_TUPLE,
         doc="`it = reversed(l); next(it); next(it); list(it); list(it)`: the first item twice and every item "
             "again on 2.5-2.12"),
    Case("reversed_input_list_consumed", REVERSED, reversed_of_input_list, _seq_inputs, vary=_seq_vary,
         unpatched=REVERSED_TUPLE,
         doc="`next(reversed(o.items))`, then the rest in a loop, stored on the input"),
    Case("reversed_range_and_tuple", REVERSED, reversed_range_and_tuple, _seq_inputs, unpatched=REVERSED_TUPLE,
         doc="`reversed(range(n))`, `reversed((n, 2, 's'))` after `next()`: zipped, listed"),
    Case("misc_weakref_stored", WEAKREF, weakref_stored, _node_inputs, unpatched=WEAKREF_ESCAPES,
         doc="holder.ref = weakref.ref(node) in the compiled region"),
    Case("misc_weakref_last_op", WEAKREF, weakref_last_op, _node_inputs, unpatched=WEAKREF_ESCAPES,
         doc="tensordict 0.7's _last_op tuple holding weakref.ref(self)"),
    Case("misc_weakref_in_list", WEAKREF, weakref_in_list, _node_inputs, unpatched=WEAKREF_ESCAPES,
         doc="weak references in a list stored on an input"),
    Case("misc_weakref_returned", WEAKREF, weakref_returned, _node_inputs, unpatched=WEAKREF_ESCAPES,
         doc="a weak reference made in the compiled region is returned"),
    Case("misc_weakref_new_referent", WEAKREF, weakref_new_referent, _node_inputs, unpatched=WEAKREF_ESCAPES,
         doc="weak reference to an object made in the compiled region, both stored"),
    Case("misc_weakref_callback", WEAKREF, weakref_with_callback, _node_inputs,
         unpatched=WEAKREF_ESCAPES + (Expect("==2.7.*", WRONG_RESULT),),
         doc="weakref.ref(node, callback) stored (2.6 drops the callback at the call)"),
    Case("misc_weakref_called_in_frame", WEAKREF, weakref_called_in_frame, _node_inputs,
         unpatched=(Expect("<2.6", GRAPH_BREAK),),
         doc="weakref.ref(node)() without escaping: only 2.5 cannot make the reference"),
    Case("misc_module_init_in_frame", MODULE_INIT, module_made_in_frame, _module_inputs,
         unpatched=MODULE_INIT_SKIPPED, doc="nn.Module.__init__(self) in a module built in the compiled region"),
    Case("misc_module_init_kept", MODULE_INIT, module_made_and_kept, _module_inputs,
         unpatched=MODULE_INIT_SKIPPED, doc="the module built with nn.Module.__init__(self) leaves the region"),
    Case("misc_module_init_new_unsafe", MODULE_INIT, module_copy_new_unsafe, _params_like_inputs,
         unpatched=MODULE_INIT_SKIPPED, doc="tensordict 0.14's copy() -> _new_unsafe -> __init__ shape"),
    Case("misc_module_init_super_control", (), module_super_init_control, _module_inputs,
         doc="control: super().__init__() is traced natively on every release"),
)


# -- type() of a parameter made in the region (synthetic-type; issue 11, fuzzer seeds 5, 85, ...) --
def type_of_new_parameter(x):
    p = nn.Parameter(x * 2)
    return type(p) is nn.Parameter, type(p).__name__, p + 1


def tensordict_params_in_region(x):
    """TensorDictParams built in the region: its __init__ checks type() of the parameters it makes."""
    from tensordict import TensorDict
    from tensordict.nn import TensorDictParams

    params = TensorDictParams(TensorDict({"w": x + 1, "k": x * 3}, batch_size=[]))
    return params["w"] * 2, type(params["k"]).__name__


# 2.9 on: nn.Parameter() in the region is a graph break under fullgraph, with tdcompat too.
CASES.add(
    Case("misc_type_of_new_parameter", ("synthetic-type",), type_of_new_parameter, lambda: (torch.randn(3),),
         unpatched=(Expect("<2.9", GRAPH_BREAK),), torch="<2.9",
         doc="type(p) of nn.Parameter(t) made in the region (InternalTorchDynamoError: SYNTHETIC_LOCAL)"),
    Case("misc_tensordict_params_in_region", ("synthetic-type",), tensordict_params_in_region,
         lambda: (torch.randn(3),), unpatched=(Expect("<2.9", GRAPH_BREAK),), torch="<2.9", needs_tensordict=True,
         doc="TensorDictParams(TensorDict(...)) built in the region"),
)


# -- a weak reference read from an input is rebuilt from its own source (weakref-input-source) -------
WEAKREF_INPUT = ("weakref-input-source",)
#: Measured without tdcompat: 2.8.0-2.15.0 hand back the referent; 2.5.1-2.7.1 the weak reference.
WEAKREF_INPUT_WRONG = (Expect(">=2.8", WRONG_RESULT),)


def _held_refs():
    """A holder with a weak reference (with a callback) and a list of them, made before the call."""
    x, holder, node = _node_inputs()
    holder.ref = weakref.ref(node, _note_death)
    holder.refs = [weakref.ref(node), weakref.ref(holder)]
    return x, holder, node


def weakref_input_returned(x, holder, node):
    return x + 1, holder.ref


def weakref_input_list_grown(x, holder, node):
    # a new list stored: each weak reference looked at (so not a lazy tracker) is rebuilt
    holder.refs = [r for r in holder.refs if r is not None] + [x * 2]
    return x - 1


def weakref_input_called(x, holder, node):
    """Control: the referent read through the weak reference (``WeakRefCallSource``)."""
    return x + holder.ref().value, holder.ref() is node


CASES.add(
    Case("misc_weakref_input_returned", WEAKREF_INPUT, weakref_input_returned, _held_refs,
         unpatched=WEAKREF_INPUT_WRONG, doc="return holder.ref: a weak reference made before the call"),
    Case("misc_weakref_input_list_grown", WEAKREF_INPUT, weakref_input_list_grown, _held_refs,
         unpatched=WEAKREF_INPUT_WRONG,
         doc="holder.refs = [r for r in holder.refs if r is not None] + [...]: weak references passed in, stored"),
    Case("misc_weakref_input_called", (), weakref_input_called, _held_refs,
         doc="control: holder.ref() read in the frame is the referent on every release"),
)


SEQUENCE_IDENTITY = ("sequence-compare-identity",)


class _Pair:
    def __init__(self, a):
        self.a = a


def _pair():
    return torch.randn(3), _Pair(2)


def sequence_nan_item(x, o):
    """One NaN in two places of a list or tuple: CPython compares an item with itself by identity."""
    n = float("nan")
    h = (o.a, n)
    return x + (h == h), h != h, [n, o.a] < [n, o.a + 1], n in [1, "s", n], n not in (o.a, n)


def sequence_tensor_item(x, o):
    """A tensor that is the same item on both sides is skipped, as CPython skips it: no tensor compare."""
    return x * ((x, o.a) == (x, o.a + 1)), [o.a, x] <= [o.a, x], (x, o.a) != (x, o.a)


CASES.add(
    Case("sequence_nan_item_identity", SEQUENCE_IDENTITY, sequence_nan_item, _pair,
         unpatched=(Expect("<2.13", WRONG_RESULT),),
         doc="`h == h` of a tuple holding a NaN, `n in [1, 's', n]`: True in eager, False traced (2.5-2.12)"),
    Case("sequence_tensor_item_identity", SEQUENCE_IDENTITY, sequence_tensor_item, _pair,
         unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="`(x, 1) == (x, 2)` of one tensor x: a data-dependent graph break traced (2.5-2.12)"),
)


def _use(a, b=None):
    return a


def sequence_partial_contains(x, o):
    """A ``functools.partial`` made in the frame, looked for in sequences that hold it."""
    h = functools.partial(_use, o.a)
    return x * h(), h in (1, "s", h), h in [o.a, h], h not in [h]


CASES.add(
    Case("sequence_partial_contains_identity", ("sequence-contains-identity",), sequence_partial_contains, _pair,
         unpatched=(Expect(">=2.13", WRONG_RESULT),), torch=">=2.13",
         doc="`h in (1, 's', h)` of a functools.partial made in the frame: True in eager, False traced (2.13+)"),
    Case("sequence_partial_contains_compare", SEQUENCE_IDENTITY, sequence_partial_contains, _pair,
         unpatched=(Expect(">=2.7,<2.13", WRONG_RESULT),), torch=">=2.7,<2.13",
         doc="the same before 2.13, answered by sequence-compare-identity's containment rule (2.5-2.6: a graph "
             "break with tdcompat, `in` compares through `operator.eq` there)"),
)


SYMBOOL = ("symbool-sym-float",)


def tensor_times_comparison(x, o):
    """A comparison of an int that the second call makes dynamic, used as a tensor scalar."""
    return x * (o.a == 2), x + (o.a < 3), (o.a != o.a + 1) * x


CASES.add(
    Case("tensor_times_symbolic_bool", SYMBOOL, tensor_times_comparison, _pair,
         unpatched=(Expect("<2.10", GRAPH_BREAK, detail=r"SymBool|TorchRuntimeError|fake tensors"),),
         doc="`x * (o.a == 2)` once o.a is dynamic: float() of a SymBool raised TorchRuntimeError (2.5-2.9)"),
)


def sequence_list_identity(x, o):
    """``a is b`` of two lists built in the frame with equal items: two objects (2.5-2.6 said one)."""
    a, b = ["s", 1], ["s", 1]
    held = [a]
    return x + (a is b) + o.a, a is not b, held[0] is a, ["t"] is ["t"]  # noqa: F632 - identity is the point


CASES.add(
    Case("sequence_list_identity", SEQUENCE_IDENTITY, sequence_list_identity, _pair,
         unpatched=(Expect("<2.7", WRONG_RESULT),),
         doc="`[1] is [1]` True traced on 2.5-2.6 (lists compared under `is` item by item)"),
)


# -- function-dict: a function's __dict__ is its own dict (2.5-2.11: the getset descriptor every function shares)


def _functions_with_attrs():
    """Two functions passed in, each with an attribute of its own (``vary`` changes them)."""

    def first():
        return 1

    def second():
        return 2

    first.tag = 1
    second.tag = 2
    return torch.randn(3), first, second


def function_dict_identity(x, f, g):
    """``f.__dict__`` is ``f``'s own dict, a ``dict`` (two distinct dict trackers are not compared with
    ``is``: Dynamo 2.5-2.11 cannot, with or without tdcompat)."""
    return x + 1, type(f.__dict__) is dict, f.__dict__ is f.__dict__, isinstance(g.__dict__, dict)


CASES.add(
    Case("misc_function_dict_identity", ("function-dict",), function_dict_identity, _functions_with_attrs,
         unpatched=(Expect("<2.12", WRONG_RESULT),),
         doc="`type(f.__dict__) is dict` False for a function passed in (2.5-2.11: Dynamo answers with the "
             "getset descriptor every function shares; tests/test_function_dict_model.py has the rest)"),
)


# -- iterator-consumption: an iterator consumed by a builtin is exhausted; `if it:` is true --

ITERATORS = ("iterator-consumption",)


def iterator_consumed_twice(o, x):
    """``list(it)``, ``[*it]``, ``zip(it, it)``, ``x in it`` of iterators made in the frame, each read again."""
    n = o.n
    it = iter({"a": 1, "b": n, "c": 3}.values())
    first = next(it)
    rest, again = list(it), [*it]
    pairs_of = iter([1, 2, n, 4, 5])
    pairs = list(zip(pairs_of, pairs_of))
    found = iter([1, 2, 3, n])
    return x * first + len(rest), rest, again, pairs, list(pairs_of), (2 in found), list(found)


def iterator_truth(o, x):
    """``if it:`` of an exhausted iterator (CPython: true) and of one with items left (not consumed by the test)."""
    n = o.n
    done = iter([1, n])
    list(done)
    left = iter([x, n, 3])
    next(left)
    y = x * 2 if left else x
    return (y + 1 if done else y - 1), list(left), list(done)


CASES.add(
    Case("iterator_consumed_twice", ITERATORS, iterator_consumed_twice, _seq_inputs,
         unpatched=(Expect("<2.9", WRONG_RESULT),),
         doc="`list(it)` then `[*it]`, `zip(it, it)`, `2 in it` then `list(it)`: the items again on 2.5-2.8"),
    Case("iterator_truth", ITERATORS, iterator_truth, _seq_inputs,
         unpatched=(Expect("<2.13", WRONG_RESULT),),
         doc="`if it:` false for an exhausted iterator (2.5-2.12) and consuming one (2.9-2.12)"),
)


# -- iterator-constant-fold: a builtin called on a fresh iterator consumes it, not a copy --


def iterator_constant_fold(o, x):
    """``all(it)`` stops after the first false item, ``sum(it)`` runs it out: the iterator read again."""
    it = iter([1, 0, o.n, 3])
    partly = all(it)
    rest = list(it)
    whole = iter((o.n, 2))
    total = sum(whole)
    return x * total, partly, rest, list(whole)


CASES.add(
    Case("iterator_constant_fold", ("iterator-constant-fold",), iterator_constant_fold, _seq_inputs,
         unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`all(it)` / `sum(it)` of an iterator over constants, then `list(it)`: every item again (folded over "
             "a copy, 2.5-2.15)"),
)


# -- object-str-repr: str() of an object without its own __str__, folded from the real object --


class Labelled:
    """A class with its own ``__repr__`` and ``object.__str__`` (the usual way to give a class a text)."""

    def __init__(self, label):
        self.label = label

    def __repr__(self):
        return f"Labelled({self.label!r})"


def object_str_repr(x, o):
    """``str(o)`` after the frame rewrote what ``o``'s ``__repr__`` reads: the text now, not the one Dynamo
    computed from the real object while tracing."""
    o.label = o.label + "!"
    return x + 1, str(o), o.label


def _object_str_repr_inputs():
    return torch.randn(3), Labelled("a")


def _object_str_repr_vary(args):
    args[0].add_(1)
    args[1].label = "b"  # a str (an int would turn dynamic on the recompile)


CASES.add(
    Case("object_str_repr", ("object-str-repr",), object_str_repr, _object_str_repr_inputs,
         vary=_object_str_repr_vary,
         unpatched=(Expect("<2.14", WRONG_RESULT),),
         doc="`o.label += '!'; str(o)` of an object whose class defines only `__repr__`: the new text (2.5-2.13: "
             "the real object's repr while tracing)"),
)


# -- builtin-format: format(value, spec) traced as str.format with the value as the format string --


def builtin_format(x, o):
    """``format(n, "x")``, ``format(s, ">6")``, ``format(f, ".3f")``: CPython's ``type(v).__format__(v, spec)``."""
    o.text = format(o.n, "x") + "|" + format(o.label, ">6") + "|" + format(o.n / 4, ".3f")
    return x + 1, o.text


class Formatted:
    """A number and a label, and the text the frame makes of them."""

    def __init__(self, n, label):
        self.n, self.label, self.text = n, label, ""


def _builtin_format_inputs():
    return torch.randn(3), Formatted(255, "ab")


def _builtin_format_vary(args):
    args[0].add_(1)
    args[1].label = "cde"  # a str: an int would turn dynamic on the recompile (that path is tested apart)


CASES.add(
    Case("builtin_format", ("builtin-format",), builtin_format, _builtin_format_inputs,
         vary=_builtin_format_vary,
         unpatched=(Expect("<2.7", GRAPH_BREAK, detail=r"^InternalTorchDynamoError: AttributeError: 'int' object "
                                                       r"has no attribute 'format'"),
                    Expect(">=2.7", WRONG_RESULT)),
         doc="`format(o.n, 'x')`, `format(o.label, '>6')`, `format(o.n / 4, '.3f')`: the formatted text (2.7-2.15: "
             "the value itself; 2.5-2.6: a crash)"),
)
