"""Gap 1: attribute writes on ``collections.abc.MutableMapping`` objects.

Dynamo models an object whose type subclasses ``MutableMapping`` (and is not an
``nn.Module``) as ``MutableMappingVariable``. Attribute assignment and deletion
on such an object is ``Unsupported`` on torch 2.5 and silently dropped on
2.6-2.8 (see ``tdcompat/patches/mutable_mapping_setattr.py``). ``Bag`` is the
smallest such class: a mapping backed by a dict attribute.
"""

from __future__ import annotations

import torch

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, CaseList, Expect
from .mappings import StoreMapping

PATCH = ("mutable-mapping-setattr",)


class Bag(StoreMapping):
    """A user mapping backed by a dict attribute."""

    def __init__(self, **items):
        self._store = dict(items)
        self.scale = 2.0


class ScopedBag(Bag):
    """A mapping that is its own context manager, the ``td.to_module(m)`` shape:
    ``bag.scaled(s)`` returns a new mapping whose ``__enter__`` sets
    ``bag.scale = s`` and records itself, and whose ``__exit__`` restores."""

    def scaled(self, scale):
        scope = ScopedBag(**self._store)
        scope.parent = self
        scope.scale = scale
        return scope

    def __enter__(self):
        self.saved = self.parent.scale
        self.parent.scale = self.scale
        self.parent.depth = getattr(self.parent, "depth", 0) + 1
        self.active = True
        return self

    def __exit__(self, *exc):
        self.parent.scale = self.saved
        self.parent.depth = self.parent.depth - 1
        del self.saved
        self.active = False
        return False


class Holder:
    """A plain object holding a mapping: ``holder.inner.attr = ...``."""

    def __init__(self, inner):
        self.inner = inner


class ModuleBag(torch.nn.Module, StoreMapping):
    """A mapping that is also an ``nn.Module`` (like ``TensorDictParams``): Dynamo
    models it as a module, not as ``MutableMappingVariable``; the control case."""

    __hash__ = torch.nn.Module.__hash__

    def __init__(self, **items):
        super().__init__()
        self._store = dict(items)
        self.scale = 2.0


def _bag_inputs():
    return Bag(w=torch.randn(3)), torch.randn(3)


def _scoped_inputs():
    return ScopedBag(w=torch.randn(3)), torch.randn(3)


def _holder_inputs():
    return Holder(Bag(w=torch.randn(3))), torch.randn(3)


def _module_bag_inputs():
    return ModuleBag(w=torch.randn(3)), torch.randn(3)


def assign_existing(bag, x):
    bag.scale = 3.0
    return x * bag["w"]


def assign_new(bag, x):
    bag.extra = "added"
    return x * bag["w"]


def delete_attr(bag, x):
    del bag.scale
    return x * bag["w"]


def assign_graph_tensor(bag, x):
    bag.cache = x * bag["w"] + 1
    return x.sum()


def write_then_read(bag, x):
    bag.scale = bag.scale + 1.5
    bag.cache = x.sin()
    return bag.cache * bag.scale + bag["w"]


def with_mapping_as_context(bag, x):
    with bag.scaled(3.0) as scope:
        y = x * bag["w"] * bag.scale * bag.depth
        scope.note = "inside"
    return y + bag.scale, scope


def new_mapping_returned(bag, x):
    fresh = Bag(w=x * 2)
    fresh.scale = bag.scale + 1
    fresh.tag = "fresh"
    return fresh


def nested_in_object(holder, x):
    holder.inner.scale = x.sum()
    holder.inner.tag = "nested"
    return x * holder.inner["w"] * holder.inner.scale


def module_mapping_control(bag, x):
    bag.scale = 3.0
    bag.extra = x * 2
    return x * bag["w"] * bag.scale


_UNPATCHED = (Expect("<2.6", GRAPH_BREAK), Expect(">=2.6,<2.9", WRONG_RESULT))


