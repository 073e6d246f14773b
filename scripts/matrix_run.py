"""Record the catalog on this install, without and with tdcompat, as JSON.

    python scripts/matrix_run.py --out docs/matrix/2.8.0.json

Run once per torch release (``nox -s "compat(minor='2.8')"`` does it in the
matrix environment); ``scripts/gen_compatibility.py`` turns the records into
docs/compatibility.md.
"""

import argparse
import json
import subprocess
import sys

from tdcompat.doctor import _run_side


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--backend", action="append", default=[])
    args = parser.parse_args()
    before = _run_side(False, args.backend, [])
    after = _run_side(True, args.backend, [])
    status = json.loads(subprocess.run(
        [sys.executable, "-c", "import json, tdcompat; tdcompat.patch(); print(json.dumps([s.as_dict() for s in tdcompat.status()]))"],
        capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    record = {"versions": before["versions"], "unpatched": before["results"], "patched": after["results"], "status": status}
    with open(args.out, "w") as fh:
        json.dump(record, fh, indent=1, sort_keys=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
