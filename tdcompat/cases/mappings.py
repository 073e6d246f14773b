"""The dict-backed MutableMapping the pure-Python cases build on.

Cases subclass it (alone, or with ``nn.Module`` first) so that every repro uses
the same, minimal mapping: only the five abstract methods, over ``self._store``;
``keys()``, ``items()``, ``values()``, ``__contains__`` are Mapping's own.
"""

from __future__ import annotations

from collections.abc import MutableMapping


class StoreMapping(MutableMapping):
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
