"""EAR's ablation on XNLI (Ding et al. 2022, Table 3): the full method, without EPT
(alpha = 0), without APT (beta = 0) and without both, beside plain fine-tuning.

    python sweeps/ear_ablation.py --preset smoke
    python sweeps/ear_ablation.py --preset paper --dry-run

The paper ablates on XNLI only (its Table 3); PAWS-X has no ablation table.
"""

import sys

from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.spaces import BASELINE

FULL = {"method": "ear", **ear_xnli.PAPER_SETTING}
# Table 3's rows: EPT+APT, -EPT, -APT, -EPT -APT. The robust target (CE on x^a) stays.
ABLATION = [
    FULL,
    {**FULL, "alpha": 0.0},
    {**FULL, "beta": 0.0},
    {**FULL, "alpha": 0.0, "beta": 0.0},
]

POINTS = {"smoke": [BASELINE, *ABLATION], "paper": [BASELINE, *ABLATION]}
SEEDS = ear_xnli.SEEDS
SIGNIFICANCE_TEST = ear_xnli.SIGNIFICANCE_TEST
trial_settings = ear_xnli.trial_settings


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
