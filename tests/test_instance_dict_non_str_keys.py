"""instance-dict-writes: keys that are not a ``str`` in ``obj.__dict__`` of an object made in the frame (torch <2.12).

CPython's instance dict takes any hashable key through the mapping API (``o.__dict__[1] = v``, ``vars(o)[2.5]``);
only ``setattr`` wants a ``str``. Dynamo records such a write as an attribute store and replays it with
``STORE_ATTR``, which cannot name it: a graph break (``non-str-attr-store``; 2.5-2.6 at the write). The patch
replays the object's record itself, as ``__dict__`` writes, for a plain user object made in the frame and a
key whose hash and ``==`` are pure functions of its value (``None``, ``bool``, ``int``, ``bytes``, non-NaN
``float``, tuples of them). Upstream: ``DunderDictVariableTests::test_dunder_dict_non_str_key_setitem`` /
``_roundtrip`` (pass natively from 2.14; ``dunder-dict-non-str-key`` on 2.13).

Each program is compiled with ``fullgraph=True`` and compared with eager on three calls with different
inputs (return value, the objects made and their keys in order); where the patch applies the accepted shapes
must compile (asserted), everywhere else every shape must be right or a clean graph break. Without the patch
(reverted in-process) the upstream shapes break on 2.5-2.11 (asserted).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import applied, assert_right_break_or_native, eager_vs_compiled, without_patch
from fuzzer import nonstr

NAME = "instance-dict-writes"
RELEASE = parse_torch_version(torch.__version__).release[:2]


class Foo:
    pass


class WithSetattr:
    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * 2 if isinstance(value, int) else value)


def _keys(o):
    return list(o.__dict__)


def upstream_setitem(t):
    f = Foo()
    f.__dict__[1] = 1
    f.a = "a"
    return dict(f.__dict__), list(f.__dict__), t + 1


def upstream_roundtrip(t):
    f = Foo()
    d = f.__dict__
    d[1] = 10
    d[2.5] = 20
    d[(3, 4)] = 30
    got = (d[1], d[2.5], d[(3, 4)])
    del d[2.5]
    return got, dict(d), t * 2


def mixed_keys(t):
    f = Foo()
    f.x = t
    f.__dict__[None] = 1
    f.__dict__[b"k"] = t + 1
    f.__dict__[((1,), 2)] = 3
    f.__dict__[-7] = 4
    f.y = 5
    return list(f.__dict__), list(f.__dict__.values()), list(f.__dict__.items()), len(f.__dict__), f


def equal_keys_collapse(t):
    """``1``, ``True`` and ``1.0`` are one entry (the first key stays); ``0`` and ``-0.0`` too."""
    f = Foo()
    f.__dict__[1] = t
    f.__dict__[True] = t + 1
    f.__dict__[1.0] = t + 2
    f.__dict__[0] = "zero"
    f.__dict__[-0.0] = "negzero"
    return list(f.__dict__), f.__dict__[1], f.__dict__[0.0], f


def methods(t):
    f = Foo()
    d = f.__dict__
    d.update({2: t, "s": 1})
    a = d.setdefault(3, "three")
    b = d.setdefault(2, "no")
    c = d.pop(3)
    e = d.pop(4, "default")
    g = d.get(2), d.get(9), d.get(9, "dflt")
    h = 2 in d, 9 in d, (1, 2) in d
    return a, b, c, e, g, h, list(d), f


def missing_key_raises(t):
    f = Foo()
    f.__dict__[5] = t
    try:
        f.__dict__[6]
    except KeyError:
        r = "KeyError"
    try:
        del f.__dict__[7]
    except KeyError:
        s = "KeyError"
    return r, s, f


def readd(t):
    f = Foo()
    f.__dict__[1] = t
    f.a = 2
    del f.__dict__[1]
    f.__dict__[1] = t + 1
    return list(f.__dict__), f


def deleted_in_frame(t):
    f = Foo()
    f.__dict__[8] = t
    f.__dict__[9] = 1
    del f.__dict__[8]
    return f


def through_vars(t):
    f = Foo()
    vars(f)[3] = t
    vars(f)["b"] = 1
    return vars(f)[3], list(vars(f)), f


def custom_setattr(t):
    f = WithSetattr()
    f.a = 3
    f.__dict__[4] = 5
    f.b = 6
    return list(f.__dict__), f


def iterate_and_compare(t):
    f = Foo()
    f.__dict__[1] = 2
    f.z = 3
    keys = [k for k in f.__dict__]
    same = f.__dict__ == {1: 2, "z": 3}
    return keys, same, sorted(f.__dict__.items(), key=repr), f


def escapes_into_input(t, box):
    f = Foo()
    f.__dict__[2] = t
    box.append(f)
    return t + 1


ACCEPTED = (upstream_setitem, upstream_roundtrip, mixed_keys, equal_keys_collapse, methods, missing_key_raises,
            deleted_in_frame, through_vars, custom_setattr)


def _made(n):
    return (torch.arange(2.0) + n,)


def _check_made_keys(fn, calls=(4, 5)):
    """The objects returned keep eager's key order (the snapshot compares attributes sorted)."""
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    for n in calls:
        eager, got = fn(*_made(n)), compiled(*_made(n))
        pick = [[list(vars(o)) for o in (r if isinstance(r, tuple) else (r,)) if isinstance(o, (Foo, WithSetattr))]
                for r in (eager, got)]
        assert pick[0] == pick[1]