def _case(name, fn, inputs, doc, unpatched=_UNPATCHED, patches=PATCH):
    return Case(name, patches, fn, inputs, unpatched=unpatched, doc=doc)


CASES = CaseList()
CASES.add(
    _case("setattr_mapping_existing", assign_existing, _bag_inputs, "`bag.scale = 3.0` on a MutableMapping"),
    _case("setattr_mapping_new", assign_new, _bag_inputs, "`bag.extra = ...`: a new attribute"),
    _case("setattr_mapping_delete", delete_attr, _bag_inputs, "`del bag.scale`"),
    _case("setattr_mapping_graph_tensor", assign_graph_tensor, _bag_inputs, "`bag.cache = <tensor made in the graph>`"),
    _case("setattr_mapping_read_back", write_then_read, _bag_inputs, "write, then read the attribute back"),
    _case(
        "setattr_mapping_context_manager",
        with_mapping_as_context,
        _scoped_inputs,
        "`with bag.scaled(s) as scope:`: a mapping made in the graph is the context manager;"
        " its __enter__/__exit__ write attributes of itself and of the input mapping",
    ),
    _case(
        "setattr_mapping_made_in_graph",
        new_mapping_returned,
        _bag_inputs,
        "a mapping made and written in the graph, returned (2.6-2.8: `assert var.source is not None`)",
        # Dynamo's own `assert var.source is not None` (side_effects.py), raised while tracing.
        unpatched=(Expect(">=2.6,<2.9", GRAPH_BREAK, detail=r"^(AssertionError|InternalTorchDynamoError): "),),
    ),
    _case("setattr_mapping_nested", nested_in_object, _holder_inputs, "`holder.inner.scale = ...`"),
    _case(
        "setattr_module_mapping_control",
        module_mapping_control,
        _module_bag_inputs,
        "control: an nn.Module that is also a MutableMapping already works",
        unpatched=(),
        patches=(),
    ),
)


# -- a property with a Python setter (property-setattr; issue 11, found by fuzzing) --------
class Scaled:
    """``v`` is a property whose setter writes another attribute."""

    def __init__(self):
        self._v = torch.zeros(3)
        self.n = 1

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        self._v = value * 2


class ScaledMapping(StoreMapping):
    def __init__(self):
        self._store = {"k": torch.ones(3)}
        self._v = torch.zeros(3)

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        self._v = value * 2


def _scaled():
    return Scaled(), torch.randn(3)


def _scaled_mapping():
    return ScaledMapping(), torch.randn(3)


def property_setter(o, x):
    o.v = x + 1
    return o._v, o.v, o.__dict__["_v"]


class ReadOnly:
    """``r`` is a property without a setter."""

    def __init__(self):
        self.n = 1

    @property
    def r(self):
        return self.n * 10


class ReadOnlyMapping(StoreMapping):
    def __init__(self):
        self._store = {"k": torch.ones(3)}
        self.n = 1

    @property
    def r(self):
        return self.n * 10


#: Not a graph break: the compiled call raises what eager caught (Dynamo's replay after the graph).
_NO_SETTER = r"^AttributeError: property 'r' of '\w+' object has no setter"


def set_readonly_property(o, x):
    """Eager raises AttributeError ("property 'r' ... has no setter") and the frame catches it."""
    try:
        o.r = x
        raised = False
    except AttributeError:
        raised = True
    return raised, x * o.r


def property_setter_new(x):
    o = Scaled()
    o.v = x + 1
    return o._v, o.v, o


