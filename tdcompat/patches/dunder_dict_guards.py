"""``k in obj.__dict__`` and iterating it are not guarded (torch 2.12 on).

Root cause: torch 2.12 made ``obj.__dict__`` a real dictionary tracker,
``DunderDictVariable`` (torch/_dynamo/variables/dicts.py, pytorch/pytorch#174570
and #174941), backed by the side-effects table. It overrides
``install_dict_contains_guard`` and ``install_dict_keys_match_guard`` with
no-ops ("Mutations to __dict__ are tracked through side effects, so we don't
need to install guards"). That holds for mutations made in the frame, not for
the object passed in: its instance dictionary may have other keys on the next
call. Code compiled for an input without ``b`` answers ``"b" in o.__dict__``
with ``False`` (or ``o.__dict__.get("b")`` with the default, ``o.__dict__["b"]``
with ``KeyError``, ``list(o.__dict__)`` with the old keys) for an input that has it: a silently wrong result, measured
on 2.13.0 and 2.15.0 for plain objects and mappings.

The fix is what ``ConstDictVariable`` does, on the source of the real
dictionary: for an object passed in (the tracker has a source), guard the
presence of a constant key (``DICT_CONTAINS``/``DICT_NOT_CONTAINS``, decided on
the input's real ``__dict__``; also where ``o.__dict__[k]`` raises ``KeyError``,
``ConstDictVariable.getitem_const_raise_exception_if_absent``), and guard the key set where Dynamo reads it
(``DICT_KEYS_MATCH``). Objects made in the frame (no source) stay unguarded,
as upstream intends. The guards are on the input state at frame entry, so
mutations in the frame do not affect them.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "dunder-dict-guards"


def _real_dict(instance):
    item = getattr(getattr(instance, "items", None), "item", None)  # SideEffectsProxyDict.item
    value = getattr(item, "value", None)
    real = getattr(value, "__dict__", None)
    return real if isinstance(real, dict) else None


def _guard_key(instance, key_vt) -> bool:
    """Guard that a constant str key's presence in the input's real ``__dict__`` stays as it is
    now; False (nothing done) for an object made in the frame or any other key."""
    if instance.source is None or not key_vt.is_python_constant():
        return False
    key = key_vt.as_python_constant()
    real = _real_dict(instance)
    if not isinstance(key, str) or real is None:
        return False
    from ..dynamo_api import guard_dict_contains

    guard_dict_contains(instance.source, key, key in real)
    return True


@fail_safe(NAME)
def _contains_guard(wrapped, instance, args, kwargs):
    """``DunderDictVariable.install_dict_contains_guard(tx, args)``."""
    if kwargs or len(args) != 2 or not args[1] or not _guard_key(instance, args[1][0]):
        return DEFER
    return None


@fail_safe(NAME)
def _getitem_guard(wrapped, instance, args, kwargs):
    """``DunderDictVariable.getitem_const_raise_exception_if_absent(tx, arg)`` (``o.__dict__[k]``):
    a missing key raises ``KeyError`` in the trace, and nothing guards that it is still missing."""
    if kwargs or len(args) != 2 or not _guard_key(instance, args[1]):
        return DEFER
    return wrapped(*args)


@fail_safe(NAME)
def _keys_match_guard(wrapped, instance, args, kwargs):
    """``DunderDictVariable.install_dict_keys_match_guard()``."""
    if instance.source is None or args or kwargs or _real_dict(instance) is None:
        return DEFER
    from torch._dynamo.guards import GuardBuilder, install_guard

    install_guard(instance.make_guard(GuardBuilder.DICT_KEYS_MATCH))
    return None


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`k in o.__dict__`, `o.__dict__.get(k)`, `setdefault`, iterating `o.__dict__` **reuse the '
             "first call's answer** when a later input has other instance keys",
         '2.12–2.15',
         '(`>=2.12`)'),
    ),
    fixes="`k in obj.__dict__`, `obj.__dict__.get(k)` and iterating `obj.__dict__` reuse code compiled for an "
    "input with other instance keys (silently wrong, torch 2.12+)",
    upstream="torch/_dynamo/variables/dicts.py: DunderDictVariable.install_dict_contains_guard, "
    "install_dict_keys_match_guard",
    mirrors="open upstream (see docs/upstream/dunder-dict-guards/); DunderDictVariable from pytorch/pytorch#174570",
    torch=">=2.12",
    targets=(
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "install_dict_contains_guard", _contains_guard,
               params=("tx", "args")),
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "install_dict_keys_match_guard",
               _keys_match_guard),
        Target("torch._dynamo.variables.dicts", "DunderDictVariable", "getitem_const_raise_exception_if_absent",
               _getitem_guard, inherited=True, params=("tx", "arg")),
    ),
    requires=(
        "torch._dynamo.guards:GuardBuilder.DICT_KEYS_MATCH",
        "torch._dynamo.guards:GuardBuilder.DICT_CONTAINS",
        "torch._dynamo.guards:install_guard",
    ),
    summary="guards on the keys of an input object's __dict__ (2.12+ DunderDictVariable has none)",
    history=(
        ("2.5-2.11",
         "not this gap: `obj.__dict__` is not a `DunderDictVariable` before 2.12 (the unguarded `k in "
         "o.__dict__` there is `instance-dict-writes`')"),
        ("2.12+",
         "`DunderDictVariable` (pytorch/pytorch#174570, #174941) makes `install_dict_contains_guard` and "
         "`install_dict_keys_match_guard` no-ops: for an input, `k in o.__dict__`, `o.__dict__.get(k)`, "
         "`o.__dict__[k]` (`KeyError`), `setdefault` and iterating `o.__dict__` reuse the first call's answer "
         "when a later input has other instance keys (silently wrong; measured on 2.13.0 and 2.15.0, plain "
         "objects and mappings). Open upstream"),
    ),
)