@pytest.mark.parametrize("fn", ACCEPTED, ids=lambda f: f.__name__)
def test_accepted_shapes(fn):
    if not applied(NAME):  # 2.12 on: the patch that decides non-str stores there
        other = "non-str-attr-store" if applied("non-str-attr-store") else None
        if other is None:
            found = eager_vs_compiled(fn, _made, inputs=(1, 2, 3))
            assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found
        else:  # 2.14.1 natively: the KeyError of a missing int key crashes the compile (debug_repr)
            assert_right_break_or_native(other, fn, _made, inputs=(1, 2, 3))
        return
    found = eager_vs_compiled(fn, _made, inputs=(1, 2, 3))
    if fn is missing_key_raises:
        assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found
    else:
        assert found is None, found
        _check_made_keys(fn)


def test_escape_into_an_input():
    found = eager_vs_compiled(escapes_into_input, lambda n: (torch.arange(2.0) + n, []), inputs=(1, 2, 3))
    assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found
    if applied(NAME):
        assert found is None, found


def with_a_graph_break(t):
    f = Foo()
    f.__dict__[1] = t
    torch._dynamo.graph_break()
    f.__dict__[2] = t + 1
    return dict(f.__dict__), f


def test_across_a_graph_break():
    found = eager_vs_compiled(with_a_graph_break, _made, inputs=(1, 2, 3), fullgraph=False)
    assert found is None, found


@pytest.mark.skipif(RELEASE >= (2, 12), reason="2.12 on: not this patch's releases")
@pytest.mark.parametrize("fn", (upstream_setitem, upstream_roundtrip), ids=lambda f: f.__name__)
def test_upstream_shapes_break_without_the_patch(fn):
    if not applied(NAME):
        pytest.skip(f"{NAME} is not applied")
    with without_patch(NAME):
        found = eager_vs_compiled(fn, _made, inputs=(1, 2))
    assert isinstance(found, Exception), found


# -- never worse: what is not taken (objects passed in, other key types, other trackers) ----------------
class Key:
    def __init__(self, v):
        self.v = v

    def __hash__(self):
        return hash(self.v)

    def __eq__(self, other):
        return isinstance(other, Key) and other.v == self.v


class S(str):
    pass


def input_object(t, o):
    o.__dict__[1] = t
    return list(o.__dict__), o.__dict__[1]


def nan_key(t):
    f = Foo()
    f.__dict__[float("nan")] = t
    return len(f.__dict__), f


def str_subclass_key(t):
    f = Foo()
    f.__dict__[S("a")] = t
    return list(f.__dict__), f


def user_key(t):
    f = Foo()
    f.__dict__[Key(1)] = t
    return len(f.__dict__), f


def module_made(t):
    m = torch.nn.Module()
    m.__dict__[1] = t
    return len(m.__dict__)


@pytest.mark.parametrize("case", (
    ("input_object", input_object, lambda n: (torch.arange(2.0) + n, Foo())),
    ("nan_key", nan_key, _made),
    ("str_subclass_key", str_subclass_key, _made),
    ("user_key", user_key, _made),
    ("module_made", module_made, _made),
), ids=lambda c: c[0])
def test_refused_shapes_are_right_or_break(case):
    _name, fn, make = case
    assert_right_break_or_native(NAME, fn, make, inputs=(1, 2, 3))


def getattr_non_str(t):
    f = Foo()
    f.__dict__[2] = t
    out = []
    for call in (lambda: getattr(f, 2), lambda: hasattr(f, 2), lambda: getattr(f, 2, "d")):
        try:
            out.append(call())
        except TypeError:
            out.append("TypeError")
    return out, f


def test_getattr_of_a_non_str_key_raises_type_error():
    """``getattr``/``hasattr`` with a name that is not a ``str``: CPython's ``TypeError``, never the item
    (2.7-2.11, and 2.13 with ``dunder-dict-non-str-key``, found it in the record once the patch had recorded
    it: silently wrong, measured). 2.14 answers from the record natively: ``dunder-dict-non-str-key`` raises
    there too (tests/test_dunder_dict_non_str_key.py asserts the native answer)."""
    found = eager_vs_compiled(getattr_non_str, _made, inputs=(1, 2, 3))
    assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found


def getattr_non_str_direct(t):
    o = Foo()
    o.a, o.t = 3, t + 1  # (a tensor op: a frame with no graph would run as it is)
    # the fuzzer's form: a key through o.__dict__, then getattr/hasattr of an object made there holding it
    return nonstr(o, 1), nonstr(o, None)


@pytest.mark.parametrize("fullgraph", (True, False), ids=("fullgraph", "default"))
def test_getattr_of_a_non_str_key_in_a_try_is_type_error(fullgraph):
    """The same names called directly inside a ``try`` after the key went through ``o.__dict__``: 2.5.1
    answered the items (``(11, True)``) where the patch had recorded the keys (fresh fuzz seed 486679057, four
    programs; this test failed there before the fix); now the ``TypeError`` is raised in the trace, or a graph
    break where this torch cannot raise one (2.5-2.8)."""
    found = eager_vs_compiled(getattr_non_str_direct, _made, inputs=(1, 2, 3), fullgraph=fullgraph)
    assert found is None or isinstance(found, torch._dynamo.exc.Unsupported), found
