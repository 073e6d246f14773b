"""Values whose hash and ``==`` are pure functions of their value: what a patch may compute with at trace time.

A patch that folds ``hash(v)`` or runs CPython's own set algebra on constants at trace time is sound only when
the result depends on nothing but the values Dynamo already guards: no identity (``object.__hash__``, a NaN
float since Python 3.10), no user ``__hash__``/``__eq__`` (a subclass of a builtin may define either). Likewise a
truth test (``bool(v)``) folded at trace time, and text (``format(v, spec)``). Shared by
``hash-constant-fold``, ``set-view-operator``, ``ordered-dict-move-to-end``, ``iterator-consumption``
(``x in it``), ``builtin-format`` and ``string-format-deferred``. Imports nothing.
"""

from __future__ import annotations

#: Exact types whose hash and ``==`` are pure functions of the value. ``float`` is handled apart (a NaN hashes
#: by identity since Python 3.10 and is not equal to itself).
_BY_VALUE = frozenset({str, bytes, int, bool, type(None)})


def hashes_by_value(value) -> bool:
    """Is ``hash(value)`` (and ``==`` against any other such value) a pure function of ``value``'s value?

    Exact types only: a subclass (an ``IntEnum`` member, a named tuple, a ``str`` subclass) may define
    ``__hash__`` or ``__eq__``. Tuples and frozensets of such values count. Iterative, so no recursion limit is
    met."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _BY_VALUE:
            continue
        if kind is float:
            if item != item:  # NaN: hash(nan) is object.__hash__ (identity) on Python >= 3.10
                return False
            continue
        if kind is tuple or kind is frozenset:
            stack.extend(item)
            continue
        return False
    return True


#: Exact types whose ``format(value, spec)`` (CPython's own ``__format__`` of each) reads nothing but the value:
#: formatted while tracing, or after the graph, it is the same text.
TEXT_BY_VALUE = frozenset({str, int, bool, float, complex, bytes, type(None)})


#: Exact types whose truth is a pure function of the value (``nb_bool``/``mp_length``/``sq_length`` of the
#: builtin, no user ``__bool__``/``__len__``): for a container, whether it is empty.
_TRUTH_BY_VALUE = frozenset({bool, int, float, complex, str, bytes, type(None), tuple, list, dict, set, frozenset})


def truth_of(value):
    """``bool(value)`` where CPython's answer runs no user code (an exact builtin type), else None."""
    if type(value) not in _TRUTH_BY_VALUE:
        return None
    return bool(value)
