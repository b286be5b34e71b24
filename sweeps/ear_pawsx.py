"""EAR vs plain fine-tuning on PAWS-X, over seeds (Ding et al. 2022).

python sweeps/ear_pawsx.py --preset smoke
python sweeps/ear_pawsx.py --preset smoke --data-dir ../shared/data
"""

import sys

from sweeps import ear_xnli
from sweeps import experiment as shared
from sweeps.cli import main
from sweeps.spaces import BASELINE, with_setting

# The paper draws m = 10 synonym copies per example on PAWS-X; otherwise the XNLI grid.
M = 10
POINTS = {
    "smoke": [BASELINE, *ear_xnli.SMOKE_POINTS],
    "paper": [BASELINE, *with_setting(ear_xnli.PAPER_GRID, "m", M)],
}
SEEDS = {"smoke": [0, 1], "paper": [1, 2, 3, 4, 5]}
# Paired t-test on per-example scores averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """PAWS-X trial settings, generalized pairs on (both papers evaluate PAWS-X); robust_pawsx
    trains with the same."""
    if preset == "smoke":
        base = {
            **shared.SMOKE_TRAINING,
            "task": "pawsx",
            "target_langs": list(shared.SYNTHETIC_TARGETS),
            "generalized_pairs": True,
        }
        base.update(shared.data_settings(data_dir, default_source="synthetic"))
        if data_dir:
            # The shared sample has PAWS-X dev files only: cut them into disjoint train /
            # dev (selection) / test parts by example index (see xlt_core/data/loading.py).
            base.update({"split_dev_files": True, "target_langs": list(shared.LOCAL_PAWSX_TARGETS)})
        return base
    base = {
        **shared.PAPER_TRAINING,
        "task": "pawsx",
        "target_langs": list(shared.PAWSX_TARGETS),
        "generalized_pairs": True,
    }
    base.update(shared.data_settings(data_dir, default_source="hub"))
    return base


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
