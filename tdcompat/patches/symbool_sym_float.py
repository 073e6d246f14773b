"""A tensor times a symbolic bool crashes the trace (torch 2.5-2.9).

Symptom: ``x * (o.a == 3)`` or ``x + (n < k)`` where ``o.a``/``n`` is an int Dynamo made dynamic
(on the second call with another value): ``TorchRuntimeError: ... float() argument must be a
string or a real number, not 'SymBool'``, under ``fullgraph=True`` and ``False`` alike; eager runs.
Found by the differential fuzzer (``x * (hash(v) == hash(v))`` on 2.6.0 and 2.8.0, and once
``sequence-compare-identity`` let ``x * ((x, n) == (x, n + 1))`` trace).

Root cause: type promotion for ``aten.mul``/``aten.add`` casts the scalar with
``torch.sym_float``, which uses ``__sym_float__`` where a symbolic type has one and falls back to
``float()``. ``SymBool`` had none until pytorch/pytorch#165264 (2.10) added
``SymBool.__sym_float__`` (``wrap_node(self.node.sym_float())``), fixing pytorch/pytorch#164684.

The patch adds exactly that method on 2.5-2.9. It accepts every ``SymBool``: ``sym_float`` of a
bool is 0.0 or 1.0, the symbolic node's own ``sym_float`` (the method ``SymInt`` uses) says so, and
the result is the value CPython's ``float(True)``/``float(False)`` gives at run time.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import fail_safe

NAME = "symbool-sym-float"


@fail_safe(NAME)
def _sym_float(wrapped, instance, args, kwargs):
    """``SymBool.__sym_float__()`` (added)."""
    from torch.fx.experimental.sym_node import wrap_node

    return wrap_node(instance.node.sym_float())


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`x * (o.a == 2)` once `o.a` is a dynamic int (the second call with another value): '
             '`TorchRuntimeError` (`float()` of a `SymBool`), under `fullgraph=False` too',
         '2.5–2.9',
         '(`<2.10`)'),
    ),
    fixes="TorchRuntimeError: float() argument must be a string or a real number, not 'SymBool' "
    "(`x * (n == m)` with a dynamic int; torch <2.10)",
    upstream="torch/__init__.py: SymBool (no __sym_float__ before 2.10)",
    mirrors="pytorch/pytorch#165264 (SymBool.__sym_float__), fixing pytorch/pytorch#164684",
    torch="<2.10",
    fixed_upstream="2.10: pytorch/pytorch#165264",
    targets=(
        Target("torch", "SymBool", "__sym_float__", _sym_float, added=True),
    ),
    requires=("torch.fx.experimental.sym_node:wrap_node",),
    summary="a symbolic bool casts to a symbolic float (0.0/1.0) in tensor arithmetic, as 2.10 does",
    history=(
        ("2.5-2.9", "`torch.sym_float(SymBool)` falls back to `float()`: `x * (n == m)` with a dynamic int "
         "raises TorchRuntimeError"),
        ("2.10+", "right (`SymBool.__sym_float__`, pytorch/pytorch#165264)"),
    ),
)
