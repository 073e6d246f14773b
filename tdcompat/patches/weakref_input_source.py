"""A weak reference passed in comes back as its referent (torch 2.8 on).

Root cause: ``WeakRefVariable.build`` (torch/_dynamo/variables/misc.py), called by
``VariableBuilder.wrap_weakref`` (variables/builder.py) for a ``weakref.ref`` the
frame reads from an input, a global or an attribute, builds the referent under
``WeakRefCallSource(source)`` (``source()``) and then gives the weak-reference
tracker *that same source*. Whenever Dynamo writes the weak reference back, it
rebuilds it from its source, i.e. calls it: ``return [r]``, ``out.append(...)`` on a
list passed in that holds weak references, a graph break with one on the stack, all
hand back the referent instead of the ``weakref``: silently wrong (fuzzer seed
3000461 on 2.10.0, through a list made before a graph break). Measured wrong on
2.8.0, 2.9.1, 2.10.0, 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0; 2.5.1-2.7.1 wrap the
weak reference with its own source.

The fix gives the tracker back the weak reference's own source (the referent keeps
``WeakRefCallSource``), so it is rebuilt as the very object the frame read, as eager
returns it. Only ``WeakRefVariable.build`` is wrapped: it runs for weak references alone.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import fail_safe

NAME = "weakref-input-source"


@fail_safe(NAME)
def _build(wrapped, instance, args, kwargs):
    """``WeakRefVariable.build(tx, weakref_value, source)`` (a staticmethod, so looked up at
    each call; ``VariableBuilder.wrap_weakref``, its caller, is cached in Dynamo's type-dispatch
    table and could not be unwrapped again): Dynamo's tracker, with the weak reference's own
    source where Dynamo gave it the referent's."""
    result = wrapped(*args, **kwargs)
    own = kwargs["source"] if "source" in kwargs else (args[2] if len(args) > 2 else None)
    given = getattr(result, "source", None)
    if own is not None and type(given).__name__ == "WeakRefCallSource" and getattr(given, "base", None) == own:
        result.source = own
    return result


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('a `weakref.ref` read from an input (`return h.ref`, a list of weak references written '
             'back, one live across a graph break) **comes back as its referent**, not the weak '
             'reference',
         '2.8–2.15',
         '(`>=2.8`)'),
    ),
    fixes="a `weakref.ref` read from an input (or a list of them) is returned, stored or kept across a "
    "graph break as its referent, not the weak reference (silently wrong, torch 2.8+)",
    upstream="torch/_dynamo/variables/misc.py: WeakRefVariable.build (options['source'] is the referent's "
    "WeakRefCallSource; called by variables/builder.py: VariableBuilder.wrap_weakref)",
    mirrors="open upstream",
    torch=">=2.8",
    targets=(
        Target("torch._dynamo.variables.misc", "WeakRefVariable", "build", _build,
               params=("tx", "weakref_value", "source")),
    ),
    requires=("torch._dynamo.source:WeakRefCallSource",),
    summary="a weak reference read from an input keeps its own source, so it is rebuilt as itself",
    history=(
        ("2.5-2.7",
         "fine: a weak reference read from an input is wrapped with its own source (measured on 2.5.1-2.7.1)"),
        ("2.8+",
         "`WeakRefVariable.build` gives the weak reference its referent's source (`WeakRefCallSource`): "
         "returned, stored in a list passed in, or on the stack at a graph break, it comes back as its referent "
         "(silently wrong; measured on 2.8.0-2.15.0, found by the fuzzer on 2.10.0, seed 3000461). Open upstream"),
    ),
)
