"""Baseline, ADV, RS-RP and RS-DA on PAWS-X with the same seeds (Huang et al. 2021),
generalized pairs on.

    python sweeps/robust_pawsx.py --preset smoke
    python sweeps/robust_pawsx.py --preset smoke --data-dir ../shared/data

The `paper` preset is built from `sweeps/papers/huang2021.yaml` (m = 10 on PAWS-X).
`--preset released` runs the authors' released RS-DA scripts (uclanlp/Robust-XLT@0bb3c34):
the baseline and RS-DA on their budget, the card's `released` values.
"""

import sys

from sweeps.cli import main
from sweeps.families import huang2021, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

PAPER = huang2021.PAPER
EXPERIMENT = "robust_pawsx"
# paper: the paper's grid; released: the authors' released RS-DA scripts (the card's code).
PRESETS = ("paper", "released")
POINTS = {
    "smoke": [BASELINE, *huang2021.SMOKE_POINTS],
    **{preset: huang2021.paper_points(EXPERIMENT, preset) for preset in PRESETS},
}
SEEDS = {"smoke": smoke_tasks.SMOKE_SEEDS, **shared.paper_seeds(PAPER, EXPERIMENT, PRESETS)}
# The paper tests significance with a bootstrapped paired t-test.
SIGNIFICANCE_TEST = huang2021.SIGNIFICANCE_TEST
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """Smoke: the EAR PAWS-X smoke settings (generalized pairs on); paper: the card's."""
    if preset == "smoke":
        return smoke_tasks.pawsx_smoke_settings(data_dir)
    return shared.paper_settings(PAPER, EXPERIMENT, preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
