"""``python -m tdcompat doctor [options]``; with no arguments, the help."""

import sys

from .doctor import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if not argv:
        argv = ["--help"]  # the doctor takes a minute: run it only when asked for
    elif argv[:1] == ["doctor"]:
        argv = argv[1:]
    sys.exit(main(argv))
