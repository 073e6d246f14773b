"""Registry, installer and controls, proven on patch-shaped test doubles.

Each double targets a throwaway class in a throwaway module, so these tests
exercise exactly the code paths of real patches without touching Dynamo.
"""

import re
import sys
import threading
import types

import pytest
import torch

from tdcompat import lifecycle
from tdcompat.registry import Registry, State, TdcompatError, TdcompatWarning
from tdcompat.spec import Patch, Target
from tdcompat.wrappers import DEFER, fail_safe, gate

MODULE = "tdcompat_test_double_target"


class Base:
    def greet(self, name):
        return f"hello {name}"


class Child(Base):
    pass


class Other:
    def greet(self, name):
        return f"hi {name}"


@pytest.fixture(autouse=True)
def fresh_warning_memo(monkeypatch):
    """Handler failures warn once per process; each test must see its own first warning."""
    from tdcompat import wrappers

    monkeypatch.setattr(wrappers, "_reported", set())


@pytest.fixture(autouse=True)
def target_module():
    module = types.ModuleType(MODULE)
    module.Base, module.Child, module.Other = Base, Child, Other
    sys.modules[MODULE] = module
    originals = {k: dict(vars(c)) for k, c in (("Base", Base), ("Child", Child), ("Other", Other))}
    yield module
    del sys.modules[MODULE]
    from tdcompat import installer

    for key in [k for k in installer._METHODS if k[0] in (Base, Child, Other)]:  # a test that did not revert
        del installer._METHODS[key]
    for name, klass in (("Base", Base), ("Child", Child), ("Other", Other)):  # undo whatever a test left
        for attr in set(vars(klass)) - set(originals[name]):
            delattr(klass, attr)
        for attr, value in originals[name].items():
            if vars(klass).get(attr) is not value:
                setattr(klass, attr, value)


def answering(patch_name, match, reply):
    """A patch-shaped handler: ``reply`` for the argument ``match``, DEFER for any other."""

    @fail_safe(patch_name)
    def handler(wrapped, instance, args, kwargs):
        (name,) = args
        return reply if name == match else DEFER

    return handler


shout = answering("double", "x", "HELLO X")


@fail_safe("double-broken")
def broken(wrapped, instance, args, kwargs):
    raise KeyError("the patch author did not foresee this")


def make(name="double", owner="Base", attribute="greet", spec=">=2.5", handler=shout, **kw):
    return Patch(name=name, fixes="test", upstream="none", mirrors="none", torch=spec,
                 targets=(Target(MODULE, owner, attribute, handler, **kw),))


def test_apply_wraps_and_defers():
    reg = Registry([make()])
    assert reg.apply("double", strict=False) is State.APPLIED
    assert Base().greet("x") == "HELLO X"
    assert Base().greet("y") == "hello y"  # not the pattern: original behaviour
    reg.revert("double", "t")


def test_revert_restores_the_same_object():
    original = vars(Base)["greet"]
    reg = Registry([make()])
    reg.apply("double", strict=False)
    assert vars(Base)["greet"] is not original
    assert reg.revert("double", "test")
    assert vars(Base)["greet"] is original


def test_apply_and_revert_are_idempotent():
    original = vars(Base)["greet"]
    reg = Registry([make()])
    reg.apply("double", strict=False)
    wrapper = vars(Base)["greet"]
    assert reg.apply("double", strict=False) is State.APPLIED
    assert vars(Base)["greet"] is wrapper  # not wrapped twice
    assert reg.revert("double", "t") is True
    assert reg.revert("double", "t") is False
    assert vars(Base)["greet"] is original


def test_inherited_method_is_installed_and_removed_on_the_subclass():
    reg = Registry([make(owner="Child", inherited=True)])
    reg.apply("double", strict=False)
    assert "greet" in vars(Child) and Child().greet("x") == "HELLO X" and Base().greet("x") == "hello x"
    reg.revert("double", "t")
    assert "greet" not in vars(Child)


@pytest.mark.parametrize("order", ["subclass first", "base first"])
def test_an_inherited_wrapper_follows_the_base_method_as_patched_now(order):
    """A subclass's wrapper over an inherited method reaches the base's method at call time: a patch
    on the base, reverted (or applied) after the subclass's, must stop (or start) answering there too."""
    base_patch = make("double-base", handler=answering("double-base", "y", "BASE Y"))
    child_patch = make(owner="Child", inherited=True)
    reg = Registry([base_patch, child_patch])
    names = ["double", "double-base"] if order == "subclass first" else ["double-base", "double"]
    for name in names:
        reg.apply(name, strict=False)
    assert (Child().greet("x"), Child().greet("y"), Child().greet("z")) == ("HELLO X", "BASE Y", "hello z")
    reg.revert("double-base", "t")
    assert (Child().greet("x"), Child().greet("y")) == ("HELLO X", "hello y")
    reg.apply("double-base", strict=False)
    assert Child().greet("y") == "BASE Y"
    reg.revert("double", "t")
    reg.revert("double-base", "t")
    assert "greet" not in vars(Child) and Child().greet("y") == "hello y"


def test_optional_targets_install_the_names_this_torch_has():
    """A method renamed between releases: each name is an optional target; those present are wrapped."""
    patch = Patch(name="double", fixes="test", upstream="none", mirrors="none", torch=">=2.5",
                  targets=(Target(MODULE, "Base", "greet_v1", shout, optional=True),
                           Target(MODULE, "Base", "greet", shout, optional=True)))
    original = vars(Base)["greet"]
    reg = Registry([patch])
    assert reg.apply("double", strict=False) is State.APPLIED
    assert Base().greet("x") == "HELLO X" and "greet_v1" not in vars(Base)
    reg.revert("double", "t")
    assert vars(Base)["greet"] is original


def test_install_and_revert_drop_handlers_bound_to_the_old_method():
    """Dynamo's BuiltinVariable keeps bound call_<builtin> handlers in call_function_handler_cache."""
    Base.call_function_handler_cache = {"type": Base().greet}
    reg = Registry([make()])
    reg.apply("double", strict=False)
    assert Base.call_function_handler_cache == {}
    Base.call_function_handler_cache["type"] = Base().greet
    reg.revert("double", "t")
    assert Base.call_function_handler_cache == {}


