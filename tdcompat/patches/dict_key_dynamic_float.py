"""A float input used as a dict key or set member crashes the compile once it turns dynamic (torch 2.7-2.9).

Symptom: ``d = {o.f: x}`` (or ``o.f in s``, ``{o.f, 2.0}``, ``d[o.f]``) where ``o.f`` is a
``float`` read from an input compiles on the first call; on the next call with another value,
Dynamo's automatic dynamic shapes make the float symbolic and the compile dies with
``InternalTorchDynamoError: AsPythonConstantNotImplementedError: SymNodeVariable() is not a
constant``, also without ``fullgraph`` (the user's program stops). Found by the differential
fuzzer (2.9.1, program 1473188783553891; tdcompat's ``dict-key-numeric-eq`` let the frame trace
as far as the key); measured on every release: it crashes 2.7.1, 2.8.0 and 2.9.1.

Root cause: ``ConstDictVariable._HashableTracker.__init__`` (torch/_dynamo/variables/dicts.py)
specializes a key that is a symbolic number (``specialize_symnode``), but for a key that is a
``LazyVariableTracker`` not realized yet it predicts "will be symbolic" only for an ``int``
(``specialize_int``). With ``specialize_float=False`` (the default from 2.6) a lazy ``float``
is left as it is, ``is_hashable`` then realizes it as a ``SymNodeVariable`` and the tracker
keeps it unspecialized; ``underlying_value`` later calls ``as_python_constant()`` on it. 2.5
specializes floats; 2.6 does not make a float attribute symbolic there (measured right); 2.10
(pytorch/pytorch#169204) hashes keys through ``VariableTracker.get_python_hash`` instead.

What the handler accepts: ``_HashableTracker.__init__(vt)`` where ``vt`` is a
``LazyVariableTracker`` not realized yet whose value is an exact ``float``. It realizes ``vt``
first, so Dynamo's own ``specialize_symnode`` in the original ``__init__`` meets the realized
tracker and, if it is symbolic, turns it into a constant under a guard on its value (the
specialization Dynamo already does for ``int`` keys). Why that is sound: realizing is what
``is_hashable`` does a line later anyway (the same tracker and the same guards, only earlier),
and a specialized key is the float's own value, guarded, so the key hashes and compares as
CPython's ``float`` does for every input the guards admit. Cost: a float key recompiles for
each new value, as every specialized float does on 2.5.

Deferred (the original ``__init__`` unchanged): every other key, a lazy tracker already realized
(``specialize_symnode`` sees through it), float subclasses.
"""

from __future__ import annotations

from ..dynamo_api import key_tracker_gate, peek
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, routed_gate

NAME = "dict-key-dynamic-float"


@fail_safe(NAME)
def _hashable_init(wrapped, instance, args, kwargs):
    """``_HashableTracker.__init__(vt)``: a lazy ``float`` key is realized before Dynamo specializes it."""
    if len(args) != 1 or kwargs:
        return DEFER
    tracker, value = peek(args[0])
    if tracker is not None or type(value) is not float:
        return DEFER
    args[0].realize()
    return wrapped(*args)


#: On ``_HashableTracker.__init__`` (every dict key Dynamo builds): only lazy keys reach the handler,
#: through the gate it shares with the other key patches.
_hashable_init_gate = routed_gate(_hashable_init, key_tracker_gate, ())


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`InternalTorchDynamoError: AsPythonConstantNotImplementedError: SymNodeVariable() is not a '
             'constant` on the **second call** of a function that uses a float input (`o.f`, an '
             'argument) as a dict key or set member (`{o.f: x}`, `o.f in {o.f, 2.5}`): the compile '
             'crashes, also without `fullgraph`',
         '2.7–2.9',
         '(`>=2.7,<2.10`)'),
    ),
    fixes="`{o.f: x}`, `o.f in s` with a float input: `InternalTorchDynamoError: AsPythonConstantNotImplementedError: "
    "SymNodeVariable() is not a constant` on the second call (torch 2.7-2.9), also without fullgraph",
    upstream="torch/_dynamo/variables/dicts.py: ConstDictVariable._HashableTracker.__init__ "
    "(`specialize_symnode` predicts a symbolic lazy key only for int)",
    mirrors="torch/_dynamo/utils.py: specialize_symnode (the int case), extended to float under specialize_float=False",
    torch=">=2.7,<2.10",
    fixed_upstream="2.10: pytorch/pytorch#169204",
    targets=(
        Target("torch._dynamo.variables.dicts", "ConstDictVariable._HashableTracker", "__init__",
               _hashable_init_gate, params=("vt",)),
    ),
    summary="a float input used as a dict key or set member is specialized (guarded) instead of crashing the "
            "compile once automatic dynamic shapes make it symbolic",
    history=(
        ("2.5-2.6", "right: a float input as a key stays a constant"),
        ("2.7-2.9", "a lazy float key realizes as a symbolic number after `specialize_symnode` looked: the compile "
         "crashes with AsPythonConstantNotImplementedError"),
        ("2.10+", "right"),
    ),
)
