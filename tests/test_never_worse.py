"""Patterns where tdcompat's answer is a graph break, not a compiled frame: the result must
still equal eager (``fullgraph=False``), on every release.

The catalog (tests/test_cases.py) holds patterns tdcompat makes compile under
``fullgraph=True``; these are the ones it deliberately leaves to eager because compiled
code would be wrong. Each was found by the fuzzer (issue 11). Measured without tdcompat:

* ``o.__dict__[k] = v`` for a key a property shares, then ``o.k``: Dynamo returns ``v``
  where CPython calls the property (silently wrong on 2.8-2.12; a break on 2.5-2.7;
  right on 2.13+). ``instance-dict-writes`` graph-breaks on the read ``o.k`` on 2.8-2.11
  (where Dynamo replays the write itself right) and on the write on 2.5-2.7;
  ``dunder-dict-replay`` on the write on 2.12. Without the read the write compiles on
  2.8-2.11 (``test_hidden_write_compiles``).
* ``del m.__dict__[k]`` then ``m._modules[k] = sub`` on a module (``remove_from`` in
  ``nn.Module.__setattr__``): Dynamo replays the deletion as ``del m.k`` after the
  ``_modules`` update and deletes the new submodule (natively on 2.12). On 2.5-2.11
  ``instance-dict-writes`` now compiles it, the module's replay moved before its
  bookkeeping dicts' (catalog ``gap_clients_module_dict``); this program stays here as
  the check that it equals eager without ``fullgraph``.
* deletions through ``__dict__`` that 2.12 replays as ``del o.k`` through a property or
  a class attribute: ``dunder-dict-replay`` breaks.
* the same reads on an object the frame makes (``o = C(); o.__dict__['p'] = v; o.p``;
  fuzzer seeds 11000058, 11000424 of seed 11): silently wrong on 2.8-2.12 without tdcompat
  (2.5-2.7 break); ``instance-dict-writes`` breaks on 2.8-2.11, ``dunder-dict-replay``
  answers them from the class on 2.12 (``test_made_in_frame_equals_eager``).
* ``m.__dict__.setdefault(k, d)`` on a ``MutableMapping`` whose property shares ``k``
  (2.6-2.11): natively a write into a guarded copy of ``m.__dict__``; with
  ``mapping-dunder-dict`` a break on 2.6-2.7 (Dynamo would replay the write as
  ``setattr``, through the property) and compiled on 2.8-2.11. Deleting such a key
  (``pop``, ``del``) still breaks before 2.12: Dynamo replays it as ``del o.k``.
"""

from __future__ import annotations

import abc

import pytest
import torch

from tdcompat.cases.harness import vary
from tdcompat.cases.mappings import StoreMapping
from tdcompat.cases.snapshot import diff, snapshot

from conftest import applied as _applied, without_patch as _without


class Shadowed:
    c = 5

    def __init__(self):
        self.a = torch.ones(3)

    @property
    def p(self):
        return 100


class ShadowedMapping(StoreMapping):
    c = 5

    def __init__(self):
        self._store = {"k": torch.ones(3)}
        self.a = torch.ones(3)

    @property
    def p(self):
        return 100


def write_hidden_then_read(o, x):
    o.__dict__["p"] = x * 2
    return o.p, getattr(o, "p", None), o.__dict__["p"]


def vars_write_hidden_then_read(o, x):
    vars(o)["p"] = 5
    return o.p * x, vars(o)["p"]


def setdefault_hidden(o, x):
    return o.__dict__.setdefault("p", 7), x + 1


def pop_hidden_present(o, x):
    """2.12 replays the deletion as `del o.p`: "property 'p' ... has no deleter"."""
    o.__dict__["p"] = 3  # a write the property hides (o.p stays 100)
    return o.__dict__.pop("p") * x, o.p


def set_then_delete(o, x):
    """Fuzzer seeds 1004428/1000128 (torch 2.5, seed 1): an attribute the frame adds then deletes.
    Dynamo decides at compile time, for the first input, whether the replay deletes (unguarded):
    an input that had ``b`` on entry kept it. ``delattr-missing`` guards the entry state."""
    o.b = x + 1
    del o.b
    return x - 1


