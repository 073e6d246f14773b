"""Literal and enum class attributes read without a guard (class-attr-guard).

``UserDefinedClassVariable.var_getattr`` (2.5-2.11) returns a literal or enum class
attribute as a constant with no source: nothing is guarded, so the first call's value
is reused after the attribute changes, and a list attribute read in the frame is a
sourceless copy that ``append`` cannot mutate (a graph break). Found by the differential fuzzer's class family;
fixed upstream in 2.12 (pytorch/pytorch#177191).
"""

from __future__ import annotations

import enum

import torch

from .harness import GRAPH_BREAK, WRONG_RESULT, Case, CaseList, Expect

PATCH = ("class-attr-guard",)
_WRONG = (Expect("<2.12", WRONG_RESULT),)


class Mode(enum.Enum):
    SUM = "sum"
    MEAN = "mean"


class Settings:
    """Module-level, so both calls see the same class; the inputs reset it."""

    scale = 2
    name = "a"
    mode = Mode.SUM
    tags: list = []


class Tuned(Settings):
    """Inherits everything; the second call gives it its own ``scale``."""


def _reset():
    Settings.scale, Settings.name, Settings.mode, Settings.tags = 2, "a", Mode.SUM, ["t"]
    if "scale" in Tuned.__dict__:
        del Tuned.scale


def _settings():
    _reset()
    return Settings, torch.randn(3)


def _tuned():
    _reset()
    return Tuned, torch.randn(3)


def _settings_and_tags():
    _reset()
    return Settings, Settings.tags, torch.randn(3)


def _change(args):
    args[0].scale = 5
    args[0].name = "b"
    args[0].mode = Mode.MEAN


def _own_scale(args):
    args[0].scale = 7  # Tuned's own entry now shadows Settings.scale


def scaled(cls, x):
    out = x * cls.scale
    return (out.mean() if cls.mode is Mode.MEAN else out.sum()), cls.name + "!"


def inherited_scale(cls, x):
    return x * cls.scale


def append_tag(cls, tags, x):
    cls.tags.append("new")
    return len(cls.tags), x + 1


CASES = CaseList()
CASES.add(
    Case("class_attr_changed_between_calls", PATCH, scaled, _settings, vary=_change, unpatched=_WRONG,
         doc="`x * cls.scale`, `cls.mode is Mode.MEAN`, `cls.name`: the class attributes change before the "
             "second call"),
    Case("class_attr_shadowed_between_calls", PATCH, inherited_scale, _tuned, vary=_own_scale, unpatched=_WRONG,
         doc="`x * Sub.scale` where the second call's subclass has its own `scale`"),
    Case("class_attr_list_mutated", PATCH, append_tag, _settings_and_tags, unpatched=(Expect("<2.12", GRAPH_BREAK),),
         doc="`cls.tags.append(...)` on a list class attribute: the real list must change"),
)


class _OwnKeys:
    w = 1


def _own_keys():
    if "v" in vars(_OwnKeys):
        del _OwnKeys.v
    return torch.randn(3), _OwnKeys


def _gains_v(args):
    args[1].v = 5


def class_own_dict_read(x, cls):
    """The class's own dict, read by key: presence and value."""
    return x + 1, "v" in cls.__dict__, cls.__dict__.get("v", "D"), "w" in cls.__dict__


CASES.add(
    Case("class_own_dict_key_between_calls", ("class-dict-guard",), class_own_dict_read, _own_keys, vary=_gains_v,
         unpatched=(Expect("<2.12", WRONG_RESULT),),
         doc="`'v' in K.__dict__` after K gains its own `v` between calls"),
)


# -- a class attribute that comes and goes, read in a try (getattr-missing-guard; seed-0 program 444) --
class _Flagged:
    """Module-level: the inputs give it ``u``; the second call's inputs take it away."""


class _FlaggedObj(_Flagged):
    pass


def _flagged():
    _Flagged.u = "odd"
    return _FlaggedObj(), torch.randn(3)


def _unflagged():
    if "u" in vars(_Flagged):
        del _Flagged.u
    return _FlaggedObj(), torch.randn(3)


def _drop_u(args):
    if "u" in vars(_Flagged):
        del _Flagged.u


def _add_u(args):
    _Flagged.u = "odd"


def class_attr_in_try(o, x):
    out = [x + 1]
    try:
        out.append(type(o).u)  # only passed on: Dynamo 2.12+ reads it again after the graph
    except AttributeError:
        out.append("AttributeError")
    return out


#: Measured: 2.12.1-2.15.0 raise it out of compiled code (the re-read after the graph).
_CLASS_ESCAPED = r"^AttributeError: type object '_FlaggedObj' has no attribute 'u'"