def test_optional_targets_none_present_is_not_applicable():
    patch = Patch(name="double", fixes="test", upstream="none", mirrors="none", torch=">=2.5",
                  targets=(Target(MODULE, "Base", "greet_v1", shout, optional=True),
                           Target(MODULE, "Base", "greet_v2", shout, optional=True)))
    reg = Registry([patch])
    with pytest.warns(TdcompatWarning, match="greet_v1 does not exist.*greet_v2 does not exist"):
        assert reg.apply("double", strict=False) is State.NOT_APPLICABLE
    assert "greet_v1" not in vars(Base) and "greet_v2" not in vars(Base)


def patch_of(*targets):
    return Patch(name="double", fixes="test", upstream="none", mirrors="none", torch=">=2.5", targets=targets)


def test_target_this_torch_has_no_use_for_is_left_out():
    """``when`` False: that method is not wrapped (no cost on this torch); the patch's other
    targets go in. A ``when`` that raises counts as True (the handler defers by itself)."""
    def never():
        """Only where never."""
        return False

    def broken():
        raise RuntimeError("odd torch")

    original = vars(Base)["greet"]
    reg = Registry([patch_of(Target(MODULE, "Base", "greet", shout, when=never),
                             Target(MODULE, "Other", "greet", shout, when=broken))])
    assert reg.apply("double", strict=False) is State.APPLIED
    assert vars(Base)["greet"] is original and Base().greet("x") == "hello x"
    assert Other().greet("x") == "HELLO X"
    reg.revert("double", "t")
    assert Other().greet("x") == "hi x"


def test_patch_whose_every_target_is_unused_is_not_applicable():
    reg = Registry([patch_of(Target(MODULE, "Base", "greet", shout, when=lambda: False))])
    with pytest.warns(TdcompatWarning, match="greet: not needed on this torch"):
        assert reg.apply("double", strict=False) is State.NOT_APPLICABLE
    assert "greet" in vars(Base) and Base().greet("x") == "hello x"


def test_added_target_adds_the_method_and_revert_deletes_it():
    """An upstream fix that *is* a new method (``BuiltinVariable.call_vars`` in 2.9): added,
    and a handler that defers gets the stub's ``None`` (Dynamo's "no handler")."""
    patch = Patch(name="double", fixes="test", upstream="none", mirrors="none", torch=">=2.5",
                  targets=(Target(MODULE, "Base", "call_vars", answering("double", "x", "handled"), added=True),))
    reg = Registry([patch])
    assert reg.apply("double", strict=False) is State.APPLIED
    assert Base().call_vars("x") == "handled" and Base().call_vars("y") is None
    assert Child().call_vars("x") == "handled"
    reg.revert("double", "t")
    assert "call_vars" not in vars(Base) and not hasattr(Child(), "call_vars")


def test_added_target_on_a_class_that_has_it_is_not_applicable():
    patch = Patch(name="double", fixes="test", upstream="none", mirrors="none", torch=">=2.5",
                  targets=(Target(MODULE, "Base", "greet", shout, added=True),))
    original = vars(Base)["greet"]
    reg = Registry([patch])
    with pytest.warns(TdcompatWarning, match="greet exists already"):
        assert reg.apply("double", strict=False) is State.NOT_APPLICABLE
    assert vars(Base)["greet"] is original


def test_inherited_method_refused_unless_declared():
    reg = Registry([make(owner="Child")])
    with pytest.warns(TdcompatWarning, match="no longer defined on Child itself"):
        assert reg.apply("double", strict=False) is State.NOT_APPLICABLE


@pytest.mark.parametrize("kw, message", [
    (dict(attribute="renamed"), "greet|renamed.*does not exist"),
    (dict(owner="Missing"), "Missing does not exist"),
    (dict(params=("self", "name", "tx")), "lacks parameter"),
])
def test_missing_internals_skip_with_one_warning(kw, message):
    reg = Registry([make(**kw)])
    with pytest.warns(TdcompatWarning, match=message) as record:
        assert reg.apply("double", strict=False) is State.NOT_APPLICABLE
        assert reg.apply("double", strict=False) is State.NOT_APPLICABLE
    assert len([w for w in record if issubclass(w.category, TdcompatWarning)]) == 1
    status = {s.name: s for s in reg.status()}["double"]
    assert status.state is State.NOT_APPLICABLE and "double" in status.name
    assert Base().greet("x") == "hello x"


def test_strict_turns_skip_into_error():
    reg = Registry([make(attribute="renamed")])
    with pytest.raises(TdcompatError, match="patch 'double' skipped"):
        reg.apply("double", strict=True)


def test_all_or_nothing_when_one_target_is_missing():
    patch = Patch(name="double", fixes="t", upstream="t", mirrors="t", torch=">=2.5",
                  targets=(Target(MODULE, "Other", "greet", shout), Target(MODULE, "Base", "nope", shout)))
    reg = Registry([patch])
    with pytest.warns(TdcompatWarning):
        reg.apply("double", strict=False)
    assert Other().greet("x") == "hi x"  # first target untouched


def test_handler_failure_defers_to_original_and_warns():
    reg = Registry([make(name="double-broken", handler=broken)])
    reg.apply("double-broken", strict=False)
    with pytest.warns(TdcompatWarning, match="failed in broken.*original behaviour was used"):
        assert Base().greet("x") == "hello x"
    reg.revert("double-broken", "t")


def test_handler_failure_raises_under_strict(monkeypatch):
    monkeypatch.setenv("TDCOMPAT_STRICT", "1")
    reg = Registry([make(name="double-broken", handler=broken)])
    reg.apply("double-broken", strict=False)
    with pytest.raises(TdcompatError, match="double-broken"):
        Base().greet("x")
    reg.revert("double-broken", "t")


