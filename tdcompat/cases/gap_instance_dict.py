"""Gap 3: writing an object's attributes through its ``__dict__`` (issue 5).

Every case writes through ``obj.__dict__`` (or ``vars(obj)``) and reads the
written attribute back in the same compiled function, both as ``obj.k`` and as
``obj.__dict__[k]``; the harness then compares the object's state with eager
(for modules that includes ``named_parameters()`` and ``named_buffers()``).
"""

from __future__ import annotations

import torch

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, CaseList, Expect
from .mappings import StoreMapping

P = ("instance-dict-writes",)
PV = ("instance-dict-writes", "instance-dict-vars")


def _patches(pattern):
    return PV if pattern.startswith("vars_") else P


# -- the objects ---------------------------------------------------------------
class Plain:
    def __init__(self):
        self.a = torch.ones(3)
        self.n = 2


class Mapping(StoreMapping):
    """A user MutableMapping that also has ordinary attributes."""

    def __init__(self):
        self._store = {"k": torch.full((3,), 2.0)}
        self.a = torch.ones(3)
        self.n = 2


class Mod(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3))
        self.register_buffer("buf", torch.full((3,), 3.0))
        self.lin = torch.nn.Linear(3, 3)
        self.a = torch.ones(3)
        self.n = 2

    def forward(self, x):
        return self.lin(x) * self.w + self.buf


class Ctx:
    """A context manager created inside the compiled function (Dynamo tracks it
    as GenericContextWrappingVariable); its __enter__ runs one of the patterns
    below on itself."""

    def __init__(self, x, op):
        self.x = x
        self.op = op
        self.a = torch.ones(3)
        self.n = 2

    def __enter__(self):
        return self.op(self.x, self)

    def __exit__(self, *exc):
        return False


class ParamsCtx(torch.nn.Module):
    """A module that is also a context manager and, like tensordict's
    TensorDictParams.__init__, installs its parameters through __dict__."""

    def __init__(self, names, params):
        super().__init__()
        self.__dict__["_parameters"] = dict(zip(names, params))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class InputCtx:
    """A context manager passed into the compiled function."""

    def __init__(self):
        self.depth = 0
        self.log = torch.zeros(3)

    def __enter__(self):
        self.depth += 1
        self.__dict__["entered"] = True
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        self.log = self.log + 1
        return False


class LockedMapping(Mapping):
    """tensordict-like: ``unlock_()`` returns self, ``with`` relocks on exit."""

    def __init__(self):
        super().__init__()
        self.__dict__["locked"] = True

    def unlock_(self):
        self.__dict__["locked"] = False
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.__dict__["locked"] = True
        return False


# -- inputs ----------------------------------------------------------------------
def _plain():
    return torch.randn(3), Plain()


def _mapping():
    return torch.randn(3), Mapping()


def _mod():
    return torch.randn(3), Mod()


def _mod_and_params():
    return torch.randn(3), Mod(), torch.nn.Parameter(torch.randn(3))


def _mod_and_linear():
    return torch.randn(3), Mod(), torch.nn.Linear(3, 3)


def _input_ctx():
    return torch.randn(3), InputCtx()


def _locked_mapping():
    return torch.randn(3), LockedMapping()


def _x():
    return (torch.randn(3),)


def _x_and_params():
    return torch.randn(3), torch.nn.Parameter(torch.randn(3)), torch.nn.Parameter(torch.randn(3))


# -- patterns (the same functions serve plain objects, mappings and modules) -----
def setitem(x, o):
    o.__dict__["b"] = x + 1
    o.__dict__["a"] = o.a * 2
    return o.b * 2, o.__dict__["b"], o.a


def vars_setitem(x, o):
    vars(o)["b"] = x + 1
    return o.b * 2, vars(o)["b"], o.__dict__["b"]


def update(x, o):
    o.__dict__.update({"b": x + 1}, c=x * 3, n=5)
    return o.b + o.c, o.__dict__["c"], o.n


def vars_update(x, o):
    vars(o).update(b=x + 1)
    return o.b * 2, o.__dict__["b"]


def setdefault(x, o):
    new = o.__dict__.setdefault("b", x + 1)
    old = o.__dict__.setdefault("a", x + 5)
    return new, old, o.b, o.__dict__["b"]


def vars_setdefault(x, o):
    new = vars(o).setdefault("b", x + 1)
    return new, o.b


def pop(x, o):
    a = o.__dict__.pop("a")
    missing = o.__dict__.pop("missing", 7)
    return x + a, missing, "a" in o.__dict__, hasattr(o, "a")


def vars_pop(x, o):
    a = vars(o).pop("a")
    return x + a, "a" in vars(o), hasattr(o, "a")


def delete(x, o):
    del o.__dict__["a"]
    return x * 2, "a" in o.__dict__, hasattr(o, "a")


def vars_delete(x, o):
    del vars(o)["a"]
    return x * 2, "a" in o.__dict__, hasattr(o, "a")


# -- nn.Module bookkeeping dicts ---------------------------------------------------
def module_parameters(x, m, p):
    m.__dict__["_parameters"] = {"v": p}
    return x * m.v, m.__dict__["_parameters"]["v"] * 2, len(list(m.parameters()))


