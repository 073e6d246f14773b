"""Write README.md's generated parts from the patch declarations and the records (never edit them by hand).

    python scripts/gen_readme.py           # rewrite them
    python scripts/gen_readme.py --check   # exit 1 if README.md is not what the data makes

Each part sits between ``<!-- gen_readme: NAME -->`` and ``<!-- /gen_readme -->``:

* ``fixes``: the "What it fixes" table, one row per ``Patch.symptoms`` entry (a row from ``Patch.fixes`` for a
  patch that declares none), in registry order (``tdcompat/patches/__init__.py``).
* ``matrix``: the catalog figures from the records in ``docs/matrix/`` (cases run and failing without
  tdcompat per release; whether every case equals eager with it).
* ``counts``: how many cases and patches the catalog has.
* ``fuzz``: the fresh-seed fuzz volume per release, from ``benchmarks/fuzz_ledger.json``
  (``scripts/fuzz.py --ledger-table``).
"""

import argparse
import glob
import json
import os
import re
import sys

from packaging.version import Version

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
sys.path.insert(0, ROOT)

_PART = re.compile(r"(<!-- gen_readme: (?P<name>[a-z]+) -->)(?P<body>.*?)(<!-- /gen_readme -->)", re.S)


def _cell(text: str) -> str:
    """A table cell: GitHub's tables split a row at every ``|``, inside a code span too (GFM: escape it as
    ``\\|``, which renders as ``|`` there as well)."""
    return text.replace("|", "\\|")


def fixes_table() -> str:
    from tdcompat.patches import ALL_PATCHES

    lines = ["| you see | torch releases (range of the patch) | patch |", "|---|---|---|"]
    for patch in ALL_PATCHES:
        rows = patch.symptoms or ((patch.fixes, f"`{patch.torch}`", ""),)
        for seen, releases, note in rows:
            name = f"`{patch.name}`" + (f" {note}" if note else "")
            lines.append(f"| {_cell(seen)} | {_cell(releases)} | {_cell(name)} |")
    return "\n".join(lines)


def _worst(per_backend: dict) -> str:
    rank = {"ok": 0, "skipped": 1, "graph_break": 2, "wrong_result": 3, "eager_error": 4}
    outcomes = [r["outcome"] for r in per_backend.values()] or ["missing"]
    return max(outcomes, key=lambda o: rank.get(o, 9))


def matrix_figures() -> str:
    records = []
    for path in glob.glob(os.path.join(ROOT, "docs", "matrix", "*.json")):
        with open(path) as fh:
            records.append(json.load(fh))
    records.sort(key=lambda r: Version(Version(r["versions"]["torch"]).base_version))
    releases, run, failing, all_ok = [], [], [], True
    cases = set()
    for record in records:
        ran = [c for c, per in record["unpatched"].items() if _worst(per) != "skipped"]
        cases.update(record["unpatched"])
        releases.append(Version(record["versions"]["torch"]).base_version)
        run.append(len(ran))
        failing.append(sum(_worst(record["unpatched"][c]) != "ok" for c in ran))
        all_ok &= all(_worst(record["patched"].get(c, {})) == "ok" for c in ran)
    verdict = ("and every case equals eager with tdcompat on every one of them" if all_ok
               else "and NOT every case equals eager with tdcompat: see docs/compatibility.md")
    return (f"of the {len(cases)} catalog cases (some run only on the releases where they mean something), "
            f"without tdcompat {' / '.join(map(str, failing))} fail (of {' / '.join(map(str, run))} run) on torch "
            f"{' / '.join(releases)}, {verdict}.")


def counts() -> str:
    from tdcompat.cases.catalog import all_cases
    from tdcompat.patches import ALL_PATCHES

    return f"{len(all_cases())} cases for {len(ALL_PATCHES)} patches"


def fuzz_table() -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("tdcompat_fuzz_script", os.path.join(ROOT, "scripts", "fuzz.py"))
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    table = fuzz.ledger_table(os.path.join(ROOT, "benchmarks", "fuzz_ledger.json"))
    return "\n" + "\n".join("  " + line for line in table.strip().splitlines()) + "\n  "


PARTS = {"fixes": lambda: "\n" + fixes_table() + "\n", "matrix": matrix_figures, "counts": counts,
         "fuzz": fuzz_table}


def render(text: str) -> str:
    def part(match):
        name = match.group("name")
        if name not in PARTS:
            raise SystemExit(f"README.md: unknown generated part {name!r} (known: {', '.join(PARTS)})")
        return match.group(1) + PARTS[name]() + match.group(4)

    return _PART.sub(part, text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write README.md's generated parts from the patch data.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if README.md is stale")
    args = parser.parse_args(argv)
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    new = render(text)
    if args.check:
        stale = new != text
        print(f"{README} is {'stale: run python scripts/gen_readme.py' if stale else 'up to date'}")
        return 1 if stale else 0
    with open(README, "w", encoding="utf-8") as fh:
        fh.write(new)
    print(f"wrote {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