CASES.add(
    # method_setattr_standard stores `v` as an instance attribute and replays `o.v = ...`
    # after the graph; inside the frame the setter's writes are missing (measured: 2.5.1-2.11.0).
    _case("setattr_property_setter", property_setter, _scaled,
          "`o.v = x` with a property setter, read back through the attribute the setter writes",
          unpatched=(Expect("<2.12", WRONG_RESULT),), patches=("property-setattr",)),
    _case("setattr_property_setter_mapping", property_setter, _scaled_mapping,
          "the same on a MutableMapping passed in",
          unpatched=(Expect("<2.6", GRAPH_BREAK), Expect(">=2.6,<2.12", WRONG_RESULT)),
          patches=("property-setattr", "mutable-mapping-setattr", "mapping-dunder-dict")),
    _case("setattr_property_setter_new_object", property_setter_new, lambda: (torch.randn(3),),
          "the same on an object made in the frame, which then escapes",
          unpatched=(Expect("<2.12", WRONG_RESULT),), patches=("property-setattr",)),
    # Dynamo stores `r` and the replay after the graph raises, outside the try (measured: 2.5.1-2.12.1;
    # a MutableMapping's own method_setattr_standard on 2.11-2.12 too).
    _case("setattr_readonly_property", set_readonly_property, lambda: (ReadOnly(), torch.randn(3)),
          "`o.r = x` for a property without a setter raises AttributeError, caught in the frame",
          unpatched=(Expect("<2.13", GRAPH_BREAK, detail=_NO_SETTER),), patches=("property-setattr",)),
    _case("setattr_readonly_property_mapping", set_readonly_property, lambda: (ReadOnlyMapping(), torch.randn(3)),
          "the same on a MutableMapping passed in (2.6-2.8: the store is dropped, nothing raises)",
          unpatched=(Expect("<2.6", GRAPH_BREAK), Expect(">=2.6,<2.9", WRONG_RESULT),
                     Expect("<2.13", GRAPH_BREAK, detail=_NO_SETTER)),
          patches=("property-setattr", "mutable-mapping-setattr")),
)


# -- del of a missing attribute (delattr-missing; issue 11, found by fuzzing) ------------------
class Plain:
    def __init__(self):
        self.a = torch.ones(3)


def _plain():
    return Plain(), torch.randn(3)


def delete_maybe_missing(o, x):
    """The second call's object has ``b`` (harness.vary adds it): eager deletes it then."""
    try:
        del o.b
        deleted = True
    except AttributeError:
        deleted = False
    return deleted, x + 1  # (no hasattr: its guard would hide the missing one)


def _delete_missing_new(cls):
    def delete_missing_new(x):
        o = cls()
        try:
            del o.b
        except AttributeError:
            return x - 1
        return x + 1

    return delete_missing_new


