"""A module whose class defines ``__hash__`` cannot go into a set or dict (torch 2.10-2.12).

Root cause: 2.10 made ``UserDefinedObjectVariable.is_python_hashable``
(torch/_dynamo/variables/user_defined.py) call ``utils.raise_on_overridden_hash``, so
any user object whose class defines ``__hash__`` in its own ``__dict__`` is
``Unsupported: User-defined object with overridden __hash__`` as a set element or
dict key (``ConstDictVariable``/``SetVariable``: ``is_hashable``). Module trackers
(``UnspecializedNNModuleVariable``) inherit it; up to 2.9 every module was hashable
(``dicts.is_hashable`` listed the module trackers, hashed with ``hash(module)``).
``nn.Module.named_modules()`` keeps a ``memo`` set of the modules it has walked
(``if self not in memo``), so ``for p in m.parameters()`` fails as soon as a
submodule's class defines ``__hash__``: tensordict 0.14's ``TensorDictParams``
(``hash((id(self), id(self.__dict__.get("_param_td"))))``) in every TorchRL loss,
where 2.10 turns the failure inside the generator into an empty ``SkipFrame`` that
skips TorchRL's ``_default_device`` (23 breaks over the eight losses on 2.10.0).
2.13 hashes through ``object_protocol.generic_hash`` and compiles it.

What the patch accepts: a module tracker whose class's own ``__hash__`` is *provably
identity-derived and pure*. The function's bytecode is read (never run by the check)
and accepted only if it is straight-line code that returns an expression of this
grammar, over its single argument ``self`` and nothing else::

    h := id(self) | id(self.__dict__.get(<str constant>)) | hash(h) | hash((h_or_const, ...))

with ``id``/``hash`` the builtins (not shadowed in the function's globals), no other
name, store, jump, closure or exception handler, on a class whose attribute lookup is
``object.__getattribute__`` with the standard ``__dict__`` descriptor and whose instance
dict is a plain ``dict``. Such a hash has no side effects (CPython runs it on every
``add``/``in``, Dynamo only at trace time: equal for a pure function) and depends only on
the identity of ``self`` and of the objects under the keys it reads.

Why that is sound: Dynamo answers membership by identity (``is_python_equal``) under a
trace-time hash; CPython by hash, then identity, then ``__eq__``. With an identity-derived
hash they agree as long as (1) the hash of each module stays what it was when it was
added: the patch refuses (graph break, Dynamo's own answer) to hash a module while the
frame has a pending write or deletion of a key its ``__hash__`` reads, or has modified
its instance dict, so any lookup after such a mutation breaks (``x in s`` swallows that
``Unsupported`` and falls back to iterating ``s`` with ``is``/``==``: iterating a set or dict
that holds such a changed module breaks too); (2) two distinct modules
never meet with equal hashes: where they do at trace time, ``is_python_equal`` below
graph-breaks (CPython would ask ``__eq__``), and distinct live objects colliding at run
time would need two tuples of distinct ids to hash alike (a residual chance of about
2**-60 per pair that the patch accepts, as every CPython set of such objects does); (3)
the set's iteration order, which in CPython follows the hash values (memory addresses
here, not guarded) and in Dynamo the insertion order: iterating or ``pop()``-ing a set of
two or more elements of which one is an accepted module graph-breaks
(``SetVariable.unpack_var_sequence``/``call_method('pop')``). Dict keys keep insertion
order in both, and membership (all ``named_modules``' memo does) is unaffected. Residual:
``m in s`` for a module ``m`` *not* in ``s`` whose hash inputs the frame changed falls back
to comparing ``m`` with each element by ``==``, where CPython compares none (their hashes
differ); for a class that keeps ``object.__eq__`` (identity) that is the same answer.

Deferred (Dynamo's ``Unsupported: User-defined object with overridden __hash__``):
every other ``__hash__`` (value-based, reading attributes, with side effects, calling
anything else), every non-module object.
"""

from __future__ import annotations

import builtins
import dis
import inspect
import sys
import types

from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "module-overridden-hash"

