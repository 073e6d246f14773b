"""An instance-dict deletion replays as the compiling input had it (torch 2.13 on).

Root cause: torch 2.13 records ``del obj.__dict__[k]`` and ``obj.__dict__.pop(k, d)``
as an instance-dict mutation (``SideEffects.store_instance_dict_attr`` with a
``DeletedVariable``, torch/_dynamo/side_effects.py), and
``SideEffects.codegen_update_mutated`` replays it only ``if name in
original_dict``: the instance dictionary of the object Dynamo compiled for, read
at compile time under no guard. After ``o.b = v; o.__dict__.pop("b", d)`` the
code compiled for an input without ``b`` deletes nothing, and reused for an input
that has ``b`` leaves it there (eager removed it); compiled for an input with
``b``, reused for one without, the replay raises ``KeyError`` out of compiled code
(fuzzer seeds 2000964, 2002953 on 2.13.0; measured on 2.13.0, 2.14.0, 2.15.0).
Before 2.13 deletions are attribute deletions, which ``delattr-missing`` and
``dunder-dict-replay`` guard.

The fix guards what the replay decides on, where the deletion is recorded: for
an input object, ``k`` stays present (or absent) in its ``__dict__``
(``DICT_CONTAINS``/``DICT_NOT_CONTAINS``). True at trace time, so it can only
cost a recompile.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, effects_begin, fail_safe

NAME = "instance-dict-deletion-guard"


@fail_safe(NAME)
def _store_instance_dict_attr(wrapped, instance, args, kwargs):
    """``SideEffects.store_instance_dict_attr(item, name, value)``."""
    if len(args) != 3 or kwargs:
        return DEFER
    item, name, value = args
    if type(value).__name__ != "DeletedVariable" or getattr(item, "source", None) is None:
        return DEFER
    real = getattr(getattr(item, "value", None), "__dict__", None)
    if not isinstance(real, dict) or not isinstance(name, str):
        return DEFER
    from torch._dynamo.source import AttrSource

    from ..dynamo_api import guard_dict_contains

    effects_begin()
    guard_dict_contains(AttrSource(item.source, "__dict__"), name, name in real)
    return wrapped(*args, **kwargs)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`o.b = v; o.__dict__.pop("b", d)` on an input: `b` **silently survives** on a later input '
             'that had it, or `KeyError` out of compiled code on one without (the replay reads the '
             "compiling input's `__dict__`)",
         '2.13–2.15',
         '(`>=2.13`)'),
    ),
    fixes="`o.b = v; o.__dict__.pop('b', d)` (or `del o.__dict__['b']`) on an input leaves `b` on a later "
    "input that has it, or raises KeyError on one without (silently wrong, torch 2.13+)",
    upstream="torch/_dynamo/side_effects.py: SideEffects.store_instance_dict_attr "
    "(the replay in SideEffects.codegen_update_mutated reads the compiling input's __dict__)",
    mirrors="open upstream",
    torch=">=2.13",
    targets=(
        Target("torch._dynamo.side_effects", "SideEffects", "store_instance_dict_attr", _store_instance_dict_attr,
               params=("item", "name", "value")),
    ),
    requires=("torch._dynamo.source:AttrSource",),
    summary="an instance-dict deletion on an input guards the key's presence it replays on",
    history=(
        ("2.5-2.12",
         "not this gap: deletions through `obj.__dict__` are attribute deletions there (guarded by "
         "`delattr-missing` and, on 2.12, `dunder-dict-replay`)"),
        ("2.13+",
         "`del obj.__dict__[k]` / `obj.__dict__.pop(k, d)` is an instance-dict mutation that "
         "`SideEffects.codegen_update_mutated` replays only if the compiling input had `k`, read under no guard: "
         "after `o.b = v; o.__dict__.pop('b', d)`, `b` survives on a later input that had it, or `KeyError` "
         "leaves compiled code on one without (measured on 2.13-2.15; fuzzer seeds 2000964, 2002953 on 2.13.0). "
         "Open upstream"),
    ),
)