def module_buffers(x, m):
    m.__dict__["_buffers"] = {"buf": x * 2, "b2": x + 1}
    return m.b2 * 2, m.__dict__["_buffers"]["buf"], m(x)


def module_parameters_update(x, m, p):
    m.__dict__.update(_parameters={"w": p, "v": p})
    return x * m.v, m(x)


def module_modules(x, m, lin):
    m.__dict__["_modules"] = {"lin": lin}
    return m.lin(x), m(x)


# -- objects created in the compiled function ---------------------------------
def _in_ctx(op):
    def run(x):
        c = Ctx(x, op)
        with c as result:
            pass
        return result, c

    run.__name__ = run.__qualname__ = f"ctx_{op.__name__}"
    return run


def ctx_module_parameters(x, p, q):
    with ParamsCtx(["p", "q"], [p, q]) as m:
        out = x * m.p + m.q + m.__dict__["_parameters"]["p"]
    return out, m


def new_plain(x):
    o = Plain()
    o.__dict__["b"] = x + 1
    return o.b * 2, o.__dict__["b"], o


def new_plain_update(x):
    o = Plain()
    o.__dict__.update(b=x + 1)
    o.__dict__.pop("a")
    return o.b * 2, o.__dict__["b"], o


# -- `with` on an object Dynamo did not see being created (input-context-manager) --
def with_input(x, cm):
    with cm as c:
        inside = x * c.depth
    return inside, cm.depth


def with_input_mapping(x, m):
    with m.unlock_():
        m["k"] = x + 1
        unlocked = not m.locked
    return m["k"] * 2, unlocked, m.locked


_PATTERNS = (
    ("setitem", setitem),
    ("vars_setitem", vars_setitem),
    ("update", update),
    ("vars_update", vars_update),
    ("setdefault", setdefault),
    ("vars_setdefault", vars_setdefault),
    ("pop", pop),
    ("vars_pop", vars_pop),
    ("delete", delete),
    ("vars_delete", vars_delete),
)

_CTX = {pname: _in_ctx(fn) for pname, fn in _PATTERNS}
globals().update({f.__name__: f for f in _CTX.values()})  # picklable by name

# Unpatched outcomes, measured on 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0,
# 2.12.1, 2.13.0 and 2.15.0 (eager and aot_eager agree; from 2.12.1 on
# DunderDictVariable, pytorch/pytorch#174570/#174941, handles all of them).
_ITEM = (Expect("<2.7", GRAPH_BREAK),)  # GetAttrVariable.call_method __setitem__: #144419 (2.7)
_VARS = (Expect("<2.9", GRAPH_BREAK),)  # BuiltinVariable.call_vars: 2.9
_OTHER = (Expect("<2.12", GRAPH_BREAK),)  # update/setdefault/pop/__delitem__: DunderDictVariable (measured: 2.12.1)
_MAPPING = (Expect("<2.6", GRAPH_BREAK),)  # 2.6: MutableMappingVariable.var_getattr('__dict__') is a ConstDictVariable
# ... whose deletions 2.6-2.12 do not see when the attribute is read back (hasattr(m, k) stays True)
_MAPPING_DEL = (Expect("<2.6", GRAPH_BREAK), Expect("<2.12", WRONG_RESULT))
_MAPPING_VARS_DEL = (Expect("<2.9", GRAPH_BREAK), Expect("<2.12", WRONG_RESULT))


# 2.12+: DunderDictVariable decides setdefault on the first call's keys, unguarded
# (the second call's object has the key): dunder-dict-guards.
_SETDEFAULT_INPUT = (Expect("<2.12", GRAPH_BREAK), Expect(">=2.12", WRONG_RESULT))


def _expected(kind, pattern):
    if kind != "ctx" and pattern.endswith("setdefault"):
        if kind == "mapping" and pattern == "setdefault":
            return (Expect("<2.6", GRAPH_BREAK),) + _SETDEFAULT_INPUT[1:]
        if kind == "mapping":
            return (Expect("<2.9", GRAPH_BREAK), Expect(">=2.12", WRONG_RESULT))
        return _SETDEFAULT_INPUT
    if kind == "mapping":
        deletes = pattern.endswith(("pop", "delete"))
        if pattern.startswith("vars_"):
            return _MAPPING_VARS_DEL if deletes else _VARS
        return _MAPPING_DEL if deletes else _MAPPING
    if pattern == "setitem":
        return _ITEM
    if pattern == "vars_setitem":
        return _VARS
    return _OTHER


_KINDS = (("plain", _plain), ("mapping", _mapping), ("module", _mod))