def test_unexpected_arguments_defer():
    reg = Registry([make()])
    reg.apply("double", strict=False)
    with pytest.warns(TdcompatWarning, match="ValueError"):  # handler's unpacking fails: original runs
        with pytest.raises(TypeError):  # ... and the original raises its own TypeError, as unpatched
            Base().greet("x", "unforeseen")
    reg.revert("double", "t")


def test_threads_apply_and_revert_consistently():
    original = vars(Base)["greet"]
    reg = Registry([make()])
    barrier = threading.Barrier(8)

    def worker(i):
        barrier.wait()
        for _ in range(200):
            reg.apply("double", strict=False) if i % 2 else reg.revert("double", "t")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if reg.is_applied("double"):
        assert vars(Base)["greet"].__wrapped__ is original  # wrapped exactly once
        reg.revert("double", "t")
    assert vars(Base)["greet"] is original


def test_activation_states(monkeypatch):
    patches = [make("double"), make("double-old", owner="Other", spec="<2.5"),
               make("double-off", owner="Child", inherited=True)]
    reg = Registry(patches)
    monkeypatch.setenv("TDCOMPAT_DISABLE", "double-off")
    applied = lifecycle.activate(reg, None, explicit=False)
    states = {s.name: s.state for s in reg.status()}
    assert applied == ["double"]
    assert states == {"double": State.APPLIED, "double-old": State.NOT_NEEDED, "double-off": State.DISABLED}
    assert lifecycle.deactivate(reg, None) == ["double"]
    assert {s.name: s.state for s in reg.status()}["double"] is State.DISABLED


def test_activation_unknown_disable_name_applies_nothing(monkeypatch):
    reg = Registry([make()])
    monkeypatch.setenv("TDCOMPAT_DISABLE", "dobule")
    with pytest.warns(TdcompatWarning, match="unknown patch name 'dobule'.*valid names are: double"):
        assert lifecycle.activate(reg, None, explicit=False) == []
    assert Base().greet("x") == "hello x"
    with pytest.raises(Exception, match="valid names are"):
        lifecycle.activate(reg, None, explicit=True)


def test_activation_unknown_name_argument():
    reg = Registry([make()])
    with pytest.raises(ValueError, match="unknown patch name 'nope'"):
        lifecycle.activate(reg, ["nope"], explicit=True)
    with pytest.raises(ValueError, match="unknown patch name 'nope'"):
        lifecycle.deactivate(reg, ["nope"])


def test_duplicate_names_rejected():
    with pytest.raises(ValueError, match="duplicate"):
        Registry([make(), make()])


def test_two_patches_on_one_method_share_one_wrapper():
    """The installer owns the wrapper: each patch's handler runs in the order applied, one
    that defers passes the call on, and each patch reverts alone."""
    from tdcompat.installer import wrapped_methods

    original = vars(Base)["greet"]
    reg = Registry([make("double"), make("quiet", handler=answering("quiet", "y", "psst y"))])
    reg.apply("double", strict=False)
    alone = vars(Base)["greet"]
    reg.apply("quiet", strict=False)
    assert wrapped_methods()[f"{MODULE}.Base.greet"] == ["double", "quiet"]
    assert [Base().greet(n) for n in "xyz"] == ["HELLO X", "psst y", "hello z"]
    assert reg.revert("double", "t")
    assert [Base().greet(n) for n in "xyz"] == ["hello x", "psst y", "hello z"]
    assert wrapped_methods()[f"{MODULE}.Base.greet"] == ["quiet"]
    assert vars(Base)["greet"] is not alone
    assert reg.revert("quiet", "t")
    assert vars(Base)["greet"] is original and f"{MODULE}.Base.greet" not in wrapped_methods()


def test_a_later_handler_failing_after_the_first_deferred_falls_back_once():
    """The fail-safe of each handler holds inside the chain: ``broken`` runs second, fails
    before any effect, and Dynamo's method (the original here) runs once."""
    calls = []

    class Counting(Base):
        def greet(self, name):
            calls.append(name)
            return f"hello {name}"

    sys.modules[MODULE].Counting = Counting
    reg = Registry([make("double", owner="Counting"), make("double-broken", owner="Counting", handler=broken)])
    reg.apply("double", strict=False)
    reg.apply("double-broken", strict=False)
    with pytest.warns(TdcompatWarning, match="failed in broken"):
        assert Counting().greet("z") == "hello z"
    assert calls == ["z"]
    assert Counting().greet("x") == "HELLO X" and calls == ["z"]
    reg.revert("double-broken", "t")
    reg.revert("double", "t")
    assert vars(Counting)["greet"] is Counting.__dict__["greet"] and not hasattr(vars(Counting)["greet"], "__wrapped__")


# -- patches that need other patches ---------------------------------------------------
def _dep_patches(dep_spec=">=2.5", dep_attr="greet"):
    """``user`` needs ``base``; declared before it, so order must come from ``needs``."""
    import dataclasses

    user = dataclasses.replace(make("user", owner="Other"), needs=("base",))
    return [user, make("base", attribute=dep_attr, spec=dep_spec)]


def test_needed_patch_is_applied_first():
    reg = Registry(_dep_patches())
    assert reg.order == ["base", "user"]
    assert reg.needed_by("base") == ["user"]
    assert lifecycle.activate(reg, None, explicit=False) == ["base", "user"]
    lifecycle.deactivate(reg, None)


def test_disabling_a_needed_patch_disables_its_dependents(monkeypatch):
    reg = Registry(_dep_patches())
    monkeypatch.setenv("TDCOMPAT_DISABLE", "base")
    assert lifecycle.activate(reg, None, explicit=False) == []
    status = {s.name: s for s in reg.status()}
    assert status["user"].state is State.DISABLED and "needs 'base'" in status["user"].reason
    assert Other().greet("x") == "hi x"


def test_a_needed_patch_that_cannot_apply_disables_its_dependents_with_a_warning():
    reg = Registry(_dep_patches(dep_attr="renamed"))
    with pytest.warns(TdcompatWarning, match="patch 'user' skipped: needs 'base'.*not applicable"):
        assert lifecycle.activate(reg, None, explicit=False) == []
    assert Other().greet("x") == "hi x"