def update_then_delete(o, x):
    o.__dict__.update(b=x - 0.5)
    del o.b
    return x * 2


def delete_then_hasattr_class_key(o, x):
    """Fuzzer seeds 1000587/1004625: after deleting an instance key the class also has, Dynamo
    reads its deletion record (``hasattr`` silently False before 2.13); tdcompat breaks."""
    o.__dict__["c"] = x
    popped = o.__dict__.pop("c", 3)
    return popped, hasattr(o, "c"), x + 1


def add_then_pop_class_key(o, x):
    """2.12 replays the pop as `del o.c` on an object whose instance dict has no c."""
    o.__dict__["c"] = 3
    return o.__dict__.pop("c") * x, o.c


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2


def delete_then_register(m, x):
    """What nn.Module.__setattr__'s remove_from does: Dynamo replays the deletion as `del m.scale`
    after the `_modules` update, deleting the new submodule (2.12; instance-dict-writes orders it on 2.5-2.11)."""
    del m.__dict__["scale"]
    m._modules["scale"] = torch.nn.Identity()
    return x + 1


def delattr_then_register(m, x):
    """`del m.scale` (super().__delattr__) then a submodule under that name: before 2.13 Dynamo
    replays `del m.scale` after the `_modules` update, deleting the new submodule (wrong without
    tdcompat on 2.5-2.12); super-delattr orders the replay (2.6-2.7, 2.9-2.11)."""
    del m.scale
    m._modules["scale"] = torch.nn.Identity()
    return hasattr(m, "scale"), x + 1


#: Programs still wrong with and without tdcompat, per torch prefix. None now: `delattr_then_register`
#: was open on 2.5, 2.8 and 2.12 until `module-deleted-attr` (the read of `m.scale` after it) and
#: the module-`__dict__` ordering of `instance-dict-writes`/`dunder-dict-replay`.
OPEN_NATIVE: dict = {}


PROGRAMS = [
    (fn, cls)
    for fn in (write_hidden_then_read, vars_write_hidden_then_read, setdefault_hidden, pop_hidden_present,
               add_then_pop_class_key, set_then_delete, update_then_delete, delete_then_hasattr_class_key)
    for cls in (Shadowed, ShadowedMapping)
] + [(delete_then_register, Scaled), (delattr_then_register, Scaled)]


@pytest.mark.parametrize("fn, cls", PROGRAMS, ids=[f"{f.__name__}-{c.__name__}" for f, c in PROGRAMS])
def test_left_to_eager_equals_eager(fn, cls):
    if torch.__version__.startswith(OPEN_NATIVE.get(fn, ())):
        pytest.skip(f"wrong with and without tdcompat on torch {torch.__version__} (open; see OPEN_NATIVE)")
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    for call in (1, 2):
        torch.manual_seed(call)
        expected_args = (cls(), torch.randn(3))
        torch.manual_seed(call)
        got_args = (cls(), torch.randn(3))  # equal to expected_args, a separate copy
        if call == 2:
            vary(expected_args)
            vary(got_args)
        expected = snapshot((fn(*expected_args), expected_args))
        got = snapshot((compiled(*got_args), got_args))
        assert not diff(expected, got, "call"), diff(expected, got, "call")


def write_hidden_read_back(o, x):
    o.__dict__["p"] = x * 2
    return o.__dict__["p"] + 1


def vars_write_hidden_read_back(o, x):
    vars(o)["p"] = x + 3
    return vars(o)["p"] * 2


def setdefault_hidden_absent(o, x):
    return o.__dict__.setdefault("p", x - 1) * 2


HIDDEN_WRITES = [(fn, cls) for fn in (write_hidden_read_back, vars_write_hidden_read_back, setdefault_hidden_absent)
                 for cls in (Shadowed, ShadowedMapping)]