CASES = CaseList(
    Case(
        f"dict_{kind}_{pname}",
        _patches(pname) + (("mapping-dunder-dict",) if kind == "mapping" else ())
        + (("dunder-dict-guards",) if pname.endswith("setdefault") else ()),
        fn,
        inputs,
        unpatched=_expected(kind, pname),
        doc=f"{pname.replace('_', ' ')} on the __dict__ of an input {kind} object, read back in the same frame",
        # Before 2.12 a module's __dict__ deletion would be replayed as `del m.k` (nn.Module.__delattr__, after
        # the frame's _modules/_parameters/_buffers updates): instance-dict-writes graph-breaks on it.
        torch=">=2.12" if kind == "module" and pname.endswith(("delete", "pop")) else "",
    )
    for kind, inputs in _KINDS
    for pname, fn in _PATTERNS
)
CASES.add(*(
    Case(
        f"dict_ctx_{pname}",
        _patches(pname),
        _CTX[pname],
        _x,
        unpatched=_expected("ctx", pname),
        doc=f"{pname.replace('_', ' ')} on self.__dict__ in __enter__ of a context manager made in the frame "
        "(GenericContextWrappingVariable)",
    )
    for pname, fn in _PATTERNS
))
CASES.add(
    Case("dict_module_parameters", P, module_parameters, _mod_and_params, unpatched=_ITEM,
         doc="m.__dict__['_parameters'] = {...}: m.v, parameters() and named_parameters() see the new dict"),
    Case("dict_module_buffers", P, module_buffers, _mod, unpatched=_ITEM,
         doc="m.__dict__['_buffers'] = {...}: m.b2 and forward() see the new buffers"),
    Case("dict_module_modules", P, module_modules, _mod_and_linear, unpatched=_ITEM,
         doc="m.__dict__['_modules'] = {...}: m.lin and forward() see the new submodule"),
    Case("dict_module_parameters_update", P, module_parameters_update, _mod_and_params, unpatched=_OTHER,
         doc="m.__dict__.update(_parameters={...})"),
    Case("dict_ctx_module_parameters", P, ctx_module_parameters, _x_and_params, unpatched=_ITEM,
         doc="TensorDictParams-like: a module + context manager made in the frame sets _parameters via __dict__"),
    Case("dict_new_plain", P, new_plain, _x, unpatched=_ITEM,
         doc="item assignment on the __dict__ of an object made in the frame, which then escapes"),
    Case("dict_new_plain_update", P, new_plain_update, _x, unpatched=_OTHER,
         doc="update/pop on the __dict__ of an object made in the frame, which then escapes"),
    # What documented cell 3 needs next on 2.5.1 + tensordict 0.6.2 (`with _self._param_td.unlock_():`).
    Case("with_input_context_manager", ("input-context-manager", "instance-dict-writes"), with_input, _input_ctx,
         unpatched=(Expect("<2.14", GRAPH_BREAK),),
         doc="`with cm:` for a context manager passed in (UserDefinedObjectVariable)"),
    Case("with_input_mapping_context_manager", ("input-context-manager", "instance-dict-writes"), with_input_mapping,
         _locked_mapping,
         unpatched=(Expect(">=2.5", GRAPH_BREAK),),
         doc="`with m.unlock_():` for a MutableMapping passed in (tensordict 0.6 TensorDictParams)"),
)


# -- reads through __dict__ / vars() that must see the instance dictionary itself ---
# (issue 11: found by the differential fuzzer; every one of these is a *silently
# wrong* result somewhere without tdcompat, none a mere graph break)
class Shadowed:
    """Instance keys that a property (a data descriptor) and a class attribute share."""

    c = 5

    def __init__(self):
        self.a = torch.ones(3)
        self.__dict__["p"] = 3
        self.__dict__["c"] = 4

    @property
    def p(self):
        return 100


def _shadowed():
    return torch.randn(3), Shadowed()


def read_shadowed_key(x, o):
    return x * o.__dict__["p"], o.__dict__.get("p"), o.p, o.c, o.__dict__["c"], "p" in o.__dict__


def setdefault_shadowed_key(x, o):
    return x * o.__dict__.setdefault("p", 7), o.__dict__.setdefault("c", 9), o.p, o.c


def vars_read_shadowed_key(x, o):
    return x * vars(o)["p"], vars(o).get("c"), o.p


def read_after_setattr(x, o):
    o.a = x + 2
    o.n = 5
    return o.__dict__["a"] * 2, o.__dict__.get("n"), "n" in o.__dict__, o.a


def vars_read_after_setattr(x, o):
    o.a = x + 2
    return vars(o)["a"] * 2, vars(o).get("n"), o.a


def contains_input_key(x, o):
    """The second call's object has an instance key ``b`` the first one lacked."""
    present = "b" in o.__dict__
    return present, o.__dict__.get("b", x), x + 1


_MM = ("mapping-dunder-dict", "mutable-mapping-setattr")

