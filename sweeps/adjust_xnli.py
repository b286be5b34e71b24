"""Original vs adjusted vs adjusted + continual on XNLI: `python sweeps/adjust_xnli.py --preset smoke`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("adjust_xnli"))
