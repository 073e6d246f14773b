"""``d.update(gen)`` from a generator Dynamo already ran stores values computed before the update (torch 2.5-2.6).

Symptom: ``d.update((k, len(d) + x) for k in "pr")`` (a generator that reads the dict it fills, and that Dynamo
can inline: it reads a tensor, say) gives every key the same value compiled where eager gives a growing one;
so do ``od.update(gen)``, ``dd.update(gen)``, ``d.update(map(f, gen))`` and ``d.update(zip(ks, gen))``.
Silently wrong with ``fullgraph=True`` on 2.5.1 and 2.6.0 (tests/test_dict_update_lazy_pairs.py); a
``defaultdict`` made in the frame reaches it only with tdcompat (``defaultdict-construction``).

Root cause: torch/_dynamo/symbolic_convert.py: ``InliningInstructionTranslator.inline_call_`` (2.5-2.6) runs a
generator function to its end where it is called and returns a ``ListIteratorVariable`` of what it yielded;
``ConstDictVariable.call_method("update")`` then stores those values. CPython draws each item after the store
of the one before. 2.7 made generators objects stepped one item at a time (``LocalGeneratorObjectVariable``),
where ``dict-update-lazy-pairs`` steps them.

What the handlers do: the gate on ``inline_call_`` marks the list iterator it returns for a code object with
``CO_GENERATOR`` (``dict_pairs.mark_drained``: an attribute on Dynamo's own tracker, read by nothing else);
``BuiltinVariable.call_zip``/``call_map`` mark their result when an argument is marked (they copy their
iterables' items into plain lists). ``update``/``__ior__`` on a dict tracker with one marked argument, and
``d |= marked`` (``dict-ior-in-place``), give up the whole frame (``dynamo_api.abandon_frame``): under
``fullgraph=True`` a graph break (the user's error); otherwise CPython runs the frame, because a graph break
there would resume after a compiled prefix that already ran the generator, handing the resumed code a list of
stale items (found by the fuzzer on 2.6.0, ``fullgraph=False``: seeds 458144038428467, ...429227, ...430071).
The gate on ``inline_call_`` passes that request up through every inlined call. Sound: it only stops a trace;
a list iterator that is not marked (``iter(list)``, whose items CPython would also read whole) and everything
else stay Dynamo's. Not covered: other consumers of such a generator that mutate what it reads (``list.extend``,
``set.update``), left to Dynamo.
"""

from __future__ import annotations

import inspect

from ..dict_pairs import holds_drained_generator, mark_drained
from ..dynamo_api import abandon_frame, bind_args, realize, reraise_abandoned
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, gate, method_name_gate, replay, routed_gate

NAME = "dict-update-drained-generator"


@fail_safe(NAME)
def _inline_call(wrapped, instance, args, kwargs):
    """``InliningInstructionTranslator.inline_call_(parent, func, args, kwargs)`` (a staticmethod, 2.5-2.6): the
    list iterator Dynamo returns for a generator function, marked."""
    result = wrapped(*args, **kwargs)
    bound = bind_args(args, kwargs, ("parent", "func", "args", "kwargs"))
    if bound is not None and type(result).__name__ == "ListIteratorVariable":
        code = getattr(bound[1], "get_code", lambda: None)()
        if code is not None and code.co_flags & inspect.CO_GENERATOR:
            mark_drained(result)
    return result


@gate(_inline_call)
def _inline_call_gate(original, handle):
    """What is installed (every function Dynamo inlines passes here): Dynamo's method runs once; only a list
    iterator it returns goes on to :func:`_inline_call`, anything else costs one type test."""

    def inline_call_(parent, func, args, kwargs):
        try:
            result = original(parent, func, args, kwargs)
        except Exception as error:  # an abandoned frame: on up to the root (see abandon_frame)
            reraise_abandoned(error)
            raise
        if type(result).__name__ != "ListIteratorVariable":
            return result
        return _inline_call(replay(result), None, (parent, func, args, kwargs), {})

    return inline_call_


@fail_safe(NAME)
def _combine(wrapped, instance, args, kwargs):
    """``BuiltinVariable.call_zip(tx, *its)`` / ``call_map(tx, fn, *its)``: marked when an argument is."""
    result = wrapped(*args, **kwargs)
    if any(holds_drained_generator(arg) for arg in args[1:]):
        mark_drained(result)
    return result


@fail_safe(NAME)
def _update(wrapped, instance, args, kwargs):
    """``ConstDictVariable.call_method(tx, "update" | "__ior__", [marked], kwargs)``: a graph break."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None:
        return DEFER
    tx, name, call_args, _call_kwargs = bound
    if name not in ("update", "__ior__") or len(call_args) != 1 or not holds_drained_generator(realize(call_args[0])):
        return DEFER
    abandon_frame(tx, "dict update from a generator Dynamo already ran", f"{NAME}: {instance}.{name}({call_args[0]})",
                  "the generator's items were computed before the update (torch <2.7); CPython draws each after "
                  "the store of the one before")


#: On ``ConstDictVariable.call_method`` (every dict method Dynamo traces): only ``update`` and ``__ior__`` reach
#: the handler, through the name gate it shares with the other dict-method patches.
_update_gate = routed_gate(_update, method_name_gate, frozenset({"update", "__ior__"}))


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`d.update(gen)` / `od.update(gen)` / `d.update(map(f, gen))` where the generator reads the dict it "
         "fills: **it sees the dict unchanged** (Dynamo ran the generator to its end where it was called)",
         "2.5–2.6",
         "(`<2.7`): a graph break"),
    ),
    fixes="`d.update(gen)` from a generator that reads d: the values were computed before the update (Dynamo "
    "ran the generator where it was called), silently wrong (torch 2.5-2.6); now a graph break",
    upstream="torch/_dynamo/symbolic_convert.py: InliningInstructionTranslator.inline_call_ (the generator run "
    "to its end); torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method (update)",
    mirrors="torch 2.7: generators are LocalGeneratorObjectVariable, stepped one item at a time (then "
    "dict-update-lazy-pairs)",
    torch="<2.7",
    fixed_upstream="2.7: generator objects (LocalGeneratorObjectVariable)",
    targets=(
        Target("torch._dynamo.symbolic_convert", "InliningInstructionTranslator", "inline_call_", _inline_call_gate,
               params=("parent", "func", "args", "kwargs")),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_zip", _combine, params=("tx",)),
        Target("torch._dynamo.variables.builtin", "BuiltinVariable", "call_map", _combine, params=("tx", "fn")),
        Target("torch._dynamo.variables.dicts", "ConstDictVariable", "call_method", _update_gate,
               params=("tx", "name", "args", "kwargs")),
    ),
    proven_by="tests/test_dict_update_lazy_pairs.py::test_a_generator_run_before_the_update_breaks",
    summary="d.update(gen) from a generator Dynamo already ran (2.5-2.6) graph-breaks instead of storing stale "
    "values",
    history=(
        ("2.5-2.6", "a generator function is run to its end where it is called; `update` from it stores values "
         "computed before the update (silently wrong where it can be inlined; `Unsupported: generator` "
         "elsewhere)"),
        ("2.7+", "generator objects stepped one item at a time (`dict-update-lazy-pairs` stores lazily)"),
    ),
)
