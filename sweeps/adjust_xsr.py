"""Original vs adjusted encoder on Tatoeba sentence retrieval: `python sweeps/adjust_xsr.py --preset smoke --data-dir ../shared/data`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("adjust_xsr"))