def test_a_need_this_torch_does_not_have_is_no_obstacle():
    reg = Registry(_dep_patches(dep_spec="<2.5"))  # fixed natively here: nothing to need
    assert lifecycle.activate(reg, None, explicit=False) == ["user"]
    assert {s.name: s.state for s in reg.status()}["base"] is State.NOT_NEEDED
    lifecycle.deactivate(reg, None)


def test_unpatching_a_needed_patch_reverts_its_dependents_first():
    reg = Registry(_dep_patches())
    lifecycle.activate(reg, None, explicit=False)
    assert lifecycle.deactivate(reg, ["base"]) == ["user", "base"]
    assert {s.name: s.state for s in reg.status()}["user"] is State.DISABLED
    assert Other().greet("x") == "hi x" and Base().greet("x") == "hello x"


def test_patch_by_name_brings_what_it_needs():
    reg = Registry(_dep_patches())
    assert lifecycle.activate(reg, ["user"], explicit=True) == ["base", "user"]
    lifecycle.deactivate(reg, None)


@pytest.mark.parametrize("needs, message", [(("nope",), "needs unknown patch 'nope'"), (("user",), "cycle")])
def test_bad_needs_rejected(needs, message):
    import dataclasses

    with pytest.raises(ValueError, match=message):
        Registry([dataclasses.replace(make("user"), needs=needs)])


# -- a handler that fails after it had effects never runs the original -------------------
calls = []


@fail_safe("double-half-way")
def half_way(wrapped, instance, args, kwargs):
    from tdcompat.wrappers import effects_begin

    effects_begin()
    calls.append("handler effect")
    raise KeyError("failed after its effect")


@fail_safe("double-after-original")
def after_original(wrapped, instance, args, kwargs):
    wrapped(*args, **kwargs)
    raise KeyError("failed after calling the original")


@pytest.mark.parametrize("handler", [half_way, after_original])
def test_handler_failure_after_effects_graph_breaks(handler):
    from torch._dynamo.exc import Unsupported

    original = Base.greet
    seen = []
    Base.greet = lambda self, name: seen.append(name) or f"hello {name}"
    try:
        reg = Registry([make(handler.__name__, handler=handler)])
        reg.apply(handler.__name__, strict=False)
        with pytest.warns(TdcompatWarning, match="graph-breaks instead"):
            with pytest.raises(Unsupported, match="tdcompat patch failed after it had effects") as info:
                Base().greet("x")
        assert isinstance(info.value.__cause__, KeyError)
        # The original ran at most once: only where the handler itself called it.
        assert seen == (["x"] if handler is after_original else [])
        reg.revert(handler.__name__, "t")
    finally:
        Base.greet = original


def test_a_disabled_need_this_torch_does_not_have_is_no_obstacle(monkeypatch):
    reg = Registry(_dep_patches(dep_spec="<2.5"))
    monkeypatch.setenv("TDCOMPAT_DISABLE", "base")
    assert lifecycle.activate(reg, None, explicit=False) == ["user"]
    lifecycle.deactivate(reg, None)


# -- the plan: one pure function decides each state, activation applies it ----------------
def _plan(patches, settings=None, installed=None, version=None):
    return lifecycle.plan(patches, version or torch.__version__, settings or lifecycle.Settings(), installed)


def _chain():
    """``c`` needs ``b`` needs ``a``; ``old`` is fixed natively on every torch the suite runs."""
    import dataclasses

    return [make("a"), dataclasses.replace(make("b", owner="Other"), needs=("a",)),
            dataclasses.replace(make("c", owner="Child", inherited=True), needs=("b",)),
            make("old", attribute="call_vars", spec="<2.5", added=True)]


@pytest.mark.parametrize("disable", ["", "a", "b", "old", "*"])
def test_plan_is_pure_and_is_what_activation_records(monkeypatch, disable):
    patches = _chain()
    reg = Registry(patches)
    monkeypatch.setenv("TDCOMPAT_DISABLE", disable)
    before = {k: dict(vars(c)) for k, c in (("Base", Base), ("Child", Child), ("Other", Other))}
    planned = _plan(patches, lifecycle.read_settings(reg.names))
    assert planned == _plan(patches, lifecycle.read_settings(reg.names))  # same inputs, same answer
    # ... and nothing changed: no class, no registry state
    assert {k: dict(vars(c)) for k, c in (("Base", Base), ("Child", Child), ("Other", Other))} == before
    assert {d.state for d in reg.decisions().values()} == {State.PENDING}
    assert list(planned) == reg.names  # declaration order, as status() lists them
    applied = lifecycle.activate(reg, None, explicit=False)
    assert reg.decisions() == planned
    assert applied == [n for n in reg.order if planned[n].state is State.APPLIED]
    assert all(reg.is_applied(n) == (planned[n].state is State.APPLIED) for n in reg.names)
    lifecycle.deactivate(reg, None)


def test_plan_of_a_users_choice_and_of_a_patch_that_cannot_go_in():
    off = _plan(_chain(), lifecycle.Settings(disabled=frozenset({"a"})))
    assert off["a"] == (State.DISABLED, "disabled by TDCOMPAT_DISABLE", True, False)
    assert off["b"].state is State.DISABLED and off["b"].choice and not off["b"].warn  # goes along, quietly
    assert off["c"].choice and "it needs 'a'" in off["c"].reason  # the root is named
    assert off["old"].state is State.NOT_NEEDED
    # What installing a gave: the plan around it. b is skipped (a warning); c is not a choice either
    # (the doctor flags it), and is quiet as before: the warning is b's, and c's reason names a.
    failed = lifecycle.Decision(State.NOT_APPLICABLE, "greet_v9 does not exist", warn=True)
    around = _plan(_chain(), installed={"a": failed})
    assert around["a"] is failed
    assert around["b"].state is State.DISABLED and not around["b"].choice and around["b"].warn
    assert "which is not applicable" in around["b"].reason
    assert around["c"].state is State.DISABLED and not around["c"].choice and not around["c"].warn
    assert _plan(_chain())["c"] == (State.APPLIED, f"needed on torch {torch.__version__} (range >=2.5)", False, False)


