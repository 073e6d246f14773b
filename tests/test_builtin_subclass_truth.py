"""builtin-subclass-truth: the truth of a builtin container's subclass in a conditional jump (torch 2.5-2.11).

Every test compiles with ``fullgraph=True`` and compares with eager, call by call, with inputs that
alternate between empty and non-empty (the return value and the inputs after the call). With the patch
a program is right or a graph break, never wrong; the shapes the patch claims compile; without it (reverted
in-process) the empty ones are wrong on 2.5-2.11.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, without_patch

NAME = "builtin-subclass-truth"
TORCH = parse_torch_version(torch.__version__).release[:2]
NEEDED = TORCH < (2, 12)


class D(dict):
    pass


class OD(collections.OrderedDict):
    pass


class L(list):
    pass


class S(set):
    pass


class FS(frozenset):
    pass


class T(tuple):
    pass


class Str(str):
    pass


class By(bytes):
    pass


class BA(bytearray):
    pass


class Q(collections.deque):
    pass


def _filled(cls):
    if issubclass(cls, dict):
        return cls({"a": 1, "b": 2})
    if cls in (Str,):
        return cls("ab")
    if cls in (By, BA):
        return cls(b"ab")
    return cls([1, 2])


CLASSES = (D, OD, L, S, FS, T, Str, By, BA, Q)


def _if(x, a):
    return x + (1 if a else 0)


def _not(x, a):
    return x * (2 if not a else 3)


def _or(x, a):
    return x + 1, (a or "empty")


def _and(x, a):
    return x - 1, (a and "full")


def _two(x, a):
    if a:
        x = x + 1
    if not a:
        x = x * 2
    return x


def _bool(x, a):
    return x + 1, bool(a)


def _unary_not(x, a):
    empty = not a
    return x - 1, empty


FORMS = {"if": _if, "not": _not, "or": _or, "and": _and, "two": _two, "bool": _bool, "unary_not": _unary_not}
#: ``bool(obj)`` is ``BuiltinVariable.call_bool``, which 2.5-2.7 do not have: a graph break there.
NO_CALL_BOOL = TORCH < (2, 8)
#: Empty, non-empty, empty: a decision taken on the first call without a guard is wrong on the second.
SEQUENCE = (True, False, True)


def _maker(cls):
    def make(empty):
        torch.manual_seed(0)
        return torch.randn(3), (cls() if empty else _filled(cls))

    return make


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_right_or_graph_break(cls, form):
    found = eager_vs_compiled(FORMS[form], _maker(cls), SEQUENCE)
    if isinstance(found, Unsupported):
        # with the patch every container subclass passed in compiles: Dynamo's len() where its tracker
        # keeps the items, else the real length under a guard (2.12+: Dynamo's own, a break for some)
        assert not applied(NAME) or (form == "bool" and NO_CALL_BOOL), f"{cls.__name__} {form}: {found}"
        return
    assert found is None, found


@pytest.mark.skipif(not NEEDED, reason="right natively from torch 2.12")
@pytest.mark.parametrize("cls", (D, T, Str), ids=lambda c: c.__name__)
def test_empty_subclass_is_wrong_without_the_patch(cls):
    with without_patch(NAME):
        found = eager_vs_compiled(_if, _maker(cls), SEQUENCE)
    assert isinstance(found, str), f"expected a wrong result without {NAME}, got {found!r}"


@pytest.mark.skipif(TORCH < (2, 7), reason="2.5-2.6 cannot trace a dict/list subclass's mutation")
@pytest.mark.parametrize("change", ("clear", "setitem", "pop", "append", "extend"))
def test_truth_after_a_change_in_the_frame(change):
    """The length Dynamo's ``len()`` answers includes what the frame did to the object."""
    calls = {
        "clear": (D, lambda a: a.clear()), "setitem": (D, lambda a: a.__setitem__("z", 1)),
        "pop": (D, lambda a: a.pop("a", None)), "append": (L, lambda a: a.append(3)),
        "extend": (L, lambda a: a.extend([])),
    }
    cls, act = calls[change]

    def fn(x, a):
        act(a)
        return x + (1 if a else 0), len(a)

    found = eager_vs_compiled(fn, _maker(cls), SEQUENCE)
    assert found is None, found


