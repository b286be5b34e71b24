"""EAR vs plain fine-tuning on PAWS-X, over seeds: `python sweeps/ear_pawsx.py --preset smoke`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("ear_pawsx"))