_NULL = ("null",)
_SKIP = frozenset({"RESUME", "CACHE", "NOP", "PRECALL", "EXTENDED_ARG"})
_CALLS = frozenset({"CALL", "CALL_FUNCTION", "CALL_METHOD"})
_BAD_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # *args, **kw, generator, coroutine, async
_CONST_TYPES = (str, int, type(None))
#: code object -> frozenset of the instance keys its __hash__ reads, or None (not accepted)
_PROOFS: dict = {}


def _identity_hash_keys(code):
    """The instance-dict keys read by a ``__hash__`` whose code is of the accepted grammar
    (module docstring), or None. An abstract interpretation of the bytecode: every
    instruction not listed is a refusal."""
    if (code.co_argcount != 1 or code.co_kwonlyargcount or getattr(code, "co_posonlyargcount", 0)
            or code.co_flags & _BAD_FLAGS or code.co_freevars or code.co_cellvars
            or getattr(code, "co_exceptiontable", b"")):
        return None
    self_name = code.co_varnames[0]
    new_call = sys.version_info >= (3, 11)
    null_after = sys.version_info >= (3, 13)
    method_attr = sys.version_info >= (3, 12)
    stack: list = []
    keys = set()
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in _SKIP:
            continue
        if op == "PUSH_NULL":
            stack.append(_NULL)
        elif op == "LOAD_GLOBAL":
            if ins.argval not in ("id", "hash"):
                return None
            with_null = new_call and bool(ins.arg & 1)
            if with_null and not null_after:
                stack.append(_NULL)
            stack.append(("fn", ins.argval))
            if with_null and null_after:
                stack.append(_NULL)
        elif op == "LOAD_FAST":
            if ins.argval != self_name:
                return None
            stack.append(("self",))
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            if not stack:
                return None
            top = stack.pop()
            method = op == "LOAD_METHOD" or (method_attr and bool(ins.arg & 1))
            if top == ("self",) and ins.argval == "__dict__" and not method:
                stack.append(("dict",))
            elif top == ("dict",) and ins.argval == "get" and method:
                stack.extend((("get",), ("dict",)))
            else:
                return None
        elif op == "LOAD_CONST":
            if type(ins.argval) not in _CONST_TYPES:
                return None
            stack.append(("const", ins.argval))
        elif op == "BUILD_TUPLE":
            n = ins.arg
            if n > len(stack):
                return None
            items = stack[len(stack) - n:]
            del stack[len(stack) - n:]
            if not all(item == ("int",) or item[0] == "const" for item in items):
                return None
            stack.append(("tuple",))
        elif op in _CALLS:
            n = ins.arg
            if n is None or n + (1 if op == "CALL_FUNCTION" else 2) > len(stack):
                return None
            args = stack[len(stack) - n:]
            del stack[len(stack) - n:]
            if op == "CALL_FUNCTION":
                func = stack.pop()
            else:
                upper, lower = stack.pop(), stack.pop()
                if lower == _NULL:
                    func = upper
                elif upper == _NULL:
                    func = lower
                elif lower == ("get",):
                    func, args = lower, [upper] + args
                else:
                    return None
            if func == ("fn", "id") and len(args) == 1 and args[0][0] in ("self", "obj"):
                stack.append(("int",))
            elif func == ("fn", "hash") and len(args) == 1 and args[0] in (("int",), ("tuple",)):
                stack.append(("int",))
            elif (func == ("get",) and len(args) == 2 and args[0] == ("dict",)
                  and args[1][0] == "const" and type(args[1][1]) is str):
                keys.add(args[1][1])
                stack.append(("obj",))
            else:
                return None
        elif op == "RETURN_VALUE":
            return frozenset(keys) if stack == [("int",)] else None
        else:
            return None
    return None


def hash_keys(cls):
    """The instance keys ``cls.__hash__`` (its own) reads, if it is provably identity-derived
    and pure on instances of ``cls``; else None. Read statically: no user code runs."""
    fn = vars(cls).get("__hash__")
    if type(fn) is not types.FunctionType:
        return None
    code = fn.__code__
    if code not in _PROOFS:
        _PROOFS[code] = _identity_hash_keys(code)
    keys = _PROOFS[code]
    if keys is None:
        return None
    # id/hash are the builtins where the function runs (a module global would shadow them)
    glob = fn.__globals__
    names = getattr(fn, "__builtins__", None) or glob.get("__builtins__")
    names = vars(names) if isinstance(names, types.ModuleType) else names
    if not isinstance(names, dict) or any(
            n in glob or names.get(n) is not getattr(builtins, n) for n in ("id", "hash")):
        return None
    # self.__dict__ is the instance dict: plain attribute lookup, standard descriptor
    if inspect.getattr_static(cls, "__getattribute__", None) is not object.__getattribute__:
        return None
    if type(inspect.getattr_static(cls, "__dict__", None)).__name__ != "getset_descriptor":
        return None
    return keys


