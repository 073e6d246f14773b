"""dict-update-lazy-pairs: ``d.update(gen)`` / ``d |= gen`` where the generator reads the dict it fills (torch 2.7+).

Compiled with ``fullgraph=True`` and compared with eager on calls with different inputs: the return value and
every input after the call. CPython stores each pair before it draws the next item, so ``len(d)`` grows under
the generator; Dynamo drained it first on every release (2.5-2.15). Right with the patch on 2.7+; a graph break
on 2.5-2.6, which run a generator function to its end where it is called (dict-update-drained-generator).
Without the patches (reverted
in-process) the generator shapes are wrong everywhere: ``test_without_the_patch_it_fails`` and
``test_a_generator_run_before_the_update_breaks`` assert it.
"""

from __future__ import annotations

import collections

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet
from torch._dynamo.exc import Unsupported

from tdcompat.versions import parse_torch_version

from conftest import eager_vs_compiled, without_patch

NAME = "dict-update-lazy-pairs"
TORCH = parse_torch_version(torch.__version__).release[:2]
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = parse_torch_version(torch.__version__).base_version in SpecifierSet(">=2.7")  # stepped; 2.5-2.6 break


def update_gen_reads_d(x, d):
    d.update((k, len(d) + x) for k in ("p", "r"))
    return x + 1, list(d), d["r"]


def update_map_over_gen_then_keywords(x, d):
    d.update(map(lambda p: (p[0], p[1] * x), ((k, len(d)) for k in ("p", "r"))), q=len(d))
    return x + 1, list(d.items())


def update_gen_function_alias(x, d):
    alias = d

    def grow():
        for k in ("p", "r", "a"):
            yield k, x * len(alias)

    d.update(grow())
    return x + 1, list(alias.items())


def ordered_update_gen(x, d):
    od = collections.OrderedDict(d)
    od.update((k, len(od)) for k in ("p", "r"))
    return x + 1, list(od.items())


def defaultdict_update_gen(x, d):
    dd = collections.defaultdict(list, d)
    dd.update((k, len(dd)) for k in ("p", "r"))
    dd["m"].append(1)
    return x + 1, list(dd.items())


def ior_gen(x, d):
    d |= ((k, len(d) + x) for k in ("p", "r"))
    return x + 1, list(d)


def update_list_of_pairs(x, d):
    """A list is whole before ``update`` reads it: the same either way (Dynamo's own answer)."""
    d.update([(k, len(d) + x) for k in ("p", "r")])
    return x + 1, list(d.items())


SHAPES = {f.__name__: f for f in (update_gen_reads_d, update_map_over_gen_then_keywords, update_gen_function_alias,
                                  ordered_update_gen, defaultdict_update_gen, ior_gen, update_list_of_pairs)}
#: Wrong without the patch on 2.7+ (and, for ``|=``, 2.9+: 2.7-2.8 break there, dict-ior-in-place's).
WRONG_NATIVELY = ("update_gen_reads_d", "update_map_over_gen_then_keywords", "update_gen_function_alias",
                  "ordered_update_gen", "defaultdict_update_gen")


def _make(n):
    return torch.arange(3.0) * n, {"a": n, "b": torch.ones(2) * n}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager_or_breaks(name):
    found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    if IN_RANGE or name == "update_list_of_pairs":
        assert found is None, found
    assert found is None or isinstance(found, Unsupported), found


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.7")
@pytest.mark.parametrize("name", WRONG_NATIVELY)
def test_without_the_patch_it_fails(name):
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert isinstance(found, str), found  # a wrong result: the generator saw the dict unchanged


@pytest.mark.skipif(TORCH >= (2, 7), reason="2.5-2.6 run a generator function to its end where it is called")
@pytest.mark.parametrize("name", ("update_gen_reads_d", "update_map_over_gen_then_keywords", "ordered_update_gen"))
def test_a_generator_run_before_the_update_breaks(name):
    """2.5-2.6 (dict-update-drained-generator): the update from a generator Dynamo already ran is a graph break
    with the patch, silently wrong without it."""
    found = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert isinstance(found, Unsupported) and "already ran" in str(found), found
    with without_patch("dict-update-drained-generator"):
        native = eager_vs_compiled(SHAPES[name], _make, (1, 2))
    assert isinstance(native, str), native


def _grown(d, how):
    """The generator reads the dict it fills (the fuzzer's ``grown`` helper, tests/fuzzer.py)."""
    pairs = ((k, len(d)) for k in ("p", "q", "a"))
    if how == "update":
        d.update(pairs, z=len(d))
    else:
        d.update(map(lambda p: (p[0], p[1] + len(d)), pairs))
    return d


def _inlined(x, d, how):
    """The update in a function Dynamo inlines, after a tensor op in the caller."""
    return x + 1, dict(_grown(d, how))


@pytest.mark.skipif(TORCH >= (2, 7), reason="2.5-2.6 run a generator function to its end where it is called")
@pytest.mark.parametrize("how", ("update", "map"))
@pytest.mark.parametrize("where", ("top", "inlined"))
def test_without_fullgraph_the_frame_runs_in_cpython(how, where):
    """2.5-2.6, ``fullgraph=False``: a graph break at the update would resume after a compiled prefix that already
    ran the generator (its stale items reconstructed as a list): the frame runs in CPython instead, equal to
    eager (fuzzer seeds 458144038428467, 458144038429227, 458144038430071 on 2.6.0)."""
    fn = {"top": _top_level_body_frame, "inlined": _inlined}[where]
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="aot_eager", fullgraph=False)
    for n in (1, 2):
        expected = fn(torch.ones(2) * n, {"a": n}, how)
        got = compiled(torch.ones(2) * n, {"a": n}, how)
        assert torch.equal(expected[0], got[0]) and expected[1] == got[1], (n, expected, got)


def _top_level_body_frame(x, d, how):
    y = x + 1
    pairs = ((k, len(d)) for k in ("p", "q", "a"))
    if how == "update":
        d.update(pairs, z=len(d))
    else:
        d.update(map(lambda p: (p[0], p[1] + len(d)), pairs))
    return y, dict(d)
