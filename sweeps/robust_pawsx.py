"""Baseline, ADV, RS-RP and RS-DA on PAWS-X, over seeds: `python sweeps/robust_pawsx.py --preset smoke`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("robust_pawsx"))
