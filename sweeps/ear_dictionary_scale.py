"""EAR with a smaller synonym dictionary, on XNLI (Ding et al. 2022, Table 6 and Fig. 6):
the counter-fitted table scaled to 1.0, 0.75, 0.5 and 0.25 of its 49,975 entries (nested
subsets, the same for every seed: `dictionary_scale`), beside plain fine-tuning.

    python sweeps/ear_dictionary_scale.py --preset smoke
    python sweeps/ear_dictionary_scale.py --preset paper --dry-run

The smoke preset scales the synthetic data's own small table the same way.
The `released` preset runs the authors' released scripts (KB-Ding/EAR@b508ce7) setting for
setting: the card's `released` values, each departure from the paper printed by --dry-run.
"""

import sys

from sweeps.cli import main
from sweeps.families import ding2022, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

SCALES = (1.0, 0.75, 0.5, 0.25)
SCALED = [
    {"method": "ear", **ding2022.PAPER_SETTING, "dictionary_scale": scale} for scale in SCALES
]

# The paper card the paper presets are built from.
PAPER = ding2022.PAPER
PRESETS = ("paper", "released")
POINTS = {
    "smoke": [BASELINE, SCALED[0], SCALED[2]],
    **{
        p: shared.paper_points(PAPER, "ear_dictionary_scale", p, [BASELINE, *SCALED])
        for p in PRESETS
    },
}
SEEDS = {
    "smoke": smoke_tasks.SMOKE_SEEDS,
    **shared.paper_seeds(PAPER, "ear_dictionary_scale", PRESETS),
}
SIGNIFICANCE_TEST = ding2022.SIGNIFICANCE_TEST


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """The EAR XNLI smoke budget, or the paper card's settings of this experiment."""
    return ding2022.xnli_trial_settings(preset, data_dir, "ear_dictionary_scale")


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