def test_plan_of_requested_names_brings_what_they_need():
    planned = _plan(_chain(), lifecycle.Settings(requested=frozenset({"b"})))
    assert [n for n, d in planned.items() if d.state is State.APPLIED] == ["a", "b"]
    assert planned["c"] == (State.DISABLED, "not requested", True, False)


@pytest.mark.parametrize("settings, version, expected", [
    (lifecycle.Settings(error="TDCOMPAT_DISABLE='x': bad"), None,
     (State.DISABLED, "not applied: TDCOMPAT_DISABLE='x': bad")),
    (lifecycle.Settings(), "garbage",
     (State.NOT_APPLICABLE, "tdcompat cannot read torch version 'garbage'; no patch is applied")),
])
def test_plan_when_nothing_can_apply_keeps_what_is_in_place(settings, version, expected):
    in_place = lifecycle.Decision(State.APPLIED, "needed on torch 2.5.1 (range >=2.5)")
    planned = _plan(_chain(), settings, {"a": in_place}, version)
    assert planned["a"] is in_place  # status says what is true: activation does not take it out
    assert {tuple(planned[n][:2]) for n in ("b", "c", "old")} == {expected}
    assert lifecycle.global_problem(version or torch.__version__, settings)[:2] == expected


def test_a_patch_that_cannot_go_in_is_planned_around_by_activation():
    patches = _chain()
    patches[0] = make("a", attribute="greet_v9")
    reg = Registry(patches)
    with pytest.warns(TdcompatWarning, match="patch 'b' skipped: needs 'a'"):
        assert lifecycle.activate(reg, None, explicit=False) == []
    failed = reg.decision("a")
    assert failed.state is State.NOT_APPLICABLE and "greet_v9 does not exist" in failed.reason
    assert reg.decisions() == _plan(patches, lifecycle.Settings(disabled=frozenset()), {"a": failed})
    assert Other().greet("x") == "hi x"


def test_activation_keeps_what_is_in_place_unless_its_need_goes(monkeypatch):
    """``patch(["b"])`` then ``TDCOMPAT_DISABLE=a,c`` and ``patch()``: a and b stay (activation never
    takes out a patch in place; unpatch() does), as the plan with what is installed says."""
    patches = _chain()
    reg = Registry(patches)
    assert lifecycle.activate(reg, ["b"], explicit=True) == ["a", "b"]
    monkeypatch.setenv("TDCOMPAT_DISABLE", "a,c")
    assert lifecycle.activate(reg, None, explicit=False) == []  # nothing new: a re-patch() resets no cache
    installed = {n: reg.decision(n) for n in ("a", "b")}
    assert reg.decisions() == _plan(patches, lifecycle.read_settings(reg.names), installed)
    assert reg.is_applied("a") and reg.is_applied("b") and reg.state("c") is State.DISABLED
    monkeypatch.setenv("TDCOMPAT_DISABLE", "a,c,bad-name")
    with pytest.raises(ValueError, match="bad-name"):
        lifecycle.activate(reg, None, explicit=True)
    assert reg.state("a") is State.APPLIED and reg.is_applied("a")  # a bad setting does not make status lie
    lifecycle.deactivate(reg, None)


REAL_PLAN = """
    import json, sys, torch, tdcompat
    from tdcompat.installer import wrapped_methods
    from tdcompat.lifecycle import plan, process_registry, read_settings
    settings = read_settings(tdcompat.patch_names())
    planned = plan(tdcompat.patches.ALL_PATCHES, torch.__version__, settings)
    pure = [planned == plan(tdcompat.patches.ALL_PATCHES, torch.__version__, settings),
            [m for m in sys.modules if m.startswith("torch._dynamo")], wrapped_methods(),
            sorted({s.state.value for s in tdcompat.status()})]
    import torch._dynamo
    recorded = process_registry().decisions()
    print(json.dumps([pure, {n: [d.state.value, d.reason] for n, d in planned.items()},
                      {n: [d.state.value, d.reason] for n, d in recorded.items()}, planned == recorded]))
"""


@pytest.mark.parametrize("disable", ["", "mutable-mapping-setattr", "module-deleted-attr,super-delattr", "*"])
def test_plan_of_the_real_patches_is_pure_and_is_what_the_import_applies(disable):
    """On the installed torch: plan() before Dynamo is imported imports nothing of it, applies
    nothing, and is exactly what the first Dynamo import then records (choices and warnings too)."""
    from conftest import last_json, run_python

    pure, planned, recorded, same = last_json(run_python(REAL_PLAN, env={"TDCOMPAT_DISABLE": disable}))
    assert pure == [True, [], {}, ["pending"]]
    assert planned == recorded and same
    states = {state for state, _ in planned.values()}
    assert states <= {"applied", "not needed", "disabled"} and ("applied" in states) == (disable != "*")


def test_is_applied_is_public_and_follows_patch_and_unpatch():
    from conftest import last_json, run_python

    out = last_json(run_python("""
        import json, torch._dynamo, tdcompat
        out = [tdcompat.is_applied("super-delattr")]  # needed on every release
        tdcompat.unpatch(["super-delattr"])
        out.append(tdcompat.is_applied("super-delattr"))
        tdcompat.patch(["super-delattr"])
        out.append(tdcompat.is_applied("super-delattr"))
        try:
            tdcompat.is_applied("super_delattr")
        except ValueError as exc:
            out.append(str(exc))
        print(json.dumps(out))
    """))
    assert out[:3] == [True, False, True]
    assert out[3].startswith("unknown patch name 'super_delattr'; valid names are:")


# -- the way out: every patch is either fixed upstream from a release, or has a PR kit ----
def _real_patches():
    import tdcompat

    return tdcompat.patches.ALL_PATCHES