class PlainCtx(Plain):
    """Made in the frame, Dynamo wraps it as a context manager (GenericContextWrappingVariable)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


CASES.add(
    _case("delattr_missing_input", delete_maybe_missing, _plain,
          "`del o.b` raises AttributeError when o has no b (2.5-2.11 do not; 2.12+ do, unguarded)",
          unpatched=(Expect(">=2.5", WRONG_RESULT),), patches=("delattr-missing",)),
    _case("delattr_missing_mapping", delete_maybe_missing, _bag_inputs,
          "the same on a MutableMapping passed in",
          unpatched=(Expect("<2.6", GRAPH_BREAK), Expect(">=2.6", WRONG_RESULT)),
          patches=("delattr-missing", "mutable-mapping-setattr")),
    _case("delattr_missing_new_object", _delete_missing_new(Plain), lambda: (torch.randn(3),),
          "`del o.b` on an object made in the frame that never had b",
          unpatched=(Expect("<2.13", WRONG_RESULT),), patches=("delattr-missing",)),  # measured: 2.12.1 too
    _case("delattr_missing_new_context_manager", _delete_missing_new(PlainCtx), lambda: (torch.randn(3),),
          "the same on an object made in the frame whose class has __enter__/__exit__ (a TensorDict; fuzzer seed 3)",
          unpatched=(Expect("<2.13", WRONG_RESULT),), patches=("delattr-missing",)),
)


# -- super().__delattr__: what `del module.x` ends in (super-delattr; issue 11, fuzzer seed 173) ----
class PlainModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = 2
        self.w = torch.nn.Parameter(torch.ones(3))


class SuperDel:
    """A class whose ``__delattr__`` counts, then defers to ``object.__delattr__`` through ``super()``."""

    def __init__(self):
        self.a = torch.ones(3)
        self.deletes = 0

    def __delattr__(self, name):
        object.__setattr__(self, "deletes", self.deletes + 1)
        super().__delattr__(name)


def _module():
    return PlainModule(), torch.randn(3)


def _super_del():
    return SuperDel(), torch.randn(3)


def delete_then_read_dict(o, x):
    """Read the instance dict back after ``del o.a`` in the same frame."""
    del o.a
    return "a" in o.__dict__, o.__dict__.get("a", -1), "a" in vars(o), x * 2


CASES.add(
    # 2.8 has no nn.Module.__delattr__ at all ("UnspecializedNNModuleVariable missing method"): there the
    # same cases need module-delattr too (module_delattr_* below).
    Case("super_delattr_module_missing", ("super-delattr",), delete_maybe_missing, _module, torch="!=2.8.*",
         unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`del module.b` raises AttributeError when the module has no b (the second call's has it)"),
    # Before 2.13 the deletion is replayed as `del o.b`, running the hook twice (2.8-2.12), and 2.5-2.7
    # ignore a user __delattr__ altogether: natively wrong there, with tdcompat too (left, see super_delattr.py).
    Case("super_delattr_custom_missing", ("super-delattr",), delete_maybe_missing, _super_del, torch=">=2.13",
         unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="the same through a class's own `__delattr__` that calls `super().__delattr__`"),
    Case("super_delattr_module_dict_view", ("super-delattr",), delete_then_read_dict, _module, torch="!=2.8.*",
         unpatched=(Expect("<2.8", GRAPH_BREAK), Expect(">=2.13", WRONG_RESULT)),
         doc="`del module.a`, then `'a' in module.__dict__` / `vars(module)` in the same frame"),
)


# -- del module.x on a module made in the frame (super-delattr knows the placeholder's keys) --------
class MadeModule(torch.nn.Module):
    """Made in the frame (no parameter: Dynamo does not make one in the graph)."""

    def __init__(self):
        super().__init__()
        self.a = 2
        self.sub = torch.nn.Identity()


def made_module_delete(x):
    """``del m.b`` of a name the new module never had raises; ``del m.a`` deletes."""
    m = MadeModule()
    try:
        del m.b
        missing = "deleted"
    except AttributeError:
        missing = "AttributeError"
    del m.a
    return missing, hasattr(m, "a"), "a" in m.__dict__, m.sub(x) * 2


CASES.add(
    # Measured without tdcompat: silently "deleted" on 2.5-2.7 and 2.9-2.15 (the deletion recorded
    # without a lookup); 2.8 breaks on nn.Module.__delattr__ (module-delattr there).
    Case("super_delattr_made_module_missing", ("super-delattr",), made_module_delete, lambda: (torch.randn(3),),
         torch="!=2.8.*", unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`del m.b` on a module made in the frame that never had b raises AttributeError"),
    Case("module_delattr_made_module_missing", ("module-delattr", "super-delattr"), made_module_delete,
         lambda: (torch.randn(3),), torch="==2.8.*", unpatched=(Expect("==2.8.*", GRAPH_BREAK),),
         doc="the same on 2.8, where `del m.b` needs nn.Module.__delattr__ first"),
)


# -- del module.x runs nn.Module.__delattr__ (module-delattr, 2.5-2.8; issue 14: TorchRL's SAC) ------
class OwnSetattrModule(torch.nn.Module):
    """TorchRL's ``LossModule`` shape: a module class with its own ``__setattr__``."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self._target = "auto"
        self.a = torch.ones(3)

    def __setattr__(self, name, value):
        if isinstance(value, (int, float)) and name == "scale":
            value = float(value)
        super().__setattr__(name, value)


def _own_setattr_module():
    return OwnSetattrModule(), torch.randn(3)


