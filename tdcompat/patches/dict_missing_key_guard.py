"""A missing dict key caught as ``KeyError`` is not guarded (torch 2.7 on).

Root cause: ``ConstDictVariable.getitem_const_raise_exception_if_absent``
(torch/_dynamo/variables/dicts.py) raises ``KeyError`` inside the trace for a
key the dictionary does not have, and installs no guard that says so. Since
2.7 a dictionary passed in is guarded key by key (``install_dict_contains_guard``,
lazily, instead of ``DICT_KEYS`` on the whole dict), and every other lookup
(``in``, ``get``, ``pop``) calls that guard; ``d[k]`` on a missing key does not.
Code compiled for a dict without ``k`` then runs the ``except KeyError:``
branch for a later dict that has it: ``try: d[k] / except KeyError`` is silently
wrong, and so is every ``Mapping`` method built on it (``Mapping.__contains__``,
``Mapping.get``), so ``k in m`` on a user ``MutableMapping`` backed by a dict
answers from the first call (fuzzer seeds 2000610, 2001251, 2003420 on 2.13.0).
Measured wrong on 2.7.1, 2.8.0, 2.9.1, 2.11.0, 2.12.1, 2.13.0, 2.14.0, 2.15.0;
2.5.1 and 2.6.0 guard the whole key set.

The fix is the call upstream makes on its other lookup paths: before the
``KeyError`` leaves, ``install_dict_contains_guard(tx, [key])`` (a
``DICT_CONTAINS`` guard with the key absent, or ``DICT_KEYS_MATCH`` for a key
that is not a constant; nothing for a dict made or changed in the frame, which
upstream's method already knows). True at trace time, so it can only cost a
recompile.
"""

from __future__ import annotations

from ..dynamo_api import LAZY_MODULE, inside_try, realize
from ..spec import Patch, Target
from ..wrappers import fail_safe, gate, replay, replay_error

NAME = "dict-missing-key-guard"


@fail_safe(NAME)
def _lazy_in_try(wrapped, instance, args, kwargs):
    """The other half of the guard: ``try: d[k]`` of a present key whose value is never used
    leaves a lazy tracker, so no guard says ``k`` is there, and the code compiled for a dict
    with ``k`` skips the ``except KeyError:`` branch for one without. Realizing the value
    guards it (under ``DictGetItemSource``, which a dict without ``k`` fails)."""
    result = wrapped(*args, **kwargs)
    return realize(result)


@fail_safe(NAME)
def _getitem_raised(wrapped, instance, args, kwargs):
    """``ConstDictVariable.getitem_const_raise_exception_if_absent(tx, arg)`` raised."""
    from torch._dynamo.exc import ObservedKeyError

    try:
        return wrapped(*args, **kwargs)
    except ObservedKeyError:
        if len(args) == 2 and not kwargs:
            tx, key = args
            instance.install_dict_contains_guard(tx, [key])
        raise


@gate(_getitem_raised)
def _getitem_gate(original, handle):
    """What is installed: Dynamo's method runs here, once; an exception goes to
    :func:`_getitem_raised`, a lazy value read inside a ``try`` to :func:`_lazy_in_try`;
    anything else costs one type test."""

    def getitem_const_raise_exception_if_absent(self, tx, arg):
        try:
            result = original(self, tx, arg)
        except Exception as error:  # noqa: BLE001 - the handler says what it is
            return _getitem_raised(replay_error(error), self, (tx, arg), {})
        if type(result).__module__ != LAZY_MODULE or not inside_try(tx):
            return result
        return _lazy_in_try(replay(result), self, (tx, arg), {})

    return getitem_const_raise_exception_if_absent


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`try: d[k] / except KeyError:` on a dict passed in **reuses the first call's answer** when "
             'a later dict has (or lacks) `k`; so do `k in m` and `m.get(k)` on a user `MutableMapping` '
             'backed by a dict (`Mapping.__contains__`/`get` catch that `KeyError`)',
         '2.7–2.15',
         '(`>=2.7`)'),
    ),
    fixes="`try: d[k] / except KeyError` (and `k in m` on a Mapping built on it) reuses code compiled for a "
    "dict without k when a later dict has it (silently wrong, torch 2.7+)",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable.getitem_const_raise_exception_if_absent",
    mirrors="open upstream; the guard its siblings install (ConstDictVariable.install_dict_contains_guard)",
    torch=">=2.7",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "getitem_const_raise_exception_if_absent",
               _getitem_gate, params=("tx", "arg")),
    ),
    requires=(
        "torch._dynamo.exc:ObservedKeyError",
        "torch._dynamo.variables.dicts:ConstDictVariable.install_dict_contains_guard",
    ),
    summary="a dict key found missing in the trace is guarded absent",
    history=(
        ("2.5-2.6", "fine: a dict passed in is guarded on its whole key set"),
        ("2.7+",
         "a dict passed in is guarded key by key, and `d[k]` of a missing key "
         "(`ConstDictVariable.getitem_const_raise_exception_if_absent`) raises `KeyError` under no guard: `try: "
         "d[k] / except KeyError`, and `k in m` / `m.get(k)` on a user `MutableMapping` backed by a dict, reuse "
         "the first call's answer (silently wrong, measured through 2.15.0; fuzzer seeds 2000610, 2001251, "
         "2003420 on 2.13.0). Open upstream"),
    ),
)
