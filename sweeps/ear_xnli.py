"""EAR vs plain fine-tuning on XNLI, over seeds: `python sweeps/ear_xnli.py --preset smoke`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("ear_xnli"))
