"""EAR's ablation on XNLI (Ding et al. 2022, Table 3): the full method, without EPT
(alpha = 0), without APT (beta = 0) and without both, beside plain fine-tuning.

    python sweeps/ear_ablation.py --preset smoke
    python sweeps/ear_ablation.py --preset paper --dry-run

The paper ablates on XNLI only (its Table 3); PAWS-X has no ablation table.
The `released` preset runs the authors' released scripts (KB-Ding/EAR@b508ce7) setting for
setting: the card's `released` values, each departure from the paper printed by --dry-run.
"""

import sys

from sweeps.cli import main
from sweeps.families import ding2022, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

FULL = {"method": "ear", **ding2022.PAPER_SETTING}
# Table 3's rows: EPT+APT, -EPT, -APT, -EPT -APT. The robust target (CE on x^a) stays.
ABLATION = [
    FULL,
    {**FULL, "alpha": 0.0},
    {**FULL, "beta": 0.0},
    {**FULL, "alpha": 0.0, "beta": 0.0},
]

# The paper card the paper presets are built from.
PAPER = ding2022.PAPER
PRESETS = ("paper", "released")
POINTS = {
    "smoke": [BASELINE, *ABLATION],
    **{p: shared.paper_points(PAPER, "ear_ablation", p, [BASELINE, *ABLATION]) for p in PRESETS},
}
SEEDS = {"smoke": smoke_tasks.SMOKE_SEEDS, **shared.paper_seeds(PAPER, "ear_ablation", PRESETS)}
SIGNIFICANCE_TEST = ding2022.SIGNIFICANCE_TEST


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """The EAR XNLI smoke budget, or the paper card's settings of this experiment."""
    return ding2022.xnli_trial_settings(preset, data_dir, "ear_ablation")


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
