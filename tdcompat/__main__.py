"""``python -m tdcompat [doctor] [options]``."""

import sys

from .doctor import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["doctor"]:
        argv = argv[1:]
    sys.exit(main(argv))
