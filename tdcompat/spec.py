"""What a patch is, as data.

A patch is declared, not coded: the registry, the doctor, the docs generator and
the tests all read the same declaration, so the version range a patch claims and
the range its tests prove can never drift apart silently.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Tuple

#: ``wrapper(wrapped, instance, args, kwargs)`` as in wrapt; it must call
#: ``wrapped(*args, **kwargs)`` for every situation it was not written for.
Wrapper = Callable[[Callable[..., Any], Any, tuple, dict], Any]


@dataclasses.dataclass(frozen=True)
class Target:
    """One method on one Dynamo class that a patch wraps.

    ``module`` and ``owner`` locate the class (``owner`` may be dotted for a
    nested class); ``attribute`` is the method. ``inherited`` allows wrapping a
    method the class only inherits: the wrapper is then installed on the class
    itself and revert deletes it again, so the class ``__dict__`` is restored
    exactly. ``params`` are parameter names the wrapped method must accept, so a
    changed signature makes the patch inapplicable instead of wrong. An
    ``optional`` target that this torch does not have is left out (the method
    was renamed between releases: list each name as an optional target); a
    patch needs at least one target installed. An ``added`` target is a method this
    torch's class lacks and a later release added (the upstream fix *is* that method,
    e.g. ``BuiltinVariable.call_vars`` in 2.9): the handler is installed as a new class
    attribute around a stub that returns ``None`` (what Dynamo reads as "no handler"
    for a ``call_<builtin>``), revert deletes it, and a class that already has the
    method makes the patch not applicable. ``when`` (called once at install, with
    Dynamo imported) says whether the Dynamo code path the handler serves exists on
    this torch: where it returns False the handler could only defer, so it is left
    out and that method is not wrapped for it (the first line of its docstring is what
    the docs say); a ``when`` that raises counts as True (the handler then defers by
    itself).
    """

    module: str
    owner: str
    attribute: str
    wrapper: Wrapper
    inherited: bool = False
    params: Tuple[str, ...] = ()
    optional: bool = False
    added: bool = False
    when: Optional[Callable[[], bool]] = None

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.owner}.{self.attribute}"


@dataclasses.dataclass(frozen=True)
class Patch:
    """A registry entry: one upstream-sized fix for one Dynamo gap."""

    #: Stable name, used in ``TDCOMPAT_DISABLE`` and ``status()``.
    name: str
    #: The failure users see without the patch (the text they would search for).
    fixes: str
    #: Upstream file, class and method the patch changes.
    upstream: str
    #: The upstream issue or PR the patch mirrors.
    mirrors: str
    #: ``packaging`` specifier of the torch releases that need the patch.
    torch: str
    #: The methods wrapped.
    targets: Tuple[Target, ...]
    #: Further internals the wrappers use: ``"module:attr.attr"`` strings.
    requires: Tuple[str, ...] = ()
    #: For a gap fixed upstream: the first torch release with the fix and the
    #: change that made it (``"2.9: pytorch/pytorch#159366"``); the upper bound of
    #: ``torch`` is that release. Empty for a gap still open (docs/upstream/<name>/).
    fixed_upstream: str = ""
    #: Patches this one relies on, wherever their own range says this torch needs
    #: them: without them its fix would be silently wrong, not merely incomplete.
    #: The registry applies them first and leaves this patch off when one of them
    #: is disabled, not applicable or failed (``status()`` says which).
    needs: Tuple[str, ...] = ()
    #: For a pre-release at the edge of ``torch`` (see ``versions.py``): returns
    #: True when the installed Dynamo still has the gap.
    probe: Optional[Callable[[], bool]] = None
    #: One-line summary for tables.
    summary: str = ""
    #: What Dynamo does on each release range, oldest first: ``(releases, behaviour)``
    #: pairs such as ``("2.5-2.6", "every write breaks: ...")``; the one place a
    #: patch's version history is written (docs/compatibility.md renders it).
    history: Tuple[Tuple[str, str], ...] = ()
    #: README's "What it fixes" rows (``scripts/gen_readme.py`` renders them): ``(what users see, the
    #: releases where they see it, a note after the patch's name)``. Empty: one row from ``fixes``.
    symptoms: Tuple[Tuple[str, str, str], ...] = ()
    #: For a patch that only turns a silently wrong result into a graph break (nothing it touches
    #: can compile right): the never-worse test that proves it, ``"tests/<file>.py::<test>"``, which
    #: asserts the wrong result without the patch. A catalog case must compile under
    #: ``fullgraph=True``, so such a patch has none.
    proven_by: str = ""