CASES.add(
    # GetAttrVariable.call_method __getitem__/get answers with var_getattr: the property's value (2.5-2.11).
    Case("dict_read_shadowed_key", P, read_shadowed_key, _shadowed, unpatched=(Expect("<2.12", WRONG_RESULT),),
         doc="o.__dict__['p'] where a property p shadows the instance key: the dictionary's value, not the property's"),
    Case("dict_setdefault_shadowed_key", P, setdefault_shadowed_key, _shadowed, unpatched=_OTHER,
         doc="o.__dict__.setdefault(k, d) for a present key a property/class attribute shadows "
             "returns the dict's value"),
    Case("vars_read_shadowed_key", PV, vars_read_shadowed_key, _shadowed,
         unpatched=(Expect("<2.9", GRAPH_BREAK), Expect("<2.12", WRONG_RESULT)),
         doc="vars(o)['p'] where a property p shadows the instance key"),
    # MutableMappingVariable.var_getattr('__dict__') is a copy that does not see m.k = v (2.6-2.11).
    Case("dict_mapping_read_after_setattr", _MM, read_after_setattr, _mapping,
         unpatched=(Expect("<2.6", GRAPH_BREAK), Expect("<2.12", WRONG_RESULT)),
         doc="m.__dict__[k] after m.k = v in the same frame, for a MutableMapping passed in"),
    Case("vars_mapping_read_after_setattr", ("instance-dict-vars",) + _MM, vars_read_after_setattr, _mapping,
         unpatched=(Expect("<2.9", GRAPH_BREAK), Expect("<2.12", WRONG_RESULT)),
         doc="vars(m)[k] after m.k = v in the same frame, for a MutableMapping passed in"),
    Case("dict_plain_read_after_setattr", P, read_after_setattr, _plain,
         doc="control: o.__dict__[k] after o.k = v for a plain object (right on every release)"),
    # `k in o.__dict__` is decided without a guard: 2.5-2.11 GetAttrVariable, 2.12+ DunderDictVariable.
    Case("dict_plain_contains_input_key", ("instance-dict-writes", "dunder-dict-guards"), contains_input_key, _plain,
         unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="'b' in o.__dict__ / o.__dict__.get('b') on a second call whose object has b"),
    Case("dict_mapping_contains_input_key", ("instance-dict-writes", "dunder-dict-guards"), contains_input_key,
         _mapping, unpatched=(Expect("<2.6", WRONG_RESULT), Expect(">=2.12", WRONG_RESULT)),
         doc="the same for a MutableMapping (2.6-2.11 read a guarded copy of its __dict__)"),
)



# -- iteration order of __dict__ after adding a key (dunder-dict-order; issue 11) ------------------
def list_dict_after_add(x, o):
    """CPython order: the object's keys, then the added one."""
    o.z = x + 1
    return list(o.__dict__), x * 2


def list_vars_after_add_and_delete(x, o):
    o.z = x + 1
    del o.a
    return list(vars(o)), [k for k in o.__dict__], x * 2


CASES.add(
    Case("dict_order_plain_after_add", ("dunder-dict-order",), list_dict_after_add, _plain,
         unpatched=(Expect(">=2.12", WRONG_RESULT),), torch=">=2.12",
         doc="list(o.__dict__) after o.z = v: the new key comes last (a graph break before 2.12, with tdcompat too)"),
    Case("dict_order_module_after_add", ("dunder-dict-order",), list_dict_after_add, _mod,
         unpatched=(Expect(">=2.12", WRONG_RESULT),), torch=">=2.12",
         doc="the same on an nn.Module passed in"),
    Case("vars_order_plain_after_add_and_delete", ("dunder-dict-order",), list_vars_after_add_and_delete, _plain,
         unpatched=(Expect(">=2.12", WRONG_RESULT),), torch=">=2.12",
         doc="list(vars(o)) after adding z and deleting a"),
)


# -- o.__dict__[k] raising KeyError is guarded (dunder-dict-guards on 2.12+; fuzzer seed 106) ------
def getitem_input_key(x, o):
    """The second call's object has ``b``: eager reads it then."""
    try:
        value = o.__dict__["b"]
    except KeyError:
        value = None
    return value is None, x + 1


CASES.add(
    Case("dict_plain_getitem_input_key", ("instance-dict-writes", "dunder-dict-guards"), getitem_input_key, _plain,
         unpatched=(Expect("<2.12", GRAPH_BREAK), Expect(">=2.12", WRONG_RESULT)),
         doc="o.__dict__['b'] in a try on a second call whose object has b"),
    Case("dict_mapping_getitem_input_key", ("instance-dict-writes", "dunder-dict-guards"), getitem_input_key,
         _mapping, unpatched=(Expect("<2.6", GRAPH_BREAK), Expect(">=2.7", WRONG_RESULT)),
         doc="the same for a MutableMapping (2.6 reads a guarded copy of its __dict__)"),
)


# -- __dict__ deletions on 2.12 (dunder-dict-replay; fuzzer seeds 60, 83, 238) ---------------------
class ClassAttr:
    """``c`` is a class attribute only; the instance dict does not have it."""

    c = 5

    def __init__(self):
        self.a = torch.ones(3)


def _class_attr():
    return torch.randn(3), ClassAttr()


def _delete_key(o, key) -> bool:
    """``del o.__dict__[key]``; True where it raised KeyError."""
    try:
        del o.__dict__[key]
    except KeyError:
        return True
    return False


def delete_missing_class_key(x, o):
    """``del o.__dict__['c']`` raises KeyError: 2.12 replayed it as ``del o.c`` (AttributeError)."""
    return _delete_key(o, "c"), x * o.c


def delete_input_key(x, o):
    """The first call's object lacks ``b`` (KeyError), the second's has it (vary adds it)."""
    return _delete_key(o, "b"), x + 1


