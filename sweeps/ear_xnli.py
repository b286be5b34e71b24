"""EAR vs plain fine-tuning on XNLI, over seeds (Ding et al. 2022).

python sweeps/ear_xnli.py --preset smoke
python sweeps/ear_xnli.py --preset paper
python sweeps/ear_xnli.py --preset paper-xlmr
python sweeps/ear_xnli.py --preset released

The paper presets are built from the paper's card, sweeps/papers/ding2022.yaml (its
settings with their sources, and the declared departures that --dry-run prints): mBERT
(paper) or XLM-R base (paper-xlmr, Table 1's XLM-R rows: the baseline, RS-DA and EAR);
released: the authors' released scripts (KB-Ding/EAR@b508ce7), setting for setting.
"""

import sys

from sweeps.cli import main
from sweeps.families import ding2022, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

# The paper card the paper presets are built from (seeds, m, training settings, departures).
PAPER = ding2022.PAPER
# The paper's grid (17 configurations), its chosen and the released scripts' settings (smoke)
# and Table 1's XLM-R rows: sweeps/families/ding2022.py, which the other EAR scripts share.
POINTS = {
    "smoke": [BASELINE, *ding2022.SMOKE_POINTS],
    "paper": shared.paper_points(PAPER, "ear_xnli", "paper", [BASELINE, *ding2022.PAPER_GRID]),
    "released": shared.paper_points(
        PAPER, "ear_xnli", "released", [BASELINE, *ding2022.PAPER_GRID]
    ),
    "paper-xlmr": shared.paper_points(PAPER, "ear_xnli", "paper-xlmr", ding2022.XLMR_POINTS),
}
SEEDS = {
    "smoke": smoke_tasks.SMOKE_SEEDS,
    **shared.paper_seeds(PAPER, "ear_xnli", ("paper", "paper-xlmr", "released")),
}
# Paired t-test on per-example scores averaged over seeds.
SIGNIFICANCE_TEST = ding2022.SIGNIFICANCE_TEST
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None
# Each trial's model is logged (`model/`) so the report can register the selected one:
# ~2 MB for the tiny model, ~700 MB per mBERT trial (--set log_models=true).
LOG_MODELS = {"smoke": True, "paper": False}
# Strategy `search`: phase-1 samples, and the configurations re-run over every seed.
PAPER_SEARCH = {"search_trials": 40, "top_k": 3}
SEARCH = {
    "smoke": {"search_trials": 4, "top_k": 1},
    "paper": PAPER_SEARCH,
    "released": PAPER_SEARCH,
}


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """The smoke budget on synthetic XNLI (with `--data-dir`, local files), or the paper
    card's settings."""
    return ding2022.xnli_trial_settings(preset, data_dir, "ear_xnli")


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
