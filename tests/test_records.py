"""The cases and the recorded matrix say the same thing (issue 13: one source of truth).

``Case.unpatched`` is the source; ``docs/matrix/<release>.json`` are measurements of
the catalog (``nox -s "compat(minor='2.8')"``), one per release in
``tdcompat.cases.records.MEASURED``. This test reads the records only (no compiling),
so every CI run checks every release: a case whose expectation changed without a new
measurement, or a record that disagrees with its case, fails here.
"""

import glob
import json
import os
import re

import pytest

from tdcompat.cases.catalog import all_cases
from tdcompat.cases.records import MEASURED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATRIX = os.path.join(ROOT, "docs", "matrix")
CASES = all_cases()


def _record(release):
    path = os.path.join(MATRIX, f"{release}.json")
    if not os.path.exists(path):
        pytest.fail(f"no record for {release}: run nox -s \"compat(minor='{release.rsplit('.', 1)[0]}')\"")
    with open(path) as fh:
        return json.load(fh)


def _pins():
    """{torch release: the tensordict pip pairs with it}, from requirements/torch-<minor>.txt."""
    pins = {}
    for path in glob.glob(os.path.join(ROOT, "requirements", "torch-*.txt")):
        with open(path) as fh:
            text = fh.read()
        pins[re.search(r"^torch==(\S+)", text, re.M).group(1)] = re.search(r"^tensordict==(\S+)", text, re.M).group(1)
    return pins


_PINS = _pins()


def test_measured_releases_are_the_pinned_ones():
    assert set(MEASURED) <= set(_PINS), set(MEASURED) - set(_PINS)
    records = {os.path.basename(p)[: -len(".json")] for p in glob.glob(os.path.join(MATRIX, "*.json"))}
    assert records == set(MEASURED), f"records without a MEASURED entry or the reverse: {records ^ set(MEASURED)}"


@pytest.mark.parametrize("release", MEASURED)
def test_record_equals_the_cases(release):
    record = _record(release)
    assert record["versions"]["torch"].split("+")[0] == release
    td = record["versions"].get("tensordict")
    td = None if td in (None, "not installed") else td
    wrong = []
    for name, case in CASES.items():
        if not case.runs_on(release) or (case.needs_tensordict and td is None):
            continue
        per_backend = record["unpatched"].get(name)
        if per_backend is None:
            wrong.append(f"{name}: not in the record (re-record {release})")
            continue
        expected = case.expectation(release, td)
        for backend in case.backends:
            result = per_backend.get(backend, {})
            got = result.get("outcome", "missing")
            if got != expected.outcome:
                wrong.append(f"{name} [{backend}]: recorded {got}, the case says {expected.outcome}")
            elif not re.search(expected.detail_pattern(), result.get("detail", "")):
                wrong.append(f"{name} [{backend}]: recorded {result.get('detail', '')[:120]!r}, "
                             f"the case says {expected.detail_pattern()!r}")
    assert not wrong, f"torch {release}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("release", MEASURED)
def test_record_has_every_case_passing_with_tdcompat(release):
    record = _record(release)
    failing = [f"{name} [{backend}]: {result['outcome']} {result.get('detail', '')[:100]}"
               for name, per_backend in record["patched"].items() if name in CASES
               for backend, result in per_backend.items() if result["outcome"] not in ("ok", "skipped")]
    assert not failing, f"torch {release} with tdcompat:\n" + "\n".join(failing)


# -- ranges proven on every measured release, from the cases alone --------------------------------
def _own(patch, by_name):
    """The patch and everything it declares it needs (a case may list those too)."""
    out = {patch.name}
    for need in patch.needs:
        out |= _own(by_name[need], by_name)
    return out


def _alone_failing(patch, release, by_name):
    """Cases listing ``patch`` and nothing beyond its needs that fail unpatched on ``release``."""
    own = _own(patch, by_name)
    td = _PINS[release]
    return [c for c in CASES.values() if patch.name in c.patches and set(c.patches) <= own and c.runs_on(release)
            and c.expected_unpatched(release, td) != "ok"]


def _patches():
    import tdcompat

    return tdcompat.patches.ALL_PATCHES


