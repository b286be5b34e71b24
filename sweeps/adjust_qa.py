"""Original vs adjusted vs adjusted + continual on extractive QA (XQuAD, MLQA, TyDiQA-GoldP): `python sweeps/adjust_qa.py --preset smoke --data-dir ../shared/data`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("adjust_qa"))