def _hidden_writes_compile(cls) -> bool:
    """Where tdcompat lets a write through ``__dict__`` under a property compile: 2.8-2.11
    (Dynamo replays it with ``object_setattr_ignore_descriptor``), 2.12 (``dunder-dict-replay``
    answers later reads of the key from the property) and 2.13 on (natively). 2.5-2.7 would
    replay it through the property: there ``instance-dict-writes`` replays it itself on a plain
    object (not a mapping: a graph break)."""
    from packaging.version import Version

    from conftest import applied

    release = Version(Version(torch.__version__.split("+")[0]).base_version)
    return release >= Version("2.8") or (cls is Shadowed and applied("instance-dict-writes")
                                         and applied("property-setattr"))


@pytest.mark.parametrize("fn, cls", HIDDEN_WRITES, ids=[f"{f.__name__}-{c.__name__}" for f, c in HIDDEN_WRITES])
def test_hidden_write_compiles(fn, cls):
    """Fuzzer seeds 112, 130 and 190 of seed 0 on 2.9-2.10 ("regressed": plain torch compiled them
    under fullgraph=True, tdcompat broke on the write): only a later ``o.p`` needs the break.
    Each program reads back what it wrote, in the frame, and must equal eager on two calls
    with different inputs; where the write cannot compile it must be a graph break, not a
    wrong result."""
    from torch._dynamo.exc import Unsupported

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    for call in (1, 2):
        torch.manual_seed(call)
        expected_args = (cls(), torch.randn(3))
        torch.manual_seed(call)
        got_args = (cls(), torch.randn(3))
        if call == 2:
            vary(expected_args)
            vary(got_args)
        expected = snapshot((fn(*expected_args), expected_args))
        if not _hidden_writes_compile(cls):
            with pytest.raises(Unsupported):
                compiled(*got_args)
            return
        got = snapshot((compiled(*got_args), got_args))
        assert not diff(expected, got, "call"), diff(expected, got, "call")


class CtxModule(torch.nn.Module):
    """A module with ``__enter__``/``__exit__``: Dynamo tracks one made in the frame as a user
    object (as it does a ``TensorDictParams``), and traces ``nn.Module.__delattr__`` on it."""

    def __init__(self, x):
        super().__init__()
        self.w = torch.nn.Parameter(x + 1)
        self.a = 3

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def delete_on_module_made_in_frame(x):
    out = []
    m = CtxModule(x)
    try:
        del m.foo
    except AttributeError:
        out.append("AttributeError")
    del m.a
    out.append(hasattr(m, "a"))
    return out, x + 1


def test_delete_on_module_made_in_frame_equals_eager():
    """Fuzzer seed 11002453 of seed 11 on 2.8 (``del o.missing`` on a ``TensorDictParams``
    built in the frame): ``super().__delattr__`` records the deletion without a lookup, so
    the missing one raised nothing (wrong on 2.8 with and without tdcompat); now a graph
    break. Two calls with different inputs, compared with eager."""
    torch._dynamo.reset()
    compiled = torch.compile(delete_on_module_made_in_frame, backend="eager")
    for call in (1, 2):
        x = torch.randn(3) * call
        expected = snapshot(delete_on_module_made_in_frame(x.clone()))
        got = snapshot(compiled(x.clone()))
        assert not diff(expected, got, "call"), diff(expected, got, "call")


