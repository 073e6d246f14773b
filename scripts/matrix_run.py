"""Record the catalog on this install, without and with tdcompat, as JSON.

    python scripts/matrix_run.py --out docs/matrix/2.8.0.json
    python scripts/matrix_run.py --out docs/matrix/2.8.0.json --case new_case   # add/refresh cases only

Run once per torch release (``nox -s "compat(minor='2.8')"`` does it in the
matrix environment); ``scripts/gen_compatibility.py`` turns the records into
docs/compatibility.md.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the checkout's tdcompat, without PYTHONPATH


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--backend", action="append", default=[])
    parser.add_argument("--case", action="append", default=[],
                        help="record only these cases into the existing record (a new case: no full re-run)")
    args = parser.parse_args()
    from tdcompat.doctor import _run_side  # imports torch: not needed for --help

    before = _run_side(False, args.backend, args.case)
    after = _run_side(True, args.backend, args.case)
    status = json.loads(subprocess.run(
        [sys.executable, "-c",
         "import json, tdcompat; tdcompat.patch(); print(json.dumps([s.as_dict() for s in tdcompat.status()]))"],
        capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    record = {"versions": before["versions"], "unpatched": before["results"], "patched": after["results"],
              "status": status}
    if args.case:
        with open(args.out) as fh:
            old = json.load(fh)
        if old["versions"].get("torch") != record["versions"].get("torch"):
            raise SystemExit(f"{args.out} records torch {old['versions'].get('torch')}, not this one")
        for side in ("unpatched", "patched"):
            old[side].update(record[side])
        old["status"] = status
        record = old
    with open(args.out, "w") as fh:
        json.dump(record, fh, indent=1, sort_keys=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