def delete_then_hasattr(o, x):
    del o.a
    return hasattr(o, "a"), x * 2


def delete_submodule(o, x):
    del o.lin
    return hasattr(o, "lin"), "lin" in o._modules, x - 1


def delete_then_register_buffer(o, x):
    """SAC's ``target_entropy``: ``delattr(self, "_target_entropy")`` then ``register_buffer`` under
    that name, read back in the frame."""
    if isinstance(o._target, str):
        delattr(o, "_target")
        o.register_buffer("_target", x.sum() * 0 + 2.0)
    return o.lin(x) * o._target, hasattr(o, "_target"), "_target" in o.__dict__


CASES.add(
    # 2.5-2.7 trace the class's __setattr__ with a DeletedVariable (isinstance(DeletedVariable(), ...)),
    # 2.8 every module: "UnspecializedNNModuleVariable missing method"; 2.9 on inline nn.Module.__delattr__.
    Case("module_delattr_own_setattr", ("module-delattr",), delete_then_hasattr, _own_setattr_module,
         unpatched=(Expect("<2.9", GRAPH_BREAK),),
         doc="`del module.a` on a module class with its own `__setattr__`, then hasattr"),
    Case("module_delattr_submodule", ("module-delattr",), delete_submodule, _own_setattr_module,
         unpatched=(Expect("<2.9", GRAPH_BREAK),),
         doc="`del module.lin` (a submodule) on a module class with its own `__setattr__`"),
    Case("module_delattr_module_missing", ("module-delattr", "super-delattr"), delete_maybe_missing, _module,
         torch="==2.8.*", unpatched=(Expect("==2.8.*", GRAPH_BREAK),),
         doc="super_delattr_module_missing on 2.8, where `del module.b` needs nn.Module.__delattr__ first"),
    Case("module_delattr_module_dict_view", ("module-delattr", "super-delattr"), delete_then_read_dict, _module,
         torch="==2.8.*", unpatched=(Expect("==2.8.*", GRAPH_BREAK),),
         doc="super_delattr_module_dict_view on 2.8"),
    Case("clients_delattr_then_register_buffer", ("module-delattr", "super-delattr", "module-deleted-attr"),
         delete_then_register_buffer, _own_setattr_module,
         unpatched=(Expect("<2.13", GRAPH_BREAK), Expect(">=2.13", WRONG_RESULT)),
         doc="SAC's target_entropy: delattr then register_buffer under that name, on a LossModule-like class"),
)


# -- reading a missing attribute (getattr-missing-guard; issue 11, fuzzer seed 78) ---------------
def read_maybe_missing(o, x):
    """The second call's object has ``b`` (harness.vary adds it): eager reads it then."""
    try:
        value = o.b
    except AttributeError:
        value = None
    return value is None, x + 1


def getattr_maybe_missing(o, x):
    try:
        return getattr(o, "b") * x  # noqa: B009 - the builtin is what this traces
    except AttributeError:
        return x - 1


