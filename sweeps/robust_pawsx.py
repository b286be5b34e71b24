"""Baseline, ADV, RS-RP and RS-DA on PAWS-X with the same seeds (Huang et al. 2021),
generalized pairs on.

    python sweeps/robust_pawsx.py --preset smoke
    python sweeps/robust_pawsx.py --preset smoke --data-dir ../shared/data
"""

import sys

from sweeps import ear_pawsx, robust_xnli
from sweeps.cli import main
from sweeps.spaces import BASELINE

# The XNLI sweep's points, with the m = 10 synonym copies the paper draws on PAWS-X.
RS_DA_M = 10
POINTS = {
    "smoke": [BASELINE, *robust_xnli.SMOKE_POINTS],
    "paper": [BASELINE, *robust_xnli.paper_points(RS_DA_M)],
}
SEEDS = {"smoke": [0, 1], "paper": [1, 2, 3, 4, 5]}
# The paper tests significance with a bootstrapped paired t-test.
SIGNIFICANCE_TEST = "bootstrap"
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None
# The EAR sweep's PAWS-X trial settings, generalized pairs on.
trial_settings = ear_pawsx.trial_settings


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