@pytest.mark.parametrize("cls", (D, L, T, Str, Q), ids=lambda c: c.__name__)
def test_made_in_the_frame_right_or_graph_break(cls):
    """An object made in the frame has no source: Dynamo's ``len()`` decides, or the jump breaks."""

    def fn(x, empty):
        a = cls() if empty else _filled(cls)
        return x + (1 if a else 0)

    found = eager_vs_compiled(fn, lambda empty: (torch.ones(2), empty), SEQUENCE)
    if isinstance(found, Exception) and not isinstance(found, Unsupported):
        # `T()` with no argument crashes Dynamo 2.7-2.11 itself (IndexError, AssertionError "init_args must be
        # provided"): the same crash without the patch
        with without_patch(NAME):
            native = eager_vs_compiled(fn, lambda empty: (torch.ones(2), empty), SEQUENCE)
        assert type(native) is type(found), (found, native)
        return
    assert found is None or isinstance(found, Unsupported), found


class PyLen(dict):
    def __len__(self):
        return 0


class PyBool(list):
    def __bool__(self):
        return True


class FalseList(list):
    """A list subclass whose truth is not its length (2.5-2.6 trace it as a list: "it only adds methods")."""

    def __bool__(self):
        return len(self) > 2


@pytest.mark.parametrize("cls", (PyLen, PyBool), ids=lambda c: c.__name__)
def test_python_len_or_bool_is_dynamos(cls):
    """A class with its own ``__len__``/``__bool__`` is deferred: Dynamo calls the Python method itself
    (2.5-2.6 trace a list subclass as a list instead: test_list_subclass_own_bool_breaks_where_it_is_a_list)."""
    found = eager_vs_compiled(_if, _maker(cls), SEQUENCE)
    if cls is PyBool and TORCH < (2, 7) and applied(NAME):
        assert isinstance(found, Unsupported), found
        return
    with without_patch(NAME):
        native = eager_vs_compiled(_if, _maker(cls), SEQUENCE)
    assert type(found) is type(native), (found, native)
    assert found is None or isinstance(found, Unsupported), found


@pytest.mark.parametrize("form", ("if", "not", "or", "two", "unary_not"))
def test_list_subclass_own_bool_breaks_where_it_is_a_list(form):
    """2.5-2.6 (``RestrictedListSubclassVariable``) took ``FalseList([1, 2])`` as true, its ``__bool__``
    unread: silently wrong natively; a graph break with the patch, right or a break elsewhere."""
    make = _maker(FalseList)
    found = eager_vs_compiled(FORMS[form], make, SEQUENCE)
    assert found is None or isinstance(found, Unsupported), found
    if TORCH < (2, 7):
        assert isinstance(found, Unsupported) or not applied(NAME), found
        with without_patch(NAME):
            native = eager_vs_compiled(FORMS[form], make, SEQUENCE)
        assert isinstance(native, str), f"expected a wrong result without {NAME}, got {native!r}"


def test_loop_without_fullgraph_matches_eager():
    """``while d: d.popitem()`` on an empty dict subclass: natively the loop was entered, ``popitem``
    graph-broke and then raised ``KeyError`` in eager code."""

    def drain(x, d):
        while d:
            d.popitem()
            x = x + 1
        return x

    torch._dynamo.reset()
    compiled = torch.compile(drain, backend="eager")
    for empty in SEQUENCE:
        eager_args, compiled_args = _maker(D)(empty), _maker(D)(empty)
        assert torch.equal(drain(*eager_args), compiled(*compiled_args))
        assert eager_args[1] == compiled_args[1]
