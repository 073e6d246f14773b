"""A frozenset built in the frame crashes the code after a graph break (torch 2.5-2.8).

Symptom: ``fs = frozenset({1, 2})`` (or ``frozenset({o.a, -0.0})``, a tuple holding a
frozenset), then anything Dynamo cannot trace (``copy.deepcopy(fs)``, ``hash(fs)`` of a
mapping, a ``print``), under ``fullgraph=False``: ``TypeError: 'int' object is not callable``
out of compiled code (or ``hash() takes exactly one argument``). Eager runs fine. Found by
the differential fuzzer's hash and deepcopy families on 2.6.0 and 2.7.1 (native, and reached
more often once ``deepcopy-constant``/``hash-constant-fold`` let such frames trace further).

Root cause: ``FrozensetVariable.reconstruct`` (torch/_dynamo/variables/dicts.py) pushes the
items, then ``NULL, frozenset``, then calls with no arguments: the call lands on the last item.
2.11 rewrote it as ``frozenset([items])`` (NULL and ``frozenset`` first, the items in a list,
one argument). Measured: ``TypeError`` on 2.5.1, 2.6.0, 2.7.1, 2.8.0; right on 2.9.1 and later
(2.9-2.10 still carry the broken method but no longer reach it for these frames).

The handler emits exactly 2.11's bytecode for an exact ``FrozensetVariable``: the frozenset
built again from its items, in the order Dynamo holds them, which is what the broken code
meant (the items are reconstructed by Dynamo's own ``codegen``). Subclasses of
``FrozensetVariable`` defer.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "frozenset-reconstruct"


@fail_safe(NAME)
def _reconstruct(wrapped, instance, args, kwargs):
    """``FrozensetVariable.reconstruct(codegen)``."""
    if len(args) != 1 or kwargs:
        return DEFER
    from torch._dynamo.bytecode_transformation import create_call_function, create_instruction
    from torch._dynamo.variables.dicts import FrozensetVariable

    if type(instance) is not FrozensetVariable:
        return DEFER
    codegen = args[0]
    items = [item.vt for item in instance.set_items]
    codegen.add_push_null(lambda: codegen.extend_output([codegen.create_load_global("frozenset", add=True)]))
    codegen.foreach(items)
    codegen.extend_output([create_instruction("BUILD_LIST", arg=len(items)), *create_call_function(1, False)])
    return None


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`fs = frozenset({o.a, 2})` built in the frame and **returned comes back empty**; held '
             "across a graph break, `TypeError: 'int' object is not callable` out of compiled code (the "
             'rebuilt `frozenset()` is called on top of its items)',
         '2.5–2.8',
         '(`<2.9`)'),
    ),
    fixes="TypeError: 'int' object is not callable out of compiled code after a graph break in a frame that "
    "built a frozenset (torch <2.9, fullgraph=False)",
    upstream="torch/_dynamo/variables/dicts.py: FrozensetVariable.reconstruct (calls frozenset() with the items "
    "under it)",
    mirrors="torch 2.11's FrozensetVariable.reconstruct (frozenset([items]))",
    torch="<2.9",
    fixed_upstream="2.9: not reached for frozensets built in the frame (2.11: reconstruct builds frozenset(list))",
    targets=(
        Target("torch._dynamo.variables.dicts", "FrozensetVariable", "reconstruct", _reconstruct,
               params=("codegen",)),
    ),
    requires=("torch._dynamo.bytecode_transformation:create_call_function",
              "torch._dynamo.bytecode_transformation:create_instruction"),
    summary="a frozenset built in the frame is rebuilt as frozenset([items]) at a graph break, as 2.11 does",
    history=(
        ("2.5-2.8",
         "`FrozensetVariable.reconstruct` calls `frozenset()` with no argument on top of the items: "
         "`TypeError: 'int' object is not callable` out of compiled code after a graph break"),
        ("2.9+", "right (2.11 rewrote the method as `frozenset([items])`)"),
    ),
)
