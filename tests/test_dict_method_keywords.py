"""dict-method-keywords: ``get``/``pop``/``setdefault`` called with keywords are parsed as CPython parses them.

``dict``'s (and so ``defaultdict``'s, an ``OrderedDict``'s ``get``, a dict subclass's) take no keyword arguments:
CPython raises ``TypeError``. An ``OrderedDict``'s own ``pop``/``setdefault`` bind ``key`` and ``default`` by
keyword. A refused call raises CPython's ``TypeError`` for an exact dict and for ``OrderedDict``'s
own methods, and breaks the graph for ``dict``'s methods on other classes (CPython words it after the class or
``dict`` by the call's form). Each call caught in the frame
as users would, on plain dicts, ``OrderedDict``, ``defaultdict`` and
subclasses passed in, dicts built in the frame, a present and an absent key, the key added between calls;
what a class defines itself is left to Dynamo. Compiled with ``fullgraph=True`` and compared with eager (return
value and inputs after the call) on calls with different inputs. 2.5-2.6 cannot raise ``TypeError`` in the
trace: a refused call is a graph break there. Without the patch (reverted in-process) the shapes are wrong or
crash on every release: asserted there.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-method-keywords"
RELEASE = parse_torch_version(torch.__version__).release[:2]
#: 2.5-2.6 raise only StopIteration/KeyError/AttributeError in the trace: a refused call breaks the graph.
RAISES_TYPE_ERROR = RELEASE >= (2, 7)


class Sub(dict):
    pass


class ODSub(collections.OrderedDict):
    pass


class OwnPop(collections.OrderedDict):
    def pop(self, key, default="own"):
        return ("own-pop", key, default)


def defaultdict_of(**items):
    return collections.defaultdict(int, **items)


CALLS = {
    "get_default": lambda d: d.get("z", default=3),
    "get_present": lambda d: d.get("a", default=3),
    "get_key": lambda d: d.get(key="a"),
    "pop_default_absent": lambda d: d.pop("z", default=3),
    "pop_default_present": lambda d: d.pop("a", default=3),
    "pop_key": lambda d: d.pop(key="a"),
    "pop_both": lambda d: d.pop(key="z", default=-1),
    "setdefault_default": lambda d: d.setdefault("q", default=3),
    "setdefault_key": lambda d: d.setdefault(key="q"),
    "setdefault_present": lambda d: d.setdefault("a", default=3),
    "pop_unknown_keyword": lambda d: d.pop("a", fallback=3),
}
MAKERS = {"dict": dict, "OrderedDict": collections.OrderedDict, "defaultdict": defaultdict_of, "Sub": Sub,
          "ODSub": ODSub}
#: Where CPython binds the keywords (no TypeError): OrderedDict's own pop/setdefault.
BINDS = {(call, kind) for call in CALLS for kind in ("OrderedDict", "ODSub")
         if call.startswith(("pop_", "setdefault_")) and call != "pop_unknown_keyword"}


def _program(call):
    def fn(x, d):
        try:
            v = call(d)
        except (TypeError, KeyError) as error:
            v = type(error).__name__
        return x + len(d), v, list(d.items())

    return fn


def _make(kind):
    def make(n):
        d = MAKERS[kind](a=n, b=2)
        if n == 2:
            d["z"] = "present"
        return torch.arange(3.0) * n, d

    return make


def _subclass_on_old_torch(kind):
    """2.5-2.6 track a dict subclass passed in as a user mapping: Dynamo's own break or crash, not this patch's."""
    return RELEASE < (2, 7) and kind in ("Sub", "ODSub")


PARAMS = [(call, kind) for call in CALLS for kind in MAKERS]


def _equals_eager(call, kind) -> bool:
    """Equal to eager, or a clean graph break: bound keywords everywhere; a refused call raises ``TypeError``
    for an exact dict (2.7+), breaks for other classes (CPython's text depends on the call form), and is
    Dynamo's own refusal on 2.15 for ``dict``'s methods."""
    if (call, kind) in BINDS:
        return True
    ordered_own = kind in ("OrderedDict", "ODSub") and call.startswith(("pop_", "setdefault_"))
    if RELEASE >= (2, 15) and not ordered_own:
        return True
    return (kind == "dict" or ordered_own) and RAISES_TYPE_ERROR


@pytest.mark.parametrize("call,kind", PARAMS, ids=[f"{c}-{k}" for c, k in PARAMS])
def test_equals_eager_or_breaks(call, kind):
    if _subclass_on_old_torch(kind):
        pytest.skip("2.5-2.6: a dict subclass passed in is Dynamo's MutableMappingVariable (native)")
    found = eager_vs_compiled(_program(CALLS[call]), _make(kind), (1, 2, 3))
    if _equals_eager(call, kind):
        assert found is None, found
    else:
        assert isinstance(found, Unsupported), found


def test_built_in_the_frame():
    def fn(x, n):
        od = collections.OrderedDict(a=n)
        d = {"a": n}
        out = [od.setdefault("q", default=n * 2), od.pop(key="a"), od.pop("z", default=-n)]
        try:
            out.append(d.get("a", default=0))
        except TypeError:
            out.append("TypeError")
        return x + len(od), out, list(od.items()), d

    found = eager_vs_compiled(fn, lambda n: (torch.ones(2) * n, n), (1, 2))
    assert found is None or (not RAISES_TYPE_ERROR and isinstance(found, Unsupported)), found


def test_dict_get_by_name_with_keywords():
    """``dict.get(d, k, default=v)``: Dynamo sends it to the same method (2.7+)."""

    def fn(x, d):
        try:
            v = dict.get(d, "z", default=1)
        except TypeError:
            v = "TypeError"
        return x + 1, v

    found = eager_vs_compiled(fn, _make("dict"), (1, 2))
    assert found is None or (not RAISES_TYPE_ERROR and isinstance(found, Unsupported)), found


@pytest.mark.skipif(RELEASE < (2, 7), reason="2.5-2.6 track a dict subclass passed in as a user mapping")
def test_a_class_s_own_method_is_left_to_dynamo():
    """``OwnPop.pop`` takes ``default`` by keyword in its own way: Dynamo inlines it, with or without the patch."""
    fn = _program(lambda d: d.pop("z", default="kw"))
    found = eager_vs_compiled(fn, lambda n: (torch.ones(2) * n, OwnPop(a=n)), (1, 2))
    with without_patch(NAME):
        native = eager_vs_compiled(fn, lambda n: (torch.ones(2) * n, OwnPop(a=n)), (1, 2))
    assert type(found) is type(native) and str(found)[:200] == str(native)[:200], (found, native)


def test_calls_without_keywords_are_dynamo_s_own():
    def fn(x, d):
        return x + d.get("a"), d.get("z", 0), d.pop("b"), d.setdefault("q", 4), list(d.items())

    for kind in ("dict", "OrderedDict"):
        assert eager_vs_compiled(fn, _make(kind), (1, 2)) is None


@pytest.mark.parametrize("call,kind", [("setdefault_default", "OrderedDict"), ("pop_default_absent", "OrderedDict"),
                                       ("get_default", "dict"), ("pop_default_present", "dict")])
def test_without_the_patch_it_fails(call, kind):
    with without_patch(NAME):
        found = eager_vs_compiled(_program(CALLS[call]), _make(kind), (1, 2))
    if RELEASE >= (2, 15) and kind == "dict":
        pytest.skip("2.15 refuses a dict's keywords itself")
    assert found is not None, "the shape must fail without the patch"