#: Releases where every case of a patch also needs another patch that is in range there (one
#: of its declared needs, or a patch that needs it), so its failure cannot be told apart from
#: the other's; the range is proven elsewhere.
EXPLAINED_BY_NEEDS = {
    # Any pattern on an input mapping's __dict__ involves an attribute write, which 2.6-2.8
    # drop without mutable-mapping-setattr; proven alone on 2.9-2.11 and against 2.5/2.12.
    "mapping-dunder-dict": ("2.6.0", "2.7.1", "2.8.0"),
    # 2.8 graph-breaks on `del m.x` itself (nn.Module.__delattr__), so the only deletion a frame
    # can make there is remove_from's `del m.__dict__[x]`, which needs instance-dict-writes
    # (that needs this patch); proven alone on 2.5-2.7, 2.9-2.12 and against 2.13.
    "module-deleted-attr": ("2.8.0",),
    # 2.8 reaches super().__delattr__ only through module-delattr (which needs this patch): its
    # cases there list both (module_delattr_module_missing, module_delattr_module_dict_view).
    "super-delattr": ("2.8.0",),
}


def _in_range(patch, release):
    from tdcompat.versions import needed, parse_torch_version

    return needed(parse_torch_version(release), patch.torch, patch.probe)


def _range_problems(patch, in_range):
    """What is wrong with ``patch`` applying on ``{r for r in MEASURED if in_range(r)}``."""
    by_name = {p.name: p for p in _patches()}
    wrong = []
    for release in MEASURED:
        unexplained = [c.name for c in _alone_failing(patch, release, by_name) if not any(
            _in_range(by_name[n], release) for n in c.patches if n != patch.name)]
        if in_range(release) and not unexplained and release not in EXPLAINED_BY_NEEDS.get(patch.name, ()):
            wrong.append(f"{release}: in range {patch.torch}, but no case needing {patch.name} alone fails there")
        if not in_range(release) and unexplained:
            wrong.append(f"{release}: out of range {patch.torch}, but {unexplained} fail there unpatched")
    return wrong


@pytest.mark.parametrize("patch", _patches(), ids=lambda p: p.name)
def test_range_is_proven_on_every_measured_release(patch):
    """In range exactly where a case needing this patch alone (with what it declares it needs)
    fails unpatched for no need that is in range there too."""
    if patch.proven_by:
        pytest.skip(f"break-only patch without cases: proven by {patch.proven_by}")
    wrong = _range_problems(patch, lambda release: _in_range(patch, release))
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("patch", _patches(), ids=lambda p: p.name)
def test_moving_a_range_edge_by_one_release_is_caught(patch):
    """Widen or shrink the range by one measured release at each of its edges (where it starts
    or stops applying, and at the ends of the list): the proof above must then fail."""
    if patch.proven_by:
        pytest.skip(f"break-only patch without cases: proven by {patch.proven_by}")
    mask = [_in_range(patch, r) for r in MEASURED]
    edges = {0, len(MEASURED) - 1} | {i for i in range(len(MEASURED) - 1) if mask[i] != mask[i + 1]} \
        | {i + 1 for i in range(len(MEASURED) - 1) if mask[i] != mask[i + 1]}
    exempt = set(EXPLAINED_BY_NEEDS.get(patch.name, ()))
    for i in sorted(edges):
        if MEASURED[i] in exempt:
            continue
        moved = dict(zip(MEASURED, mask))
        moved[MEASURED[i]] = not mask[i]
        assert _range_problems(patch, moved.__getitem__), f"{patch.name}: flipping {MEASURED[i]} goes unnoticed"


def test_compatibility_doc_is_what_the_records_make():
    """docs/compatibility.md equals what scripts/gen_compatibility.py makes from docs/matrix/ (``--check``)."""
    import importlib.util
    import os

    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts",
                          "gen_compatibility.py")
    spec = importlib.util.spec_from_file_location("gen_compatibility_check", script)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.main(["--check"]) == 0, "docs/compatibility.md is stale: run python scripts/gen_compatibility.py"


def test_readme_generated_parts_are_what_the_data_makes():
    """README.md's "What it fixes" table, catalog figures and counts equal what scripts/gen_readme.py makes
    from the patch declarations (``Patch.symptoms``) and docs/matrix/ (``--check``)."""
    import importlib.util
    import os

    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "gen_readme.py")
    spec = importlib.util.spec_from_file_location("gen_readme_check", script)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.main(["--check"]) == 0, "README.md is stale: run python scripts/gen_readme.py"


def test_every_patch_has_a_readme_row_of_its_own():
    """Each patch declares what users see (``Patch.symptoms``), with the releases where they see it."""
    from tdcompat.patches import ALL_PATCHES

    missing = [p.name for p in ALL_PATCHES if not p.symptoms]
    assert not missing, f"no symptoms= declared: {missing}"
    for patch in ALL_PATCHES:
        for row in patch.symptoms:
            assert len(row) == 3 and all(isinstance(c, str) for c in row) and row[0] and row[1], (patch.name, row)
