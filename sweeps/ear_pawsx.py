"""EAR vs plain fine-tuning on PAWS-X, over seeds (Ding et al. 2022).

python sweeps/ear_pawsx.py --preset smoke
python sweeps/ear_pawsx.py --preset smoke --data-dir ../shared/data
python sweeps/ear_pawsx.py --preset paper --dry-run

The paper presets (paper: mBERT; paper-xlmr: XLM-R base, Table 2's XLM-R rows) are built
from the paper's card, sweeps/papers/ding2022.yaml: the XNLI grid with the m = 10 synonym
copies the paper draws on PAWS-X, and its training settings and declared departures.
The `released` preset runs the authors' released scripts (KB-Ding/EAR@b508ce7) setting for
setting: the card's `released` values, each departure from the paper printed by --dry-run.
"""

import sys

from sweeps.cli import main
from sweeps.families import ding2022, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

PAPER = ding2022.PAPER
# The XNLI grids, with the card's m (10 copies per example on PAWS-X).
POINTS = {
    "smoke": [BASELINE, *ding2022.SMOKE_POINTS],
    "paper": shared.paper_points(PAPER, "ear_pawsx", "paper", [BASELINE, *ding2022.PAPER_GRID]),
    "released": shared.paper_points(
        PAPER, "ear_pawsx", "released", [BASELINE, *ding2022.PAPER_GRID]
    ),
    "paper-xlmr": shared.paper_points(PAPER, "ear_pawsx", "paper-xlmr", ding2022.XLMR_POINTS),
}
SEEDS = {
    "smoke": smoke_tasks.SMOKE_SEEDS,
    **shared.paper_seeds(PAPER, "ear_pawsx", ("paper", "paper-xlmr", "released")),
}
# Paired t-test on per-example scores averaged over seeds.
SIGNIFICANCE_TEST = ding2022.SIGNIFICANCE_TEST
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """PAWS-X trial settings, generalized pairs on (huang2021 evaluates them; the card
    declares them for the paper presets): the smoke budget, or the paper card's."""
    if preset == "smoke":
        return smoke_tasks.pawsx_smoke_settings(data_dir)
    return shared.paper_settings(PAPER, "ear_pawsx", preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
