"""EAR with a smaller synonym dictionary, on XNLI (Ding et al. 2022, Table 6 and Fig. 6):
the counter-fitted table scaled to 1.0, 0.75, 0.5 and 0.25 of its 49,975 entries (nested
subsets, the same for every seed: `dictionary_scale`), beside plain fine-tuning.

    python sweeps/ear_dictionary_scale.py --preset smoke
    python sweeps/ear_dictionary_scale.py --preset paper --dry-run

The smoke preset scales the synthetic data's own small table the same way.
"""

import sys

from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.spaces import BASELINE

SCALES = (1.0, 0.75, 0.5, 0.25)
SCALED = [
    {"method": "ear", **ear_xnli.PAPER_SETTING, "dictionary_scale": scale} for scale in SCALES
]

POINTS = {"smoke": [BASELINE, SCALED[0], SCALED[2]], "paper": [BASELINE, *SCALED]}
SEEDS = ear_xnli.SEEDS
SIGNIFICANCE_TEST = ear_xnli.SIGNIFICANCE_TEST
trial_settings = ear_xnli.trial_settings


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