@pytest.mark.parametrize("patch", _real_patches(), ids=lambda p: p.name)
def test_patch_names_its_way_out(patch):
    import os

    from packaging.specifiers import SpecifierSet

    uppers = [s.version for s in SpecifierSet(patch.torch) if s.operator == "<"]
    kit = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "upstream", patch.name)
    if patch.fixed_upstream:
        release = patch.fixed_upstream.split(":")[0]
        assert uppers == [release], f"{patch.name}: fixed upstream in {release} but range {patch.torch}"
    else:
        assert not uppers, f"{patch.name}: range {patch.torch} ends, so name the release that fixed it"
        for name in ("fix.patch", "PR.md"):
            assert os.path.exists(os.path.join(kit, name)), f"{patch.name}: open upstream without {kit}/{name}"


def test_every_kit_is_listed_in_the_upstream_index():
    """docs/upstream/README.md's table names every kit folder (it drifted: nine kits were missing)."""
    import os

    root = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "upstream")
    kits = {name for name in os.listdir(root) if os.path.isdir(os.path.join(root, name))}
    index = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    listed = set(re.findall(r"^\| \[([a-z0-9-]+)/\]", index, re.MULTILINE))
    assert listed == kits, f"missing from the index: {sorted(kits - listed)}; not a kit: {sorted(listed - kits)}"


def test_doctor_upstream_note():
    from tdcompat.doctor import upstream_note
    from tdcompat.registry import PatchStatus

    fixed = PatchStatus("x", State.APPLIED, "", "<2.9", "", "", "", fixed_upstream="2.9: PR #1")
    assert upstream_note(fixed) == "fixed upstream in torch 2.9 (PR #1): upgrading to 2.9 lets you drop it"
    open_ = PatchStatus("y", State.APPLIED, "", ">=2.5", "", "", "")
    assert upstream_note(open_) == "open upstream: see docs/upstream/y/ (its PR; in tdcompat's sdist and repository)"


# -- version history: one place per patch, rendered in docs/compatibility.md ------------------
_RELEASES = re.compile(r"^(\d+)\.(\d+)(?:-(\d+)\.(\d+)|(\+))?$")  # 2.12, 2.5-2.11, 2.13+


@pytest.mark.parametrize("patch", _real_patches(), ids=lambda p: p.name)
def test_patch_history_covers_every_release_oldest_first(patch):
    """``history`` is pairs of non-empty strings; the ranges run from 2.5 without gap or overlap
    and end at 2.15 or open-ended (``2.13+``), so the rendered table says something for every release."""
    assert patch.history, f"{patch.name}: no history"
    expected_start = (2, 5)
    for i, entry in enumerate(patch.history):
        assert isinstance(entry, tuple) and len(entry) == 2, f"{patch.name}: {entry!r} is not a pair"
        releases, behaviour = entry
        assert isinstance(behaviour, str) and behaviour.strip(), f"{patch.name}: empty behaviour for {releases!r}"
        match = _RELEASES.match(releases) if isinstance(releases, str) else None
        assert match, f"{patch.name}: {releases!r} is not X.Y, X.Y-X.Y or X.Y+"
        start = (int(match[1]), int(match[2]))
        end = (int(match[3]), int(match[4])) if match[3] else start
        want = "%d.%d" % expected_start
        assert start == expected_start, f"{patch.name}: {releases!r} should start at {want} (no gap, no overlap)"
        assert end >= start, f"{patch.name}: {releases!r} ends before it starts"
        if match[5]:
            assert i == len(patch.history) - 1, f"{patch.name}: {releases!r} is open-ended but not last"
        expected_start = (end[0], end[1] + 1)
    assert match[5] or end >= (2, 15), f"{patch.name}: history stops at {releases!r}, before 2.15"


def test_compatibility_doc_renders_every_history():
    """docs/compatibility.md is regenerated after a history changes (scripts/gen_compatibility.py)."""
    import importlib.util
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.join(root, "scripts", "gen_compatibility.py")
    spec = importlib.util.spec_from_file_location("gen_compatibility", script)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(os.path.join(root, "docs", "compatibility.md")) as fh:
        doc = fh.read()
    for patch in _real_patches():
        assert f"### `{patch.name}` (`{patch.torch}`)" in doc, f"{patch.name}: no history heading in {fh.name}"
    assert "\n".join(gen.history_lines(_real_patches())) in doc, (
        "docs/compatibility.md is stale: run python scripts/gen_compatibility.py")