CASES.add(
    Case("getattr_missing_input", ("getattr-missing-guard",), read_maybe_missing, _plain,
         unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`try: o.b / except AttributeError` on a second call whose object has b"),
    Case("getattr_builtin_missing_input", ("getattr-missing-guard",), getattr_maybe_missing, _plain,
         unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`getattr(o, 'b')` in a try, the same"),
    Case("getattr_missing_mapping", ("getattr-missing-guard", "mutable-mapping-setattr"), read_maybe_missing,
         _bag_inputs, unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="the same on a MutableMapping passed in"),
)


# -- a class attribute that appears between calls, read through an object (getattr-missing-guard) --
class _Growing:
    """Module-level: the second call's vary gives the class ``u`` (the inputs take it away)."""


class _GrowingSub(_Growing):
    pass


def _growing():
    if "u" in vars(_Growing):
        del _Growing.u
    return _GrowingSub(), _GrowingSub, torch.randn(3)


def _class_gains_u(args):
    _Growing.u = 6


def read_class_attr_through_object(o, cls, x):
    """``o.u`` of an input and ``getattr``/``hasattr`` of an object made in the frame."""
    try:
        got = o.u
    except AttributeError:
        got = "AttributeError"
    made = cls()
    return x + 1, got, getattr(made, "u", "D"), hasattr(made, "u")


CASES.add(
    Case("getattr_class_attr_appears", ("getattr-missing-guard",), read_class_attr_through_object, _growing,
         vary=_class_gains_u, unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="`try: o.u` of an input and `getattr(K(), 'u', d)` while a base class has no `u`, called again "
             "after it gained one: the except branch and the default reused (fuzzer 2.7.1 seed 1641029811)"),
)


# -- an attribute read in a try and only passed on (getattr-missing-guard; fuzzer seed 1002356) ----
def _plain_with_b():
    o = Plain()
    o.b = "odd"
    return o, torch.randn(3)


def _drop_b(args):
    """The second call's object has no ``b``: eager takes the ``except`` branch."""
    del args[0].b


#: Measured: the AttributeError escapes on 2.5.1-2.7.1 and 2.11.0-2.15.0; 2.8.0-2.10.0 guard it.
_ESCAPED = r"^AttributeError: 'Plain' object has no attribute 'b'"


def pass_on_maybe_missing(o, x):
    out = [x + 1]
    try:
        out.append(o.b)  # not used in the graph: Dynamo reads it again after the graph
    except AttributeError:
        out.append("AttributeError")
    return out


CASES.add(
    Case("getattr_passed_on_in_try", ("getattr-missing-guard",), pass_on_maybe_missing, _plain_with_b,
         vary=_drop_b,
         unpatched=(Expect("<2.8", GRAPH_BREAK, detail=_ESCAPED), Expect(">=2.11", GRAPH_BREAK, detail=_ESCAPED)),
         doc="`try: out.append(o.b)`: code compiled for an object with b reads it after the graph, "
             "outside the try, for one without (AttributeError out of compiled code)"),
)


# -- a deletion through __dict__ replayed from the compiling input (instance-dict-deletion-guard) ---
def set_then_pop(o, x):
    o.b = x + 1
    return o.__dict__.pop("b", "absent"), x * 2


#: Measured on 2.13.0-2.15.0: the replay deletes `b` from an input that had none.
_REPLAYED_DELETE = r"^KeyError: 'b'"
#: 2.12 (dunder-dict-replay's range) replays the deletion as `del o.b`.
_REPLAYED_DELATTR = r"^AttributeError: 'Plain' object has no attribute 'b'"

CASES.add(
    # 2.13 on: instance-dict deletions (SideEffects.store_instance_dict_attr); 2.12: attribute deletions.
    Case("dict_pop_after_set_input_gains_key", ("instance-dict-deletion-guard",), set_then_pop, _plain,
         torch=">=2.13", unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`o.b = v; o.__dict__.pop('b', d)` compiled for an object without b, called with one that has it: "
             "b survives"),
    Case("dict_pop_after_set_input_loses_key", ("instance-dict-deletion-guard",), set_then_pop, _plain_with_b,
         vary=_drop_b, torch=">=2.13", unpatched=(Expect(">=2.13", GRAPH_BREAK, detail=_REPLAYED_DELETE),),
         doc="the same compiled for an object with b, called with one without: KeyError out of compiled code"),
    Case("dict_pop_after_set_2_12_gains_key", ("dunder-dict-replay",), set_then_pop, _plain, torch="==2.12.*",
         unpatched=(Expect("==2.12.*", WRONG_RESULT),), doc="the first of these on 2.12"),
    Case("dict_pop_after_set_2_12_loses_key", ("dunder-dict-replay",), set_then_pop, _plain_with_b,
         vary=_drop_b, torch="==2.12.*", unpatched=(Expect("==2.12.*", GRAPH_BREAK, detail=_REPLAYED_DELATTR),),
         doc="the second of these on 2.12"),
)
