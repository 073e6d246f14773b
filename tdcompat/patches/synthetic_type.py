"""``type(p)`` of an ``nn.Parameter`` made in the compiled region crashes (torch 2.5-2.8).

Root cause: Dynamo builds a parameter created in the frame
(``torch.nn.Parameter(t)``, ``call_nn_parameter`` in
torch/_dynamo/variables/torch.py) as a graph input produced by bytecode that
runs before the graph (``OutputGraph.synthetic_graph_input``), with a
``SyntheticLocalSource`` and its own guards removed. ``BuiltinVariable.call_type``
(variables/builtin.py) then wraps ``type(p)`` with ``TypeSource`` of that
source, which installs a ``FUNCTION_MATCH`` guard on
``type(SYNTHETIC_LOCAL['tmp_0'])``: a name that does not exist when guards are
built. The compile fails with ``InternalTorchDynamoError: NameError:
SYNTHETIC_LOCAL`` under ``fullgraph=False`` too (no fallback to eager).
Measured on 2.5.1, 2.6.0, 2.7.1, 2.8.0; from 2.9 the constructor is a graph
break. tensordict's ``TensorDictParams(...)`` built in the region takes this
path once its ``__dict__`` writes trace (tdcompat's instance-dict patches).

The fix: for an object whose source is a synthetic local, ``type(obj)`` is
built from a global holding that type (``install_global_by_id``, as 2.6 does
for ``torch.Tensor``), so it is the same tracker ``torch.nn.Parameter`` read
from the module would be, and ``type(p) is torch.nn.Parameter`` holds. The
object is made anew by the frame's own prologue on every call, so its type is
not an input that could change.
"""

from __future__ import annotations

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "synthetic-type"


@fail_safe(NAME)
def _call_type(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_type(tx, obj)``."""
    if len(args) != 2 or kwargs:
        return DEFER
    tx, obj = args
    from torch._dynamo.source import SyntheticLocalSource

    if not isinstance(getattr(obj, "source", None), SyntheticLocalSource):
        return DEFER
    from torch._dynamo.source import GlobalSource
    from torch._dynamo.variables.builder import VariableBuilder

    py_type = obj.python_type()
    return VariableBuilder(tx, GlobalSource(tx.output.install_global_by_id("", py_type)))(py_type)


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`InternalTorchDynamoError: NameError: name 'SYNTHETIC_LOCAL' is not defined` (`type()` of "
             'an `nn.Parameter` made in the region, e.g. `TensorDictParams(TensorDict(...))` built in '
             'the compiled function; no fallback under `fullgraph=False`)',
         '2.5–2.8',
         '(`<2.9`)'),
    ),
    fixes="InternalTorchDynamoError: NameError: name 'SYNTHETIC_LOCAL' is not defined "
    "(type() of an nn.Parameter made in the compiled region, e.g. TensorDictParams(...))",
    upstream="torch/_dynamo/variables/builtin.py: BuiltinVariable.call_type",
    mirrors="open upstream on 2.5-2.8 (2.9 makes nn.Parameter() in the region a graph break)",
    torch="<2.9",
    fixed_upstream="2.9: nn.Parameter() constructed in the region is a graph break (no synthetic local)",
    targets=(
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_type", _call_type, params=("tx", "obj")),
    ),
    requires=(
        "torch._dynamo.source:SyntheticLocalSource",
        "torch._dynamo.variables.builder:VariableBuilder",
        "torch._dynamo.output_graph:OutputGraph.install_global_by_id",
    ),
    summary="type() of a parameter made in the region is built without the synthetic source",
    history=(
        ("2.5-2.8",
         "`type(p)` of an `nn.Parameter` made in the region guards `type(SYNTHETIC_LOCAL['tmp_0'])`: "
         "`InternalTorchDynamoError: NameError: name 'SYNTHETIC_LOCAL' is not defined`, under `fullgraph=False` "
         "too (no fallback to eager), e.g. `TensorDictParams(...)` built in the region (measured on 2.5.1, "
         "2.6.0, 2.7.1, 2.8.0)"),
        ("2.9+",
         "the pattern does not arise: `nn.Parameter()` constructed in the region is a graph break (no synthetic "
         "local)"),
    ),
)