def _instance_dict(value):
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except Exception:  # noqa: BLE001
        return None
    return attrs if type(attrs) is dict else None


def _accepted(vt) -> bool:
    """A module tracker whose class's own ``__hash__`` is provably identity-derived and pure."""
    from ..dynamo_api import module_tracker_types

    return (type(vt) in module_tracker_types() and hash_keys(type(vt.value)) is not None
            and _instance_dict(vt.value) is not None)


def _hash_unchanged(vt) -> bool:
    """Does the module's hash still equal the one Dynamo computes from the object on entry
    (``get_python_hash`` hashes the real object, which tracing does not mutate)? False when
    the frame has a pending write/deletion of a key ``__hash__`` reads, or modified the
    instance dict through a tracker of its own."""
    from torch._dynamo.symbolic_convert import InstructionTranslator

    tx = InstructionTranslator.current_tx()
    side_effects = tx.output.side_effects
    if any(side_effects.has_pending_mutation_of_attr(vt, key) for key in hash_keys(type(vt.value))):
        return False
    tracked = getattr(side_effects, "id_to_variable", {}).get(id(_instance_dict(vt.value)))
    return tracked is None or not side_effects.is_modified(tracked)


@fail_safe(NAME)
def _is_python_hashable(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.is_python_hashable()``: True for a module tracker whose
    class's ``__hash__`` is provably identity-derived and pure, while its inputs are those of
    the frame's entry (the case ``raise_on_overridden_hash`` refuses)."""
    if args or kwargs or not _accepted(instance):  # Dynamo allows an inherited __hash__ itself
        return DEFER
    if not _hash_unchanged(instance):
        return DEFER
    return True


@fail_safe(NAME)
def _is_python_equal(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.is_python_equal(other)``: Dynamo asks it of dict/set keys
    whose hashes are equal. Two distinct objects there, one of them a module accepted
    above: CPython would call ``__eq__`` (and may find them equal); a graph break."""
    if len(args) != 1 or kwargs:
        return DEFER
    other = args[0]
    if not _accepted(instance) or getattr(other, "value", None) is instance.value:
        return DEFER
    from ..dynamo_api import graph_break

    graph_break("distinct keys with equal hashes", f"{instance} == {other}",
                f"{type(instance.value).__qualname__} defines __hash__: CPython would ask __eq__")


def _unsound_iteration(container, is_set: bool):
    """Why iterating ``container`` (a set, or a dict's keys) would not be CPython's, or None.

    A set of two or more elements, one of them a module accepted above: CPython orders it by
    the hashes (addresses, not guarded), Dynamo by insertion. Any set or dict holding such a
    module whose hash inputs the frame has since changed: CPython's lookups would miss it,
    and Dynamo's ``in`` falls back to iterating with ``is``/``==`` when the hash is refused
    (``CONTAINS_OP`` swallows the ``Unsupported``), which would find it."""
    items = getattr(container, "items", None)
    if not items:
        return None
    accepted = []
    for key in items:
        vt = getattr(key, "vt", None)
        if _accepted_key(vt):
            accepted.append(vt)
    if not accepted:
        return None
    if is_set and len(items) >= 2:
        return "CPython orders the set by the modules' hashes (their addresses, not guarded); Dynamo by insertion"
    from ..dynamo_api import peek

    for vt in accepted:
        tracker, _ = peek(vt)
        if tracker is not None and not _hash_unchanged(tracker):
            return "the frame changed what a module's __hash__ reads after it was hashed"
    return None


def _accepted_key(vt) -> bool:
    """:func:`_accepted` for a set element or dict key, seen through a lazy tracker without
    realizing it (an unrealized one counts by its value's class: erring towards the break)."""
    from ..dynamo_api import peek

    if vt is None:
        return False
    tracker, value = peek(vt)
    if tracker is not None:
        return _accepted(tracker)
    import torch

    return isinstance(value, torch.nn.Module) and hash_keys(type(value)) is not None


def _refuse(container, what, why):
    from ..dynamo_api import graph_break

    graph_break("set or dict of modules hashed by identity", f"{what} of {container}", why)


def _is_set(container) -> bool:
    from torch._dynamo.variables import SetVariable

    return isinstance(container, SetVariable)


@fail_safe(NAME)
def _unpack_var_sequence(wrapped, instance, args, kwargs):
    """``SetVariable``/``ConstDictVariable.unpack_var_sequence(tx)`` (iteration, ``list(s)``,
    ``for m in s``, the fallback of ``in``): a graph break where the result would follow an
    accepted module's hash (:func:`_unsound_iteration`)."""
    why = _unsound_iteration(instance, _is_set(instance))
    if why:
        _refuse(instance, "iteration", why)
    return DEFER


@fail_safe(NAME)
def _set_call_method(wrapped, instance, args, kwargs):
    """``SetVariable.call_method(tx, name, args, kwargs)``: ``pop()`` picks by hash order."""
    name = args[1] if len(args) > 1 else kwargs.get("name")
    if name == "pop":
        why = _unsound_iteration(instance, True)
        if why:
            _refuse(instance, "pop()", why)
    return DEFER


PATCH = Patch(
    name=NAME,
    symptoms=(
        ('`Unsupported: User-defined object with overridden __hash__` for a module whose class '
             "defines `__hash__` in a set or as a dict key (`nn.Module.named_modules()`' memo: "
             "`m.parameters()` over a `TensorDictParams` submodule; TorchRL's `_default_device`, "
             '`SKIPPED INLINING` on 2.10)',
         '2.10–2.12',
         '(`>=2.10,<2.13`)'),
    ),
    fixes="Unsupported: User-defined object with overridden __hash__ (UnspecializedNNModuleVariable(M)), e.g. "
    "`for p in self.parameters()` over a TensorDictParams submodule (named_modules' memo set; TorchRL's "
    "_default_device: SKIPPED INLINING on 2.10)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedObjectVariable.is_python_hashable "
    "(utils.raise_on_overridden_hash)",
    mirrors="torch <=2.9: dicts.is_hashable accepted every module tracker; torch 2.13: object_protocol.generic_hash",
    torch=">=2.10,<2.13",
    fixed_upstream="2.13: object_protocol.generic_hash (user hashes traced)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "is_python_hashable",
               _is_python_hashable),
        Target("torch._dynamo.variables.user_defined", "UserDefinedObjectVariable", "is_python_equal",
               _is_python_equal, params=("other",)),
        Target("torch._dynamo.variables", "ConstDictVariable", "unpack_var_sequence", _unpack_var_sequence,
               params=("tx",)),
        Target("torch._dynamo.variables", "SetVariable", "unpack_var_sequence", _unpack_var_sequence,
               inherited=True, params=("tx",)),
        Target("torch._dynamo.variables", "SetVariable", "call_method", _set_call_method,
               params=("tx", "name", "args", "kwargs")),
    ),
    requires=("torch._dynamo.utils:raise_on_overridden_hash",
              "torch._dynamo.symbolic_convert:InstructionTranslator.current_tx"),
    summary="modules whose class's __hash__ is provably identity-derived and pure (TensorDictParams') go "
    "into sets and dicts again (named_modules' memo), as up to 2.9",
    history=(
        ("2.5-2.9", "every module tracker is hashable (`dicts.is_hashable`), hashed with `hash(module)`: not this gap"),
        ("2.10-2.12",
         "`UserDefinedObjectVariable.is_python_hashable` calls `raise_on_overridden_hash`: a module whose class "
         "defines `__hash__` in a set or dict is `Unsupported: User-defined object with overridden __hash__`; "
         "`named_modules()`' memo set makes `m.parameters()` fail over a `TensorDictParams` submodule (TorchRL's "
         "`_default_device` on 2.10: `SKIPPED INLINING`)"),
        ("2.13+", "fixed upstream: hashing goes through `object_protocol.generic_hash`"),
    ),
)
