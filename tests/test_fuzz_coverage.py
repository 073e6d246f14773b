"""The fuzzer reaches every patch (issue 26): each handler of each patch applied on this
torch is called by at least one of a fixed set of generated programs.

``scripts/fuzz.py --coverage`` replaces every handler (a ``Target``'s ``fail_safe``
function, the handler behind a ``gate``, and the ``fail_safe`` functions a gate calls
by name) with a function that counts its calls and passes them on unchanged, from
outside tdcompat (``tests/fuzzer.py: instrument_handlers``; the installer is not
touched), then runs the first ``TDCOMPAT_FUZZ_COVERAGE_PROGRAMS`` (default 600: the set
tests/test_fuzz.py replays) programs of seed 0. A handler that no program calls means a patch the differential
fuzzer never tests: add a grammar family (tests/fuzzer.py, ``FAMILIES``) or, where it
cannot be reached by construction on some torch, an entry in :data:`ALLOWED` saying why.

In its own interpreter, as tests/test_fuzz.py: the run toggles ``tdcompat.patch()``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "fuzz.py")

#: (patch, handler label) -> (torch releases, as a packaging specifier, where no program can
#: reach it, why). Measured empty on 2.5.1, 2.13.0 and 2.15.0 with 600 programs of seed 0 (400 until the
#: `truth` family moved the programs and `dunder-dict-views`' `_list_extend` fell out of the first 400 on 2.5.1)
#: (dunder-dict-order's ``_min_max``, 2.15, is reached by the ``min``/``max`` with ``key=`` forms
#: of tests/fuzzer.py's ``DD_FORMS`` since the session that added them). ordered-dict-class-method has one handler
#: per Dynamo path (2.5-2.8 and 2.9-2.13); each is reached where its path exists (measured on 2.5.1 and 2.13.0).
ALLOWED: dict = {
    ("builtin-format", "builtin_format._format"): (
        ">=2.5", "behind a gate that lets every str.format (each f-string field) through: reached only by a call of "
        "the builtin format(), which only DD_FORMS' formatted() writes; none of seed 0's first 600 programs draws it "
        "(8 of seeds 600-4000 do: scripts/fuzz.py --replay 607,979 --all-configs --coverage reaches it on 2.5.1 and "
        "2.13.0); tests/test_builtin_format.py covers every accepted shape"),
    ("string-format-deferred", "string_format_deferred._format"): (
        ">=2.5", "behind a gate that lets str.format of constants through: reached by an f-string or str.format of "
        "a non-constant (a tensor, a list, an object), which formatted() writes; none of seed 0's first 600 "
        "programs draws it (the replay of 607 and 979 reaches it on 2.5.1 and 2.13.0); "
        "tests/test_string_format_deferred.py covers every accepted shape"),
    ("resume-display-extend", "resume_display_extend._extend"): (
        "<2.6", "reached only in a resumed frame, after a graph break at a call inside a list or set display with "
        "unpacking, in the default (not fullgraph) configs; none of seed 0's first 600 programs has one on 2.5.1. "
        "The grammar writes it (`[*filter(None, vars(o))]` inside a tuple display, refused by dunder-dict-views): "
        "fresh seed 1955387548's program 1955393414164393 reaches it (scripts/fuzz.py --replay 1955393414164393 "
        "--all-configs --coverage); tests/test_resume_display_extend.py covers list and set displays"),
    ("recompile-cache-invalidation", "recompile_cache_invalidation._compile_frame"): (
        "<2.6", "the gate on ConvertFrameAssert.__call__ counts the running compiles itself (one frame: it stays on "
        "the stack through the whole trace) and never calls this handler, which is installed alone only where the "
        "gate would not fit; every program's compile runs the gate, and the patch's _invalidate is reached"),
    ("set-dict-operand-guard", "set_dict_operand_guard._guard_fast_operands"): (
        ">=2.9", "SetVariable._fast_set_method runs only for a set method with constant operands (`s.union(d)` of "
        "a dict of constants, 2.9-2.13); seed 0's first 600 programs call none on 2.15.0 (2.14+ send dict operands "
        "past it) and this was not measured on 2.9-2.13: grammar owed (tests/test_set_dict_operand_guard.py "
        "reaches it)"),
    ("dict-subclass-ior", "dict_subclass_ior._ior"): (
        "==2.14.*", "2.14 sends `o |= m` of a dict subclass through the number slot (_nb_ior, reached by the TDict "
        "truth change's `|=`); UserDefinedDictVariable.call_method('__ior__') is left for `o.__ior__(m)` spelled "
        "out, which the grammar does not write (tests/test_dict_subclass_ior.py covers the slot)"),
    ("dict-subclass-merge", "dict_subclass_merge._subclass_or"): (
        ">=2.15", "2.15 sends `m | d` through the nb_or slots (binary_op), not UserDefinedDictVariable.call_method: "
        "only `m.__or__(d)` spelled out reaches it (2.7-2.14 reach it through `m | d`)"),
    ("set-dunder-view-operand", "set_dunder_view_operand._explicit_dunder"): (
        "==2.13.*", "tests/fuzzer.py's view_operands spells out `frozenset(...).__rand__(view)` and "
        "`s.__iand__(view)`, but the one program of seed 0's first 600 that calls it (406) is abandoned on 2.13 "
        "before it (an attribute deleted and stored again on an object passed in: issue 27's refusal); fresh "
        "seeds reach it (docs/fuzzing.md), tests/test_set_dunder_view_operand.py covers every accepted shape"),
    ("dict-subclass-missing", "dict_subclass_missing._get"): (
        "==2.6.*", "`get` of a dict subclass breaks every program on 2.5 (MutableMappingVariable has no `get`), so "
        "no op that seed 0's first 600 programs reach calls it (the HASH 'key' branch reads GMISS['zz'], which "
        "reaches _getitem on 2.7-2.8); only items_views calls GMISS.get, and fresh seeds rarely write it (2 of "
        "seed 7's first 3,000 programs; none of 1,417 of seed 1883192215 on 2.6.0): "
        "tests/test_dict_subclass_missing.py covers every accepted shape"),
    ("ordered-dict-class-method", "ordered_dict_class_method._class_call_method"): (
        "<2.9", "2.5-2.8 read OrderedDict's own methods from the class as SkipFunctionVariable: the call "
        "reaches _skipped_call, never UserDefinedClassVariable.call_method"),
    ("ordered-dict-class-method", "ordered_dict_class_method._skipped_call"): (
        ">=2.9", "2.9-2.13 read OrderedDict's own methods from the class as a GetAttrVariable whose call is "
        "UserDefinedClassVariable.call_method (_class_call_method); no SkipFunctionVariable holds them"),
}


def _torch_version() -> str:
    import torch

    return torch.__version__.split("+")[0]


def _allowed(version: str) -> set:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    return {key for key, (releases, _why) in ALLOWED.items() if Version(version) in SpecifierSet(releases)}


def test_allow_list_is_explained():
    for (patch, label), (releases, why) in ALLOWED.items():
        assert patch and label and releases and len(why) > 20, (patch, label)


@pytest.fixture(scope="module")
def coverage_report(tmp_path_factory):
    programs = os.environ.get("TDCOMPAT_FUZZ_COVERAGE_PROGRAMS", "600")
    out = tmp_path_factory.mktemp("fuzz_coverage") / "fuzz.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--seed", "0", "--programs", programs, "--coverage", "--shrink-seconds", "0",
         "--quiet", "--json", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=int(programs) * 3 + 600,
    )
    if not out.exists():
        raise AssertionError(f"fuzzer failed ({proc.returncode}):\nstdout:\n{proc.stdout[-4000:]}\n"
                             f"stderr:\n{proc.stderr[-6000:]}")
    return json.loads(out.read_text())


def test_every_applied_patch_has_counted_handlers(coverage_report):
    applied = {name for name, state in coverage_report["patches"].items() if state == "applied"}
    assert applied, coverage_report["patches"]
    without = sorted(applied - {p for p, labels in coverage_report["handlers"].items() if labels})
    assert not without, f"applied patches whose handlers the instrumentation did not find: {without}"


def test_every_handler_is_reached(coverage_report):
    version = coverage_report["versions"]["torch"].split("+")[0]
    missed = {(patch, label) for patch, labels in coverage_report["handlers"].items()
              for label, (calls, _answered) in labels.items() if not calls}
    unexplained = sorted(missed - _allowed(version))
    counts = json.dumps(coverage_report["counts"])
    assert not unexplained, (f"handlers no generated program calls on torch {version} "
                             f"({coverage_report['programs']} programs of seed 0, {counts}): {unexplained}")