CASES.add(
    Case("dict_delete_missing_class_key", ("instance-dict-writes", "dunder-dict-replay"), delete_missing_class_key,
         _class_attr, unpatched=(Expect("<2.13", GRAPH_BREAK),),
         doc="del o.__dict__['c'] where c is only a class attribute: KeyError, caught in the frame"),
    # The same on DunderDictVariable alone (2.12+), where only dunder-dict-replay is needed.
    Case("dunder_dict_delete_missing_class_key", ("dunder-dict-replay",), delete_missing_class_key, _class_attr,
         unpatched=(Expect("==2.12.*", GRAPH_BREAK),), torch=">=2.12",
         doc="del o.__dict__['c'] where c is only a class attribute (2.12: AttributeError out of compiled code)"),
    # 2.12: no KeyError in the trace; 2.13+: KeyError, but compiled for the first call's keys, unguarded.
    Case("dict_delete_input_key", ("dunder-dict-replay", "dunder-dict-guards"), delete_input_key, _class_attr,
         unpatched=(Expect(">=2.12", WRONG_RESULT),), torch=">=2.12",
         doc="del o.__dict__['b'] raising KeyError on the first call, deleting b on the second"),
)


# -- cases that need one patch (and what it declares it needs) alone, for tests/test_records.py's
# -- range proof on every measured release (issue 13) -------------------------------------------
class AttrLockedMapping(StoreMapping):
    """A MutableMapping context manager whose ``__enter__``/``__exit__`` only set attributes."""

    def __init__(self):
        self._store = {"k": torch.ones(3)}
        self.locked = True
        self.depth = 0

    def __enter__(self):
        self.locked = False
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.locked = True
        self.depth -= 1
        return False


class AttrCtx:
    """A plain context manager whose ``__enter__``/``__exit__`` only set attributes."""

    def __init__(self):
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        return self

    def __exit__(self, *exc):
        self.depth -= 1
        return False


def with_input_mapping_attrs(x, m):
    with m as c:
        m["k"] = x + 1
        unlocked = not c.locked
    return m["k"] * 2, unlocked, m.locked, m.depth


def vars_read(x, o):
    return x * vars(o)["n"], vars(o)["a"] + 1


CASES.add(
    Case("with_input_mapping_attr_context_manager", ("input-context-manager", "mutable-mapping-setattr"),
         with_input_mapping_attrs, lambda: (torch.randn(3), AttrLockedMapping()),
         unpatched=(Expect(">=2.5", GRAPH_BREAK),),
         doc="`with m:` for a MutableMapping passed in whose __enter__/__exit__ set attributes"),
    Case("with_input_attr_context_manager", ("input-context-manager",), with_input, lambda: (torch.randn(3), AttrCtx()),
         unpatched=(Expect("<2.14", GRAPH_BREAK),),
         doc="`with cm:` for a plain context manager passed in whose __enter__/__exit__ set attributes"),
    Case("dunder_dict_contains_input_key", ("dunder-dict-guards",), contains_input_key, _plain,
         unpatched=(Expect(">=2.12", WRONG_RESULT),), torch=">=2.12",
         doc="'b' in o.__dict__ on a second call whose object has b, on DunderDictVariable (2.12+)"),
    Case("vars_plain_read", ("instance-dict-vars",), vars_read, _plain, unpatched=(Expect("<2.9", GRAPH_BREAK),),
         doc="vars(o)[k] on a plain object passed in (no BuiltinVariable.call_vars before 2.9)"),
)


# -- reads after __dict__ writes and deletions on 2.12 (dunder-dict-replay; fuzzer seeds 11000058,
# -- 11000215, 11000424, 11000491 of seed 11): 2.12 answers `o.k` from its record of the write --------
class Hidden:
    """A property ``p`` (a data descriptor: it wins over the instance key) and a class attribute ``c``."""

    c = 5

    def __init__(self, x=None):
        self.a = torch.ones(3) if x is None else x

    @property
    def p(self):
        return 100


def made_write_hidden_read(x):
    """The frame makes the object: 2.12 returns the written value for ``o.p`` (silently)."""
    o = Hidden(x)
    o.__dict__["p"] = x * 2
    return o.p * x, getattr(o, "p", None), o.__dict__["p"], o


def made_update_hidden_read(x):
    o = Hidden(x)
    o.__dict__.update(p="s")
    vars(o).setdefault("q", 3)
    return o.p, hasattr(o, "p"), o.q, o


def made_pop_hidden_read(x):
    """After the pop 2.12 reads its deletion record: ``hasattr(o, 'p')`` False, ``o.p`` a break."""
    o = Hidden(x)
    o.__dict__["p"] = 3
    return o.__dict__.pop("p") * x, hasattr(o, "p"), o.p, o


def made_delete_class_key_read(x):
    """Deleting the instance key ``c`` shows the class attribute again: 2.12 says it is gone."""
    o = Hidden(x)
    o.__dict__["c"] = x
    del o.__dict__["c"]
    return hasattr(o, "c"), getattr(o, "c", 0) * x, o


def input_write_hidden_read(x, o):
    """The same read on an object passed in (dunder-dict-replay broke on the write before)."""
    o.__dict__["p"] = x * 2
    return o.p * x, getattr(o, "p", None), o.__dict__["p"] + 1