class Named(torch.nn.Module):
    """A value-based ``__hash__``/``__eq__``: two modules with one name are one set element."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.w = torch.nn.Parameter(torch.ones(2))

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, Named) and other.name == self.name


def modules_with_equal_hashes(a, b, x):
    y = x * a.w + b.w
    return y, len({a, b})


def test_distinct_modules_with_equal_hashes_are_never_merged_wrongly():
    """``module-overridden-hash`` (2.10-2.12) answers set membership of such modules by
    identity; for two distinct modules whose hashes are equal CPython asks ``__eq__``, so the
    trace graph-breaks there (under ``fullgraph=True`` it raises, elsewhere it equals eager).
    Without the patch 2.10-2.12 break earlier, at the hash; other releases compile it natively."""
    from torch._dynamo.exc import Unsupported

    if not _applied("module-overridden-hash"):
        # Measured natively: 2.13.0 returns len 2 where eager says 1 (silently wrong, outside
        # tdcompat's families; 2.14.1 and 2.15.0 are right); 2.5-2.9 equal eager.
        pytest.skip("module-overridden-hash is not applied on this torch")
    for call in (1, 2):
        a, b, x = Named("p"), Named("p" if call == 1 else "q"), torch.randn(2) * call
        torch._dynamo.reset()
        expected = snapshot(modules_with_equal_hashes(a, b, x.clone()))
        got = snapshot(torch.compile(modules_with_equal_hashes, backend="eager")(a, b, x.clone()))
        assert not diff(expected, got, "call"), diff(expected, got, "call")
        if call == 1:  # applied here (skipped above otherwise)
            torch._dynamo.reset()
            with pytest.raises(Unsupported, match="equal hashes|overridden __hash__"):
                torch.compile(modules_with_equal_hashes, backend="eager", fullgraph=True)(a, b, x.clone())


class Hidden:
    c = 5

    def __init__(self, x):
        self.a = x

    @property
    def p(self):
        return 100


def made_write_then_read(x):
    o = Hidden(x)
    o.__dict__["p"] = 3
    return o.p * x, getattr(o, "p", None), hasattr(o, "p"), o


def made_setdefault_then_read(x):
    o = Hidden(x)
    return o.__dict__.setdefault("p", 3), o.p * x, o


def made_pop_then_hasattr(x):
    o = Hidden(x)
    o.__dict__["p"] = 3
    return o.__dict__.pop("p", 4), hasattr(o, "p"), x + 1, o


def made_delete_class_key_then_read(x):
    o = Hidden(x)
    o.__dict__["c"] = 3
    o.__dict__.pop("c")
    return hasattr(o, "c"), getattr(o, "c", 0) * x, o


def made_dict_kept_then_read(x):
    """The frame holds ``o.__dict__`` in a local and writes through it after the read."""
    o = Hidden(x)
    d = o.__dict__
    d["p"] = 3
    seen = o.p
    d["q"] = x - 1
    return seen, o.q, o


MADE_IN_FRAME = [made_write_then_read, made_setdefault_then_read, made_pop_then_hasattr,
                 made_delete_class_key_then_read, made_dict_kept_then_read]


@pytest.mark.parametrize("fn", MADE_IN_FRAME, ids=[f.__name__ for f in MADE_IN_FRAME])
def test_made_in_frame_equals_eager(fn):
    """Reads of a key the frame wrote or deleted through ``__dict__`` on an object it made:
    equal to eager on two calls (compiled, or broken where tdcompat breaks). Without tdcompat
    2.8-2.12 return the written value for the property (silently wrong); on 2.12 tdcompat
    compiles them under ``fullgraph=True``, checked here too."""
    from packaging.version import Version

    release = Version(Version(torch.__version__.split("+")[0]).base_version)
    _equals_eager_on_two_calls(fn, (False, True) if release >= Version("2.12") else (False,))


def _equals_eager_on_two_calls(fn, fullgraphs, break_allowed: bool = False) -> None:
    """``fn(x)`` compiled equals eager on two calls with different ``x``, for each ``fullgraph``;
    with ``break_allowed`` a graph break under ``fullgraph=True`` is accepted (never a difference)."""
    for fullgraph in fullgraphs:
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
        for call in (1, 2):
            torch.manual_seed(call)
            x = torch.randn(3) * call
            expected = snapshot(fn(x.clone()))
            try:
                got = snapshot(compiled(x.clone()))
            except torch._dynamo.exc.Unsupported:
                if not (break_allowed and fullgraph):
                    raise
                break
            assert not diff(expected, got, "call"), (fullgraph, diff(expected, got, "call"))


class Resets(abc.ABC):  # noqa: B024 - an ABC without abstract methods, as TorchRL has it
    """A class whose ``__new__`` writes a class attribute (TorchRL's ``Composite``)."""

    written = None

    def __new__(cls, *args, **kwargs):
        cls.flag = cls.written
        return super().__new__(cls)

    def __init__(self, x):
        self.x = x


def make_resets(x):
    o = Resets(x)
    return o.x + 1, Resets.flag, o.flag, type(Resets.flag).__name__


#: (what the class holds before the call, what ``__new__`` writes): the write changes the class.
CHANGING_WRITES = [(True, False), (0, False), (0.0, -0.0), (-0.0, -0.0), (None, "a"), (1, 1.0), (1, True)]


@pytest.mark.parametrize("held, written", CHANGING_WRITES, ids=[f"{h!r}-to-{w!r}" for h, w in CHANGING_WRITES])
def test_class_write_that_changes_the_class_is_never_skipped(held, written):
    """``class-setattr`` (2.5-2.12) skips ``cls.name = v`` only where the class's own ``__dict__``
    already holds ``v`` (same type, equal, same repr), under a guard on that value. A write
    that changes the class must stay a graph break there (Dynamo cannot mutate a class before
    2.13) and equal eager without ``fullgraph``: the first call compiles with the class holding
    the written value (the write changes nothing), the second finds ``held`` there (guard fails).
    A float is never skipped (its guard is ``==``: ``0.0 == -0.0``)."""
    from torch._dynamo.exc import Unsupported

    torch._dynamo.reset()
    if not _applied("class-setattr"):
        # 2.13 on: Dynamo stores to the class itself; measured on 2.13.0, `o.flag` of an
        # instance made in the frame then still reads the class's old value (wrong natively).
        pytest.skip("class-setattr is not applied on this torch")
    Resets.written = written
    for fullgraph in (False, True):
        torch._dynamo.reset()
        compiled = torch.compile(make_resets, backend="eager", fullgraph=fullgraph)
        for call in (1, 2):
            x = torch.randn(3) * call
            Resets.flag = written if call == 1 else held
            expected = snapshot((make_resets(x), vars(Resets).get("flag")))
            Resets.flag = written if call == 1 else held
            if fullgraph and (call == 2 or type(written) is float):  # a float is never skipped
                with pytest.raises(Unsupported):
                    compiled(x)
                continue
            got = snapshot((compiled(x), vars(Resets).get("flag")))
            assert not diff(expected, got, "call"), (fullgraph, diff(expected, got, "call"))


# -- the whole instance dict (dunder-dict-views, <2.12; dunder-dict-order, 2.12+) ------------------
class Three:
    def __init__(self, x):
        self.a = x
        self.b = 2
        self.c = 3.0


def readd_then_iterate(x):
    """A key deleted and stored again moves to the end in CPython; Dynamo's record keeps its
    place (silently wrong on 2.13 without tdcompat; tdcompat breaks on 2.5-2.15)."""
    o = Three(x)
    del o.a
    o.a = x + 1
    return [k for k in o.__dict__.keys()], x * 2


def view_returned(x):
    """A view that outlives the frame: on 2.5-2.11 tdcompat's views break there (they are not the
    object's dict)."""
    o = Three(x)
    return x + 1, o.__dict__.keys(), o


def view_alive_at_break(x):
    """An iterator over the instance dict alive at a graph break in the frame that made it."""
    o = Three(x)
    out = []
    for k, _v in o.__dict__.items():
        out.append(k)
        torch._dynamo.graph_break()
    return out, x * 2


class EarlyAttr(torch.nn.Module):
    """An attribute set before ``nn.Module.__init__``: eager's instance dict starts with it,
    Dynamo's placeholder for a module made in the frame with ``nn.Module``'s bookkeeping."""

    def __init__(self, x):
        object.__setattr__(self, "first", 1)
        super().__init__()
        self.w = x


def early_attr_order(x):
    m = EarlyAttr(x)
    return [k for k in m.__dict__.keys()][:3], x + 1


def add_during_values(x):
    """A key added while iterating values(): CPython raises RuntimeError at the next step."""
    o = Three(x)
    out = []
    try:
        for v in o.__dict__.values():
            o.d = 1
            out.append(type(v).__name__)
    except RuntimeError:
        out.append("RuntimeError")
    return out, x


def dict_returned_alone(x):
    """The dict leaves the frame without its object: 2.12+ rebuilt it as ``{}`` (dunder-dict-escape)."""
    o = Three(x)
    o.d = x * 2
    return o.__dict__, x + 1


def dict_held_across_break(x):
    """The dict is live at a graph break and the object changes after it: 2.12+ rebuilt it as a
    copy, which misses the later store (dunder-dict-escape)."""
    o = Three(x)
    d = o.__dict__
    torch._dynamo.graph_break()
    o.z = x + 5
    return d, x * 2


def dict_and_object_returned(x):
    """Both leave the frame: eager's dict *is* ``vars(o)`` (a copy on 2.12+ without dunder-dict-escape)."""
    o = Three(x)
    o.d = x - 1
    return o.__dict__, o


#: Wrong natively on 2.12+ and right only with ``dunder-dict-escape``.
ESCAPES = [dict_returned_alone, dict_held_across_break]

WHOLE_DICT = [readd_then_iterate, view_returned, view_alive_at_break, early_attr_order, add_during_values,
              *ESCAPES]


@pytest.mark.parametrize("fn", WHOLE_DICT, ids=[f.__name__ for f in WHOLE_DICT])
def test_whole_instance_dict_equals_eager(fn):
    """Keys, views and iteration of an instance dict the frame changed: equal to eager on two
    calls without ``fullgraph`` on every release, and under ``fullgraph=True`` either equal or a
    graph break, never a different result (the fuzzer's ``d_*_iter`` ops found the 2.12+ ones)."""
    _equals_eager_on_two_calls(fn, (False, True), break_allowed=True)


def test_escaping_dict_is_the_objects_own():
    """The returned dict is ``vars(o)`` of the returned object, as in eager, on two calls under
    ``fullgraph=True``; where ``dunder-dict-escape`` applies (2.12+) a copy without it."""

    def identical(compiled):
        for call in (1, 2):
            x = torch.randn(3) * call
            d, o = compiled(x)
            ed, eo = dict_and_object_returned(x)
            assert list(d) == list(ed) and all(torch.equal(d[k], ed[k]) for k in ("a", "d"))
            if d is not vars(o):
                return False
        return True

    torch._dynamo.reset()
    assert identical(torch.compile(dict_and_object_returned, backend="eager", fullgraph=True))
    if not _applied("dunder-dict-escape"):
        return
    with _without("dunder-dict-escape"):
        assert not identical(torch.compile(dict_and_object_returned, backend="eager", fullgraph=True))


@pytest.mark.parametrize("fn", ESCAPES, ids=[f.__name__ for f in ESCAPES])
def test_escaping_dict_is_wrong_without_its_patch(fn):
    """Where ``dunder-dict-escape`` applies (2.12+), the same program differs from eager without it."""
    if not _applied("dunder-dict-escape"):
        pytest.skip("dunder-dict-escape is not applied on this torch")
    with _without("dunder-dict-escape"):
        x = torch.randn(3)
        assert diff(snapshot(fn(x.clone())), snapshot(torch.compile(fn, backend="eager")(x.clone())), "call")


def readd_then_break(x):
    """``del o.a; o.a = v`` on an object made in the frame, then a graph break: the rebuilt object's
    ``__dict__`` has ``a`` first on 2.5-2.13 without ``readd-order`` (CPython: last)."""
    o = Three(x)
    del o.a
    o.a = x + 1
    torch._dynamo.graph_break()
    return list(vars(o)), x * 2


def test_readd_rebuilds_in_cpython_order():
    """Equal to eager with tdcompat; where ``readd-order`` applies (2.5-2.13), different without it."""
    _equals_eager_on_two_calls(readd_then_break, (False,))
    if not _applied("readd-order"):
        return
    with _without("readd-order"):
        x = torch.randn(3)
        assert torch.compile(readd_then_break, backend="eager")(x)[0] != readd_then_break(x)[0]
