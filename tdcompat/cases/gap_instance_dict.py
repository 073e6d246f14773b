"""Gap 3: writing an object's attributes through its ``__dict__`` (issue 5).

Every case writes through ``obj.__dict__`` (or ``vars(obj)``) and reads the
written attribute back in the same compiled function, both as ``obj.k`` and as
``obj.__dict__[k]``; the harness then compares the object's state with eager
(for modules that includes ``named_parameters()`` and ``named_buffers()``).
"""

from __future__ import annotations

from collections.abc import MutableMapping

import torch

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, Expect

P = ("instance-dict-writes",)


# -- the objects ---------------------------------------------------------------
class Plain:
    def __init__(self):
        self.a = torch.ones(3)
        self.n = 2


class Mapping(MutableMapping):
    """A user MutableMapping that also has ordinary attributes."""

    def __init__(self):
        self._store = {"k": torch.full((3,), 2.0)}
        self.a = torch.ones(3)
        self.n = 2

    def __getitem__(self, key):
        return self._store[key]

    def __setitem__(self, key, value):
        self._store[key] = value

    def __delitem__(self, key):
        del self._store[key]

    def __iter__(self):
        return iter(self._store)

    def __len__(self):
        return len(self._store)


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
    as GenericContextWrappingVariable); it keeps its state through __dict__."""

    def __init__(self, x):
        self.__dict__["x"] = x
        self.__dict__["depth"] = 0

    def __enter__(self):
        self.__dict__["inside"] = self.x + 1
        self.__dict__.update(depth=self.depth + 1, entered=True)
        return self

    def __exit__(self, *exc):
        self.__dict__.pop("inside")
        self.__dict__.setdefault("exits", 0)
        del self.__dict__["entered"]
        return False


class VarsCtx:
    def __init__(self, x):
        vars(self)["x"] = x

    def __enter__(self):
        vars(self)["inside"] = self.x * 2
        return self

    def __exit__(self, *exc):
        vars(self).pop("inside")
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
    return x + a, missing, "a" in o.__dict__


def vars_pop(x, o):
    a = vars(o).pop("a")
    return x + a, "a" in vars(o)


def delete(x, o):
    del o.__dict__["a"]
    return x * 2, "a" in o.__dict__


def vars_delete(x, o):
    del vars(o)["a"]
    return x * 2, "a" in o.__dict__


# -- nn.Module bookkeeping dicts ---------------------------------------------------
def module_parameters(x, m, p):
    m.__dict__["_parameters"] = {"v": p}
    return x * m.v, m.__dict__["_parameters"]["v"] * 2, len(list(m.parameters()))


def module_buffers(x, m):
    m.__dict__["_buffers"] = {"buf": x * 2, "b2": x + 1}
    m.__dict__.update(a=x * 4)
    return m.b2 * 2, m.a, m(x)


def module_modules(x, m, lin):
    m.__dict__["_modules"] = {"lin": lin}
    return m.lin(x), m(x)


# -- objects created in the compiled function ---------------------------------
def ctx_manager(x):
    with Ctx(x) as c:
        inside = c.inside * 2 + c.__dict__["inside"]
        depth = c.depth
    return inside, depth, c.exits, "entered" in c.__dict__


def ctx_manager_vars(x):
    with VarsCtx(x) as c:
        inside = c.inside + vars(c)["inside"]
    return inside, "inside" in c.__dict__


def ctx_module_parameters(x, p, q):
    with ParamsCtx(["p", "q"], [p, q]) as m:
        out = x * m.p + m.q
    return out, len(list(m.parameters()))


def new_plain(x):
    o = Plain()
    o.__dict__["b"] = x + 1
    o.__dict__.update(c=x * 2)
    return o.b + o.c, o.__dict__["b"]


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

_KINDS = (("plain", _plain), ("mapping", _mapping), ("module", _mod))

CASES = tuple(
    Case(f"dict_{kind}_{pname}", P, fn, inputs, unpatched=(), doc=f"{pname} through __dict__ of a {kind} object")
    for kind, inputs in _KINDS
    for pname, fn in _PATTERNS
) + (
    Case("dict_module_parameters", P, module_parameters, _mod_and_params, doc="m.__dict__['_parameters'] = {...}"),
    Case("dict_module_buffers", P, module_buffers, _mod, doc="m.__dict__['_buffers'] = {...}"),
    Case("dict_module_modules", P, module_modules, _mod_and_linear, doc="m.__dict__['_modules'] = {...}"),
    Case("dict_ctx_manager", P, ctx_manager, _x, doc="context manager keeping state in __dict__"),
    Case("dict_ctx_manager_vars", P, ctx_manager_vars, _x, doc="context manager keeping state in vars(self)"),
    Case("dict_ctx_module_parameters", P, ctx_module_parameters, _x_and_params, doc="TensorDictParams-like __init__"),
    Case("dict_new_plain", P, new_plain, _x, doc="object created in the compiled function"),
)