CASES.add(
    Case("dict_made_write_hidden_read", ("dunder-dict-replay",), made_write_hidden_read, _x, torch=">=2.12",
         unpatched=(Expect("==2.12.*", WRONG_RESULT),),
         doc="o.__dict__['p'] = v, then o.p where p is a property, o made in the frame"),
    Case("dict_made_update_hidden_read", ("dunder-dict-replay",), made_update_hidden_read, _x, torch=">=2.12",
         unpatched=(Expect("==2.12.*", WRONG_RESULT),),
         doc="o.__dict__.update(p=v), then o.p, o made in the frame"),
    Case("dict_made_pop_hidden_read", ("dunder-dict-replay",), made_pop_hidden_read, _x, torch=">=2.12",
         unpatched=(Expect("==2.12.*", GRAPH_BREAK),),
         doc="o.__dict__.pop('p'), then hasattr(o, 'p') and o.p, o made in the frame"),
    Case("dict_made_delete_class_key_read", ("dunder-dict-replay",), made_delete_class_key_read, _x,
         torch=">=2.12", unpatched=(Expect("==2.12.*", GRAPH_BREAK),),
         doc="del o.__dict__['c'], then hasattr(o, 'c') and getattr(o, 'c', 0) where c is a class attribute"),
    Case("dict_input_write_hidden_read", ("dunder-dict-replay",), input_write_hidden_read,
         lambda: (torch.randn(3), Hidden()), torch=">=2.12", unpatched=(Expect("==2.12.*", WRONG_RESULT),),
         doc="o.__dict__['p'] = v, then o.p where p is a property, o passed in"),
)


# -- a property backed by the instance dict (upstream test_dicts.py's
# -- test_property_backed_by_dunder_dict_mutated): its setter writes o.__dict__, its getter reads it --
class Backed:
    """``v`` lives in ``__dict__`` under the name of the property that reads and writes it."""

    def __init__(self, x):
        self.__dict__["v"] = x

    @property
    def v(self):
        return self.__dict__["v"] * 2

    @v.setter
    def v(self, value):
        self.__dict__["v"] = value + 1


def property_backed_write_read(x, o):
    """``o.v`` after the setter wrote ``o.__dict__['v']``: CPython runs the getter again; Dynamo
    2.8-2.11 returns the stored value from its side effects."""
    a = o.v
    o.v = a + x
    b = o.v
    o.__dict__["v"] = b - 1
    return a, b, o.v, o.__dict__["v"]


def made_property_backed_write_read(x):
    o = Backed(x)
    o.v = x * 3
    return o.v, o.__dict__["v"], o


CASES.add(
    Case("property_backed_by_instance_dict", ("instance-dict-writes", "dunder-dict-replay"),
         property_backed_write_read, lambda: (torch.randn(3), Backed(torch.randn(3))),
         unpatched=(Expect("<2.12", GRAPH_BREAK, detail="RecursionError"), Expect("==2.12.*", WRONG_RESULT)),
         doc="a property whose getter and setter use o.__dict__['v']: o.v = ..., then o.v (o passed in)"),
    Case("made_property_backed_by_instance_dict", ("instance-dict-writes", "dunder-dict-replay"),
         made_property_backed_write_read, _x,
         unpatched=(Expect("<2.7", GRAPH_BREAK), Expect("==2.7.*", GRAPH_BREAK, detail="RecursionError"),
                    Expect(">=2.8,<2.13", WRONG_RESULT)),
         doc="the same on an object made in the frame"),
)


class Counted:
    """A property over ``__dict__['v']`` whose getter is not the stored value and whose setter has an
    effect of its own (it counts): a replay through the setter counts twice, a read of the record
    skips the getter."""

    def __init__(self, x):
        self.__dict__["v"] = x
        self.sets = 0

    @property
    def v(self):
        return self.__dict__["v"] * 10

    @v.setter
    def v(self, value):
        self.sets = self.sets + 1
        self.__dict__["v"] = value


def counted_write_read(x, o):
    """Before 2.8 Dynamo replays ``o.__dict__['v'] = ...`` as ``o.v = ...`` (the setter again);
    tdcompat replays it as a ``__dict__`` write."""
    a = o.v
    o.v = a + x
    o.__dict__["v"] = o.__dict__["v"] - x
    o.w = x
    return a, o.v, o.sets, list(o.__dict__)


def made_counted_write_read(x):
    o = Counted(x)
    o.__dict__["v"] = x + 1
    o.v = o.v + x
    return o.v, o.sets, o


CASES.add(
    Case("property_counted_through_instance_dict", ("instance-dict-writes", "dunder-dict-replay", "dunder-dict-order"),
         counted_write_read, lambda: (torch.randn(3), Counted(torch.randn(3))),
         unpatched=(Expect("<2.12", GRAPH_BREAK), Expect(">=2.12", WRONG_RESULT)),
         doc="a counting property setter that writes o.__dict__['v'], then a __dict__ write of v (o passed in): "
         "replayed as __dict__ writes, the getter traced for every read"),
    Case("made_property_counted_through_instance_dict", ("instance-dict-writes", "dunder-dict-replay"),
         made_counted_write_read, _x,
         unpatched=(Expect("<2.8", GRAPH_BREAK), Expect(">=2.8,<2.13", WRONG_RESULT)),
         doc="the same on an object made in the frame and returned"),
)