CASES.add(
    Case("class_attr_passed_on_in_try", ("getattr-missing-guard", "class-attr-guard"), class_attr_in_try, _flagged,
         vary=_drop_u,
         unpatched=(Expect("<2.12", WRONG_RESULT), Expect(">=2.12", GRAPH_BREAK, detail=_CLASS_ESCAPED)),
         doc="`try: out.append(type(o).u)` compiled while the class has u, called after it lost it"),
    Case("class_attr_missing_in_try", ("getattr-missing-guard", "class-attr-guard"), class_attr_in_try,
         _unflagged, vary=_add_u, unpatched=(Expect(">=2.5", WRONG_RESULT),),
         doc="the same compiled while the class has no u, called after it gained it: the except branch reused"),
)


# -- a class attribute stored in the frame, then hasattr / the class dict (class-stored-attrs) -------
class _Stored:
    v = 0


class _StoredSub(_Stored):
    pass


def _stored():
    for cls, keys in ((_Stored, ("w", "z")), (_StoredSub, ("w", "z", "v"))):
        for key in keys:
            if key in vars(cls):
                delattr(cls, key)
    return torch.randn(3), _Stored, _StoredSub


def store_then_hasattr(x, base, sub):
    base.w = "stored"
    return x + 1, hasattr(sub, "w"), hasattr(sub, "z"), hasattr(base, "w")


def store_then_class_dict(x, base, sub):
    sub.z = "new"
    sub.v = 3
    d = sub.__dict__
    return x * sub.v, "z" in d, d.get("z", "D"), [k for k in d if k in ("v", "z")], d["v"]


def store_then_class_dict_get(x, base, sub):
    sub.z = "new"
    return x + 1, "z" in sub.__dict__, sub.__dict__.get("z", "D"), "z" in base.__dict__


def _stored_reset():
    _Stored.v = 0
    return _stored()


def store_then_subclass_read(x, base, sub):
    base.v = x * 2
    return sub.v + 1, getattr(sub, "v", "D")


def store_then_instance_read(x, base, sub):
    base.v = x + 1
    base.w = "class"
    o = sub()
    return o.v, getattr(o, "w", "D"), hasattr(sub(), "w")


CASES.add(
    Case("class_store_then_hasattr_subclass", ("class-stored-attrs",), store_then_hasattr, _stored,
         torch=">=2.13", unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`Base.w = v; hasattr(Sub, 'w')` in one frame (2.5-2.12: a class store is a graph break)"),
    Case("class_store_then_class_dict", ("class-stored-attrs",), store_then_class_dict, _stored,
         torch=">=2.13", unpatched=(Expect(">=2.13", GRAPH_BREAK, detail="Observed exception"),),
         doc="`K.z = 'new'; K.v = 3` then `K.__dict__`: membership, get, key order, `d['v']` (KeyError traced)"),
    Case("class_store_then_class_dict_get", ("class-stored-attrs",), store_then_class_dict_get, _stored,
         torch=">=2.13", unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`K.z = 'new'` then `'z' in K.__dict__`, `K.__dict__.get('z')`: False and the default traced"),
    Case("class_store_then_subclass_read", ("class-stored-attrs",), store_then_subclass_read, _stored_reset,
         torch=">=2.13", unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`Base.v = x * 2` then `Sub.v`, `getattr(Sub, 'v', d)`: the value before the store"),
    Case("class_store_then_instance_read", ("class-stored-attrs",), store_then_instance_read, _stored_reset,
         torch=">=2.13", unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`Base.v = x + 1; Base.w = 'class'` then `Sub().v`, `getattr(Sub(), 'w', d)`, `hasattr`: the class "
         "before the stores"),
)


# -- hash() of a class whose metaclass defines __hash__ (metaclass-hash) ---------------------------
class _SaltedMeta(type):
    def __hash__(cls):  # reads the class's state: another number once the salt changes
        return len(cls.__name__) * 1000 + cls.salt.n


class _Salt:
    def __init__(self):
        self.n = 1


class _Salted(metaclass=_SaltedMeta):
    salt = None


def _salted():
    _Salted.salt = salt = _Salt()
    return torch.randn(3), _Salted, salt


def hash_of_class(x, cls, salt):
    h = hash(cls)
    return x + h % 7, h


CASES.add(
    Case("hash_class_metaclass_hash", ("metaclass-hash",), hash_of_class, _salted,
         torch=">=2.13", unpatched=(Expect(">=2.13", WRONG_RESULT),),
         doc="`hash(K)` where `type(K).__hash__` reads `K.salt.n`, which the second call changes: the first "
         "call's number, baked in"),
)
