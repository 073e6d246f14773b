"""Stamp out a new patch: module, registry entry, catalog case stub, test, upstream-kit stub, changelog fragment.

    python scripts/new_patch.py dict-foo-bar --target torch._dynamo.variables.dicts:ConstDictVariable.call_method \
        --torch "<2.12" --family dict [--open]

Every stamped file is full of ``TODO``s and fails the suite until they are filled in (a test that cannot
fail is not written for you). What is left afterwards is printed: measure, record, fuzz, document
(CONTRIBUTING.md, "Adding a patch, step by step"). The templates are in ``scripts/templates/``.
"""

import argparse
import os
import re
import string
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
NAME_RULE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")

STEPS = """\
Stamped {name}. Next (CONTRIBUTING.md, "Adding a patch, step by step"):
  1. measure: write the case ({case} in {cases}) and find its unpatched outcome on every release
       TDCOMPAT_DISABLE='*' python -m tdcompat.cases.runner {case}
  2. fill in the TODOs of {module_file} (docstring: what it accepts and why that is sound) and {test_file}
  3. record: python scripts/matrix_run.py --out docs/matrix/<torch>.json --case {case}   (each release)
  4. fuzz: grammar in tests/fuzzer.py that reaches every handler (tests/test_fuzz_coverage.py)
  5. docs: python scripts/gen_readme.py && python scripts/gen_compatibility.py; changelog.d/NAME.added.md fragment
  6. duplicates --change; commit"""


def _render(template: str, **values) -> str:
    with open(os.path.join(TEMPLATES, template), encoding="utf-8") as fh:
        return string.Template(fh.read()).substitute(values)


def _write_new(path: str, text: str) -> None:
    if os.path.exists(path):
        raise SystemExit(f"{os.path.relpath(path, ROOT)} exists already: nothing was written")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _register(root: str, module: str) -> None:
    """Append ``module`` to ``_PATCH_MODULES`` (the registry's apply order)."""
    path = os.path.join(root, "tdcompat", "patches", "__init__.py")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    start = text.index("_PATCH_MODULES = (")
    end = text.index("\n)", start)
    if f'"{module}",' in text[start:end]:
        raise SystemExit(f"{module} is registered already")
    text = text[:end] + f'\n    "{module}",' + text[end:]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _changelog(root: str, name: str, torch_range: str) -> None:
    """A changelog fragment, ``changelog.d/<name>.added.md`` (compiled into CHANGELOG.md at release by towncrier)."""
    directory = os.path.join(root, "changelog.d")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{name}.added.md")
    if os.path.exists(path):
        raise SystemExit(f"{path} exists already")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"Patch `{name}` (torch `{torch_range}`): TODO what users saw, measured on which releases.\n")


def main(argv=None, root: str = ROOT) -> int:
    parser = argparse.ArgumentParser(description="Stamp out a new tdcompat patch.")
    parser.add_argument("name", help="the patch's name: lowercase words joined by '-' (e.g. dict-foo-bar)")
    parser.add_argument("--target", required=True,
                        help="the Dynamo method it wraps, module:Class.method "
                             "(e.g. torch._dynamo.variables.dicts:ConstDictVariable.call_method)")
    parser.add_argument("--torch", required=True, help="the torch range that needs it, a packaging specifier")
    parser.add_argument("--family", default="misc",
                        help="the catalog module for its case: tdcompat/cases/gap_<family>.py (default misc)")
    parser.add_argument("--open", action="store_true",
                        help="still open on the newest torch: also stamp docs/upstream/<name>/PR.md")
    args = parser.parse_args(argv)

    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not NAME_RULE.match(args.name):
        parser.error(f"name {args.name!r}: lowercase words joined by '-', at least two (CONTRIBUTING: naming)")
    try:
        SpecifierSet(args.torch)
    except InvalidSpecifier:
        parser.error(f"--torch {args.torch!r} is not a packaging specifier (e.g. '<2.12' or '>=2.9,<2.15')")
    module_name, _, qual = args.target.partition(":")
    owner, _, method = qual.rpartition(".")
    if not module_name or not owner or not method:
        parser.error(f"--target {args.target!r}: write module:Class.method")
    cases = os.path.join(root, "tdcompat", "cases", f"gap_{args.family}.py")
    if not os.path.exists(cases):
        names = os.listdir(os.path.dirname(cases))
        known = sorted(f[4:-3] for f in names if f.startswith("gap_") and f.endswith(".py"))
        parser.error(f"--family {args.family!r}: no {os.path.relpath(cases, root)} (families: {', '.join(known)})")

    module = args.name.replace("-", "_")
    values = dict(name=args.name, module=module, case=module, torch=args.torch, owner=owner, method=method,
                  target_module=module_name, module_path=module_name.replace(".", "/") + ".py")
    module_file = os.path.join(root, "tdcompat", "patches", f"{module}.py")
    test_file = os.path.join(root, "tests", f"test_{module}.py")
    _write_new(module_file, _render("patch.py.tmpl", **values))
    _write_new(test_file, _render("test.py.tmpl", **values))
    if args.open:
        _write_new(os.path.join(root, "docs", "upstream", args.name, "PR.md"), _render("PR.md.tmpl", **values))
    with open(cases, "a", encoding="utf-8") as fh:
        fh.write(_render("case.py.tmpl", **values))
    _register(root, module)
    _changelog(root, args.name, args.torch)
    print(STEPS.format(name=args.name, case=module, cases=os.path.relpath(cases, root),
                       module_file=os.path.relpath(module_file, root), test_file=os.path.relpath(test_file, root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