# -- the whole instance dict: keys()/values()/items()/len()/iteration (dunder-dict-views, <2.12;
# -- dunder-dict-order, 2.12+). TorchRL 0.6's ValueEstimatorBase.vmap_randomness iterates
# -- `self.__dict__.values()` of the estimator its loss builds in the first call (issue 14) -------
class LazyEstimator(torch.nn.Module):
    """TorchRL's shape: a helper module with a submodule, asked once for a flag it caches."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.gamma = 0.9
        self._flag = None

    def flag(self):
        if self._flag is None:
            found = 0
            for val in self.__dict__.values():
                if isinstance(val, torch.nn.Module):  # submodules live in _modules, not here
                    found += 1
            self._flag = "same" if found == 0 else "different"
        return self._flag


def made_module_dict_values(x):
    est = LazyEstimator(torch.nn.ReLU())  # no Parameter made in the frame (2.5 breaks on that)
    return x * est.gamma, est.flag(), len(est.__dict__), est._flag


def made_object_dict_items(x):
    """Items, keys and len of an object made in the frame; a write during the iteration to a key
    the loop has yet to reach shows in it, as in CPython."""
    o = Hidden(x)
    o.b = 2
    o.z = x + 1
    seen = []
    for k, v in o.__dict__.items():
        o.z = x * 3
        seen.append(k)
        if isinstance(v, torch.Tensor):
            x = x + v
    return x, seen, len(o.__dict__), "z" in o.__dict__.keys(), [k for k in o.__dict__.keys()]


class Ordered:
    def __init__(self):
        self.a = 1
        self.b = torch.ones(3)


def _reorder(args):
    """Second call: the same keys in another order (a deleted and re-added key moves to the end)."""
    o = args[1]
    a = o.__dict__.pop("a")
    o.a = a + 1


def input_dict_keys_order(x, o):
    """A list comprehension, not a generator: 2.5-2.6 run a generator to its end before its
    consumer's first step, so a live step inside one graph-breaks (``dunder-dict-views``)."""
    return [k for k in o.__dict__.keys()], x + sum([v for v in o.__dict__.values() if isinstance(v, int)])


def input_dict_add_during_iteration(x, o):
    """A key added while iterating: CPython raises RuntimeError at the next step."""
    seen = []
    try:
        for k in o.__dict__:
            o.__dict__["added"] = 1
            seen.append(k)
    except RuntimeError:
        seen.append("RuntimeError")
    return x + len(seen), seen


def input_dict_whole_consumers(x, o):
    """``list``/``tuple``/``sorted``/``dict``/``copy``/``[*...]`` of ``o.__dict__`` and its views: CPython
    takes every entry at once; a write between two consumers shows in the next one, not in a copy."""
    keys = list(o.__dict__)
    o.c = x + 1
    d = o.__dict__.copy()
    d["local"] = 1
    return (x * 2, keys, tuple(o.__dict__.keys()), sorted(o.__dict__, reverse=True), dict(o.__dict__.items()), d,
            [*o.__dict__.values()], dict(vars(o)))


def input_dict_copy(x, o):
    """``o.__dict__.copy()`` is a new dict: a write to the copy leaves ``o`` alone, a later attribute
    store leaves the copy alone (upstream's ``test_dunder_dict_copy_does_not_alias_instance_dict``)."""
    d = o.__dict__.copy()
    d["local"] = x
    o.c = x + 1
    return x * 2, d, vars(o).copy(), list(o.__dict__)


CASES.add(
    Case("dunder_dict_copy_input", ("dunder-dict-order",), input_dict_copy,
         lambda: (torch.randn(3), Ordered()), vary=_reorder, torch=">=2.12,<2.13",
         unpatched=(Expect(">=2.12,<2.13", GRAPH_BREAK,
                           detail="InternalTorchDynamoError: AttributeError: 'SideEffectsProxyDict' object has no "
                           "attribute 'copy'"),),
         doc="o.__dict__.copy() and vars(o).copy() of an object passed in, a store after the copy (2.12 crashed)"),
    Case("dict_views_whole_consumers", ("dunder-dict-views",), input_dict_whole_consumers,
         lambda: (torch.randn(3), Ordered()), vary=_reorder, torch="<2.12",
         unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="list/tuple/sorted/dict/copy/[*...] of o.__dict__ and its views, a write between two of them"),
    Case("dict_views_made_module_values", ("dunder-dict-views",), made_module_dict_values, _x, torch="<2.12",
         unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="for val in self.__dict__.values() on a module made in the frame (TorchRL 0.6's vmap_randomness)"),
    Case("dict_views_made_object_items", ("dunder-dict-views",), made_object_dict_items, _x, torch="<2.12",
         unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="o.__dict__.items()/keys()/len() and iteration of an object made in the frame, written during it"),
    Case("dict_views_input_keys_order", ("dunder-dict-views",), input_dict_keys_order,
         lambda: (torch.randn(3), Ordered()), vary=_reorder, torch="<2.12",
         unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="iterating o.__dict__ of an object passed in; the second call's object has its keys in another order"),
    Case("dict_order_add_during_iteration", ("dunder-dict-order",), input_dict_add_during_iteration,
         lambda: (torch.randn(3), Ordered()), torch=">=2.12",
         unpatched=(Expect(">=2.12", WRONG_RESULT),),
         doc="a key added to o.__dict__ while iterating it raises RuntimeError (DunderDictVariable, 2.12+)"),
)


