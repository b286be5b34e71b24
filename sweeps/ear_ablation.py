"""EAR's ablation on XNLI (Ding et al. 2022, Table 3): the full method, without EPT
(alpha = 0), without APT (beta = 0) and without both, beside plain fine-tuning.

    python sweeps/ear_ablation.py --preset smoke
    python sweeps/ear_ablation.py --preset paper --dry-run

The paper ablates on XNLI only (its Table 3); PAWS-X has no ablation table.
"""

import sys

from sweeps import ear_xnli
from sweeps import experiment as shared
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

# The paper card the paper presets are built from.
PAPER = ear_xnli.PAPER
PRESETS = ("paper",)
POINTS = {
    "smoke": [BASELINE, *ABLATION],
    "paper": shared.paper_points(PAPER, "ear_ablation", "paper", [BASELINE, *ABLATION]),
}
SEEDS = {"smoke": ear_xnli.SEEDS["smoke"], **shared.paper_seeds(PAPER, "ear_ablation", PRESETS)}
SIGNIFICANCE_TEST = ear_xnli.SIGNIFICANCE_TEST


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """ear_xnli's smoke settings, or the paper card's settings of this experiment."""
    return ear_xnli.trial_settings(preset, data_dir, experiment="ear_ablation")


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
