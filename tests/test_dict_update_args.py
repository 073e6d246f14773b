"""``dict-update-args`` (torch <2.13): ``d.update(m)``/``{**m}`` over a mapping by protocol, ``d.update()``,
``d.update(a, b)``, compared with eager on everything around what the handler accepts.

Each program runs eagerly and compiled (``backend="eager"``), ``fullgraph`` on and off, twice with
different inputs; the result and the inputs' state must equal eager, or, under ``fullgraph=True``,
the call must be a clean ``Unsupported``. Where the patch applies the accepted shapes must compile
whole (``test_accepted_shapes_compile``; without the patch they break: the case catalog's records).
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo
from packaging.version import Version


def _release():
    return Version(Version(torch.__version__.split("+")[0]).base_version)


class KeysAndItems:
    def __init__(self, x, n):
        self.d = {"a": x, "b": x + n, "c": n}

    def keys(self):
        return [k for k in self.d if k != "c"]

    def __getitem__(self, key):
        return self.d[key] * 2


class KeysView(KeysAndItems):
    def keys(self):
        return self.d.keys()


class KeysGenerator(KeysAndItems):
    def keys(self):
        return (k for k in self.d)


class RaisingItem(KeysAndItems):
    """``__getitem__`` raises on the second key: CPython has stored the first by then."""

    def __getitem__(self, key):
        if key == "b":
            raise KeyError(key)
        return self.d[key]


class OwnKeys(KeysAndItems):
    """An instance attribute ``keys``: CPython's attribute lookup finds it before the class's."""

    def __init__(self, x, n):
        super().__init__(x, n)
        self.keys = lambda: ["c"]


class KeysFromGetattr:
    """No class ``keys``: ``__getattr__`` gives one (CPython still finds it)."""

    def __init__(self, x, n):
        self.d = {"a": x, "n": n}

    def __getattr__(self, name):
        if name == "keys":
            return self.d.keys
        raise AttributeError(name)

    def __getitem__(self, key):
        return self.d[key]


class StaticKeys(KeysAndItems):
    keys = staticmethod(lambda: ["a"])


class DictSub(dict):
    """A dict subclass with its own ``keys``: CPython's merge of a dict reads its storage."""

    def keys(self):
        return ["a"]


class Pairs:
    """No ``keys`` at all: CPython iterates it as pairs."""

    def __init__(self, x, n):
        self.pairs = [("a", x), ("n", n)]

    def __iter__(self):
        return iter(self.pairs)


MAPPINGS = (KeysAndItems, KeysView, KeysGenerator, RaisingItem, OwnKeys, KeysFromGetattr, StaticKeys, Pairs)


def _make_mapping(cls, x, n):
    if cls is DictSub:
        return DictSub(a=x, n=n)
    return cls(x, n)


def update_into_new(x, m):
    d = {"z": x}
    try:
        r = d.update(m, q=1)
    except KeyError:  # its args are Dynamo's own model (a list on some releases)
        r = "KeyError"
    return d, r, list(d)


def update_into_input(x, m, d):
    try:
        d.update(m)
    except KeyError:
        return "KeyError", list(d), x + 1
    return list(d), x - 1


def unpack_into_new(x, m):
    try:
        return {"z": 0, **m}, x + 1
    except (KeyError, TypeError) as error:
        return type(error).__name__, x - 1


def update_argument_counts(x, m):
    d = {"z": 0}
    r = d.update()
    try:
        d.update(m, {"b": 1})
        raised = ""
    except TypeError as error:
        raised = type(error).__name__
    return d, r, raised, x * 2


def update_other_receivers(x, m):
    od = collections.OrderedDict(z=0)
    dd = collections.defaultdict(int)
    try:
        od.update(m)
        dd.update(m)
    except KeyError:
        return "KeyError", x
    return od, dict(dd), x + 1


FUNCTIONS = (update_into_new, update_into_input, unpack_into_new, update_argument_counts, update_other_receivers)


def _check(fn, cls, fullgraph):
    """Compiled equals eager on two calls with different inputs (value and the inputs' state)."""
    from tests.test_never_worse_dunder_dict import _check as check_two_calls

    def make(call):
        x = torch.randn(3) * call
        args = [x, _make_mapping(cls, x, call)]
        if fn is update_into_input:
            args.append({"a": 0, "y": call})
        return args

    return check_two_calls(fn, make, fullgraph, True)


@pytest.mark.parametrize("fullgraph", (True, False), ids=("fullgraph", "breaks"))
@pytest.mark.parametrize("cls", MAPPINGS + (DictSub,), ids=lambda c: c.__name__)
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_update_equals_eager(fn, cls, fullgraph):
    """Right, a clean break, or wrong exactly as without tdcompat (Dynamo's own DICT_UPDATE/update of
    what the patch does not accept: ``{**m}`` of an object whose ``keys`` is not a class function,
    of pairs; ``OrderedDict``/``defaultdict`` receivers), which is then recorded as an expected failure."""
    import tdcompat

    try:
        _check(fn, cls, fullgraph)
    except AssertionError as error:
        tdcompat.unpatch()
        try:
            _check(fn, cls, fullgraph)
        except AssertionError as native:
            if str(native) == str(error):  # the very same wrong result without tdcompat
                pytest.xfail(f"wrong without tdcompat too: {str(error)[:200]}")
        finally:
            tdcompat.patch()
            torch._dynamo.reset()
        raise


def test_accepted_shapes_compile():
    from conftest import applied

    if not applied("dict-update-args"):
        pytest.skip("dict-update-args applies to torch <2.13")
    for cls in (KeysAndItems, KeysView, RaisingItem):
        for fn in (update_into_new, update_into_input) + ((unpack_into_new,) if cls is not RaisingItem else ()):
            assert _check(fn, cls, True) == "compiled", (fn.__name__, cls.__name__)
    if _release() >= Version("2.8"):  # 2.5-2.7 cannot raise TypeError inside the trace
        assert _check(update_argument_counts, KeysAndItems, True) == "compiled"


def update_keywords_only(x, d):
    """``d.update(k=v)`` with keywords alone, on a dict passed in and one made in the frame (2.5: a graph break)."""
    made = {"a": 1}
    r = made.update(b=x * 2, a=x)
    d.update(z=made["b"], a=0)
    return r, list(made), list(d), d["z"]


def _keywords_inputs(n):
    x = torch.arange(3.0) * n
    return x, {"a": n, "y": x}


def test_keywords_only_equals_eager():
    from conftest import eager_vs_compiled, without_patch

    assert eager_vs_compiled(update_keywords_only, _keywords_inputs, (1, 2)) is None
    if _release() < Version("2.6"):  # 2.5: `call_method ConstDictVariable() update [] {...}`
        with without_patch("dict-update-args"):
            found = eager_vs_compiled(update_keywords_only, _keywords_inputs, (1, 2))
        assert found is not None and "update" in str(found), found
