"""Dict lookups whose outcome is a caught ``KeyError`` (dict-missing-key-guard; issue 11).

From 2.7 Dynamo guards a dict passed in key by key, and ``d[k]`` installs no guard
for a key it found missing, nor for a present key whose value is never used: code
compiled for one answer of ``try: d[k] / except KeyError`` is reused for the other.
``Mapping.__contains__`` and ``Mapping.get`` are built on exactly that, so ``k in m``
on a user ``MutableMapping`` backed by a dict is wrong the same way (fuzzer seeds
2000610, 2001251, 2003420 on 2.13.0). Measured wrong on 2.7.1 to 2.15.0; 2.5.1 and
2.6.0 guard the whole key set.
"""

from __future__ import annotations

import torch

from .harness import WRONG_RESULT, Case, CaseList, Expect
from .mappings import StoreMapping

PATCH = ("dict-missing-key-guard",)
_WRONG = (Expect(">=2.7", WRONG_RESULT),)


class Store(StoreMapping):
    """A plain user mapping backed by a dict: its ``in``/``get`` are ``Mapping``'s."""

    def __init__(self, **items):
        self._store = dict(items)


def lookup_in_try(d, x):
    try:
        d["h"]  # the value is not used: only whether it is there
        return x + 1, True
    except KeyError:
        return x - 1, False


def contains(m, x):
    return "h" in m, x * 2


def get_default(m, x):
    return m.get("h", -1), x * 2


def _dict_without():
    return {"k0": 1}, torch.randn(3)


def _dict_with():
    return {"k0": 1, "h": 2}, torch.randn(3)


def _store_without():
    return Store(k0=torch.ones(3)), torch.randn(3)


def _add_h(args):
    """The second call's mapping has ``h``."""
    target = args[0] if isinstance(args[0], dict) else args[0]._store
    target["h"] = torch.full((3,), 7.0)


def _drop_h(args):
    """The second call's dict lacks ``h``."""
    del args[0]["h"]


CASES = CaseList()
CASES.add(
    Case("dict_missing_key_in_try", PATCH, lookup_in_try, _dict_without, vary=_add_h, unpatched=_WRONG,
         doc="`try: d['h'] / except KeyError` compiled for a dict without h, called with one that has it"),
    Case("dict_present_key_in_try", PATCH, lookup_in_try, _dict_with, vary=_drop_h, unpatched=_WRONG,
         doc="the same compiled for a dict with h (its value unused), called with one without"),
    Case("mapping_contains_missing_key", PATCH, contains, _store_without, vary=_add_h, unpatched=_WRONG,
         doc="`'h' in m` on a user MutableMapping (Mapping.__contains__ catches the KeyError of self._store[k])"),
    Case("mapping_get_missing_key", PATCH, get_default, _store_without, vary=_add_h, unpatched=_WRONG,
         doc="`m.get('h', -1)` on the same mapping (Mapping.get)"),
)
