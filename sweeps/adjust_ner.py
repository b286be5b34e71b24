"""Original vs adjusted vs adjusted + continual on WikiANN NER: `python sweeps/adjust_ner.py --preset smoke --data-dir ../shared/data`."""

import sys

from sweeps.cli import main

if __name__ == "__main__":
    sys.exit(main("adjust_ner"))