#: Where each real target's ``when`` says its handler is of use (what the docs render), as measured.
WHEN_RELEASES = {
    ("dict-constant-type", "BuiltinVariable.call_repr"): ">=2.10",  # call_repr is new in 2.10
    # 2.12 builds an object's instance dict items in SideEffectsProxyDict.get_value___dict__
    ("dict-nan-key-input", "SideEffectsProxyDict.get_value___dict__"): ">=2.12",
    # 2.10 hashes dict keys with get_python_hash (pytorch/pytorch#169204); _HashableTracker moved in 2.12
    ("dict-key-partial-identity", "ConstDictVariable._HashableTracker.__init__"): "<2.10",
    # list_compare is gone in 2.7 (comparisons move into BaseListVariable.call_method)
    ("sequence-compare-identity", "BaseListVariable.list_compare"): "<2.7",
    ("module-mapping-dict", "InstructionTranslatorBase.inline_user_function_return"): ">=2.7",
    ("module-mapping-dict", "BuiltinVariable.call_dict"): "<2.7",  # before construct_dict
    # user objects gained has_force_unpack_var_sequence in 2.9; 2.13 renamed the protocol
    ("module-mapping-dict", "BuiltinVariable.call_list"): "<2.9",
    ("module-mapping-dict", "BuiltinVariable.call_tuple"): "<2.9",
    # 2.12 iterates a copy of a dict tracker's keys; 2.13 added DictViewIterator (the patch starts at 2.12)
    ("dunder-dict-order", "DunderDictVariable.call_method"): "<2.13",
    ("dunder-dict-order", "DictViewVariable.call_method"): "<2.13",
    # issue 26 follow-up (dunder-dict-order): 2.12's own DictItemsVariable.__iter__ and map/filter copies
    ("dunder-dict-order", "DictItemsVariable.call_method"): "<2.13",
    ("dunder-dict-order", "BuiltinVariable.call_map"): "<2.13",
    ("dunder-dict-order", "BuiltinVariable.call_filter"): "<2.13",
    # BuiltinVariable._call_min_max takes key= (measured on 2.14.1 and 2.15.0; not on 2.13.0)
    ("dunder-dict-order", "BuiltinVariable.call_min"): ">=2.14",
    ("dunder-dict-order", "BuiltinVariable.call_max"): ">=2.14",
    # SideEffects.store_instance_dict_attr is there from 2.13 (2.14+ drop a recorded deletion in it)
    ("dunder-dict-order", "SideEffects.store_instance_dict_attr"): ">=2.13",
    # SideEffectsProxyDict (2.12+) asserts a str key in __setitem__ on 2.12-2.13 (2.14 takes any constant key)
    ("non-str-attr-store", "SideEffectsProxyDict.__setitem__"): ">=2.12,<2.14",
    # 2.14 records a non-str instance-dict key itself: only dunder-dict-non-str-key's getattr/hasattr half there
    ("dunder-dict-non-str-key", "SideEffectsProxyDict.__setitem__"): "<2.14",
    ("dunder-dict-non-str-key", "SideEffectsProxyDict.__delitem__"): "<2.14",
    ("non-str-attr-store", "SideEffectsProxyDict.__delitem__"): ">=2.12,<2.14",
    # iter() is traced as polyfills.builtins.iter_ (hasattr(x, "__iter__") first) on 2.9-2.12 (the patch ends at 2.11)
    ("dunder-dict-views", "GetAttrVariable.call_obj_hasattr"): ">=2.9,<2.13",
    # OrderedDict(m) goes through call_custom_dict on 2.5-2.6; 2.7+ build it without it (construct_dict, __new__)
    ("dict-subclass-merge", "UserDefinedClassVariable.call_function"): ">=2.7",
    # 2.13-2.14's conditional jumps read an OrderedDict (2.13) / defaultdict input's truth without a guard
    ("dict-truth-guard", "InstructionTranslatorBase.POP_JUMP_IF_FALSE"): ">=2.13,<2.15",
    ("dict-truth-guard", "InstructionTranslatorBase.POP_JUMP_IF_TRUE"): ">=2.13,<2.15",
    ("dict-truth-guard", "InstructionTranslatorBase.JUMP_IF_FALSE_OR_POP"): ">=2.13,<2.15",
    ("dict-truth-guard", "InstructionTranslatorBase.JUMP_IF_TRUE_OR_POP"): ">=2.13,<2.15",
    ("dict-truth-guard", "InstructionTranslatorBase.POP_JUMP_FORWARD_IF_FALSE"): ">=2.13,<2.15",
    ("dict-truth-guard", "InstructionTranslatorBase.POP_JUMP_BACKWARD_IF_FALSE"): ">=2.13,<2.15",
    ("dict-truth-guard", "InstructionTranslatorBase.POP_JUMP_FORWARD_IF_TRUE"): ">=2.13,<2.15",
    ("dict-truth-guard", "InstructionTranslatorBase.POP_JUMP_BACKWARD_IF_TRUE"): ">=2.13,<2.15",
    # 2.13+ dispatch | through the operands' number slots (binary_op), past ConstDictVariable.call_method
    ("dict-subclass-merge", "BuiltinVariable.call_or_"): ">=2.13",
    ("ordered-dict-subclass-setitem", "BuiltinVariable.call_or_"): ">=2.13",
    ("ordered-dict-subclass-setitem", "BuiltinVariable.call_ior"): ">=2.13",
    # move_to_end's branch moved to OrderedDictVariable.call_method in 2.13
    ("ordered-dict-move-to-end", "ConstDictVariable.call_method"): "<2.13",
    ("ordered-dict-move-to-end", "UserDefinedDictVariable.call_method"): "<2.13",
    # 2.15 runs move_to_end from a tp_methods table, through inherited call_methods
    ("ordered-dict-move-to-end", "OrderedDictVariable.call_method"): ">=2.15",
    ("ordered-dict-move-to-end", "UserDefinedOrderedDictVariable.call_method"): ">=2.15",
    # 2.7 has no BuiltinVariable.call_bool (2.8+): the handler is added there (its other target wraps 2.8+'s)
    ("dict-truth-guard", "BuiltinVariable.call_bool"): "<2.8",
    # a keys view's operators run from call_method (2.9-2.12: reading the operand's set_items) until 2.13's
    # number-slot dispatch (the patch starts at 2.8)
    ("set-view-operator", "DictKeysVariable.call_method"): "<2.13",
    # 2.13 iterates dict views over the dict tracker itself (DictViewIterator); reversed() calls the view's method
    ("dict-view-live-iterator", "BuiltinVariable.call_iter"): "<2.13",
    # 2.9 iterates zip's arguments itself (pytorch/pytorch#156370's stack): nothing to keep lazy after it
    ("iterator-consumption", "BuiltinVariable.call_zip"): "<2.9",
    ("dict-view-live-iterator", "BuiltinVariable.call_reversed"): "<2.13",
    # 2.7 tracks a dict subclass passed in as UserDefinedDictVariable, no longer as a MutableMappingVariable
    ("dict-subclass-missing", "MutableMappingVariable.var_getattr"): "<2.7",
    # generic_jump computes a generic value's truth with generic_bool (2.13-2.14) / generic_is_true (2.15+)
    **{("object-truth-jump", f"InstructionTranslatorBase.{jump}"): ">=2.13" for jump in (
        "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP",
        "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_TRUE")},
}


def test_every_when_is_listed():
    from tdcompat.patches import ALL_PATCHES

    listed = {(p.name, f"{t.owner}.{t.attribute}") for p in ALL_PATCHES for t in p.targets if t.when is not None}
    assert listed == set(WHEN_RELEASES)