def made_readd_dict(x):
    """``del o.a; o.a = v`` on an object made in the frame: ``a`` is last in CPython's dict; the
    rebuilt object had it first (2.5-2.12). 2.12+ return an empty dict here (open upstream), so
    the order shows there only through iteration (``test_never_worse``)."""
    o = Ordered()
    del o.a
    o.a = x + 1
    return o.__dict__, x * 2


CASES.add(
    Case("readd_order_made_object", ("readd-order",), made_readd_dict, _x, torch="<2.12",
         unpatched=(Expect("<2.12", WRONG_RESULT),),
         doc="del o.a; o.a = v on an object made in the frame, its __dict__ returned (key order)"),
)


def made_readd_keys(x):
    """The same, listed in the frame: 2.12-2.13 list ``a`` first (their record's order)."""
    o = Ordered()
    del o.a
    o.a = x + 1
    return [k for k in o.__dict__.keys()], x * 2


CASES.add(
    Case("readd_order_made_object_keys", ("readd-order",), made_readd_keys, _x, torch=">=2.12",
         unpatched=(Expect("<2.14", WRONG_RESULT),),
         doc="del o.a; o.a = v on an object made in the frame, then list(o.__dict__.keys())"),
)


def made_dict_returned(x):
    """``o.__dict__`` of an object made in the frame leaves it without ``o``: 2.12+ return ``{}``."""
    o = Ordered()
    o.c = x * 2
    return o.__dict__, x + 1


def made_view_returned(x):
    """A view of it: an empty ``dict_values`` on 2.12+."""
    o = Ordered()
    o.b = x + 1
    return o.__dict__.values()


CASES.add(
    Case("dunder_dict_escape_made_object", ("dunder-dict-escape",), made_dict_returned, _x, torch=">=2.12",
         unpatched=(Expect(">=2.12", WRONG_RESULT),),
         doc="return o.__dict__ of an object made in the frame (not o itself)"),
    Case("dunder_dict_escape_made_view", ("dunder-dict-escape",), made_view_returned, _x, torch=">=2.12",
         unpatched=(Expect(">=2.12", WRONG_RESULT),),
         doc="return o.__dict__.values() of an object made in the frame"),
)


class _Plain:
    """A plain object: its instance dict takes keys that are not a ``str`` through the mapping API."""


def made_dict_non_str_keys(x):
    """``o.__dict__[1] = v``, a float key through ``vars(o)``, an attribute after them, ``del`` and ``pop`` of
    non-str keys, on an object made in the frame (upstream's ``test_dunder_dict_non_str_key_*``): the keys keep
    CPython's order, ``1``/``True`` are one entry."""
    f = _Plain()
    f.__dict__[1] = x
    d = vars(f)
    d[2.5] = x * 2
    f.a = x + 1
    d[True] = d[1] + 1
    got = (d[1], d[2.5], 2.5 in d, len(d), list(d))
    del d[2.5]
    v = f.__dict__.pop(1)
    f.__dict__[None] = v
    return got, dict(f.__dict__), list(f.__dict__), f


CASES.add(
    Case("dunder_dict_non_str_keys", ("dunder-dict-non-str-key",), made_dict_non_str_keys, _x, torch=">=2.13",
         unpatched=(Expect("<2.14", GRAPH_BREAK, detail=r"^AssertionError: Expected str key"),),
         doc="o.__dict__[1] = v, vars(o)[2.5] = v, del/pop of non-str keys on an object made in the frame "
             "(2.13 crashed with AssertionError, also without fullgraph; 2.12: a graph break with tdcompat)"),
    Case("dunder_dict_non_str_keys_replayed", ("instance-dict-writes",), made_dict_non_str_keys, _x, torch="<2.12",
         unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="the same before 2.12: instance-dict-writes replays the object's record as __dict__ writes "
             "(Dynamo's STORE_ATTR replay cannot name a key that is not a str: a graph break)"),
)


def made_non_str_key_getattr(x):
    """``getattr(o, 1)`` / ``hasattr(o, 1)`` after ``o.__dict__[1] = v``: CPython's ``TypeError`` (a name must be a
    ``str``), caught in the frame, whatever the instance dict holds."""
    f = _Plain()
    f.__dict__[1] = x
    out = []
    try:
        out.append(getattr(f, 1))
    except TypeError as error:
        out.append(str(error))
    try:
        out.append(hasattr(f, 1))
    except TypeError as error:
        out.append(str(error))
    return x + 1, out, f


CASES.add(
    Case("dunder_dict_non_str_key_getattr", ("dunder-dict-non-str-key",), made_non_str_key_getattr, _x,
         torch=">=2.13",
         unpatched=(Expect("<2.14", GRAPH_BREAK, detail=r"^AssertionError: Expected str key"),
                    Expect(">=2.14,<2.15", WRONG_RESULT)),
         doc="getattr(o, 1) / hasattr(o, 1) after o.__dict__[1] = v: TypeError (2.14: the item and True; 2.13: "
             "the write crashed)"),
)
