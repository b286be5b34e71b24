"""Baseline, ADV, RS-RP and RS-DA on XNLI, over seeds: `python sweeps/robust_xnli.py --preset smoke`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("robust_xnli"))