@pytest.mark.parametrize("key", sorted(WHEN_RELEASES), ids="/".join)
def test_when_holds_on_the_releases_it_names(key):
    """A target left out on a torch is left out because that Dynamo code path is missing there,
    and on no other torch (checked on every release the suite runs on)."""
    import torch._dynamo
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from tdcompat.patches import ALL_PATCHES

    patch = next(p for p in ALL_PATCHES if p.name == key[0])
    target = next(t for t in patch.targets if f"{t.owner}.{t.attribute}" == key[1] and t.when is not None)
    release = Version(Version(torch.__version__).base_version)
    assert bool(target.when()) == (release in SpecifierSet(WHEN_RELEASES[key])), torch.__version__


def _greet_gate(signature):
    """A gate in front of ``shout`` for ``Base.greet`` with one of three signatures."""

    @gate(shout)
    def factory(original, handle):
        if signature == "exact":
            def greet(self, name):
                return original(self, name) if name == "pass" else handle(self, name)
        elif signature == "generic":
            def greet(self, *args, **kwargs):
                return original(self, *args, **kwargs) if args == ("pass",) else handle(self, *args, **kwargs)
        else:
            def greet(self, name, *args, **kwargs):  # neither Dynamo's method's nor any call's
                return original(self, name) if name == "pass" else handle(self, name, *args, **kwargs)
        return greet

    return factory


@pytest.mark.parametrize("signature", ["exact", "generic", "unfit"])
def test_a_gate_that_does_not_fit_is_installed_as_its_handler_and_reported(signature):
    from tdcompat.installer import unfit_gates

    original = vars(Base)["greet"]
    reg = Registry([make(handler=_greet_gate(signature))])
    reg.apply("double", strict=False)
    try:
        installed = vars(Base)["greet"]
        assert [Base().greet(n) for n in ("pass", "x")] == ["hello pass", "HELLO X"]
        assert (installed.__code__.co_name == "greet") == (signature != "unfit")
        assert unfit_gates() == ([f"{MODULE}.Base.greet: double"] if signature == "unfit" else [])
    finally:
        reg.revert("double", "t")
    assert vars(Base)["greet"] is original and unfit_gates() == []


def test_every_gate_of_the_real_patches_is_installed_as_a_gate():
    """A gate whose signature fits neither Dynamo's method on this torch nor ``(self, *args,
    **kwargs)`` leaves its handler, fail-safe and all, on every call of a hot method."""
    from conftest import last_json, run_python

    out = last_json(run_python("""
        import json, torch._dynamo, tdcompat
        from tdcompat.installer import unfit_gates, wrapped_methods
        print(json.dumps([unfit_gates(), len(wrapped_methods())]))
    """))
    assert out[0] == [] and out[1] > 0


def _first_letter_gate(original, handle, route):
    """A routed-gate builder for ``Base.greet``: a name whose first letter is in ``route`` goes to
    ``handle``, every other name straight to ``original`` (and is counted)."""

    def greet(self, name):
        if name[:1] not in route:
            _STRAIGHT.append(name)
            return original(self, name)
        return handle(self, name)

    return greet


_STRAIGHT: list = []


def _routed(patch_name, match, reply, route):
    from tdcompat.wrappers import routed_gate

    return routed_gate(answering(patch_name, match, reply), _first_letter_gate, route)


def test_routed_gates_sharing_a_builder_are_one_layer():
    """Two patches' routed gates on one method: one gate with the union of their routes in front of
    both handlers (a call neither routes passes one test); a routed call passes each patch's own
    gate in the order applied and reaches only the handlers that route it; reverting one leaves the
    other's gate; reverting both restores the method."""
    original = vars(Base)["greet"]
    a = make(name="a", handler=_routed("a", "xa", "A", {"x"}))
    b = make(name="b", handler=_routed("b", "yb", "B", {"y"}))
    reg = Registry([a, b])
    reg.apply("a", strict=False)
    reg.apply("b", strict=False)
    try:
        installed = vars(Base)["greet"]
        depth, layer = 0, installed
        while getattr(layer, "__tdcompat_layer__", False):
            layer, depth = layer.__wrapped__, depth + 1
        assert layer is original and depth == 3  # the shared gate, then the two handlers
        _STRAIGHT.clear()
        got = [Base().greet(n) for n in ("xa", "yb", "xz", "pass")]
        assert got == ["A", "B", "hello xz", "hello pass"]
        # "pass": no route names it, straight on at the shared gate; "yb": past a's gate to b's
        # handler; "xz": a's handler (it defers), then past b's gate
        assert _STRAIGHT == ["yb", "xz", "pass"]
        reg.revert("a", "t")
        _STRAIGHT.clear()
        assert [Base().greet(n) for n in ("xa", "yb")] == ["hello xa", "B"] and _STRAIGHT == ["xa"]
    finally:
        reg.revert("a", "t")
        reg.revert("b", "t")
    assert vars(Base)["greet"] is original


def test_routed_gates_with_other_builders_stay_apart():
    """Routed gates merge only with a neighbour built by the same builder."""
    from tdcompat.wrappers import routed_gate

    def other_builder(original, handle, route):
        def greet(self, name):
            return handle(self, name) if name in route else original(self, name)

        return greet

    a = make(name="a", handler=_routed("a", "xa", "A", {"x"}))
    b = make(name="b", handler=routed_gate(answering("b", "yb", "B"), other_builder, {"yb"}))
    reg = Registry([a, b])
    reg.apply("a", strict=False)
    reg.apply("b", strict=False)
    try:
        depth, layer = 0, vars(Base)["greet"]
        while getattr(layer, "__tdcompat_layer__", False):
            layer, depth = layer.__wrapped__, depth + 1
        assert depth == 4  # two gates, each in front of its own handler
        assert [Base().greet(n) for n in ("xa", "yb", "zz")] == ["A", "B", "hello zz"]
    finally:
        reg.revert("a", "t")
        reg.revert("b", "t")
