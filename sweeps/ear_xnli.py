"""EAR vs plain fine-tuning on XNLI, over seeds (Ding et al. 2022).

python sweeps/ear_xnli.py --preset smoke
python sweeps/ear_xnli.py --preset paper
python sweeps/ear_xnli.py --preset paper-xlmr

The paper presets are built from the paper's card, sweeps/papers/ding2022.yaml (its
settings with their sources, and the declared departures that --dry-run prints): mBERT
(paper) or XLM-R base (paper-xlmr, Table 1's XLM-R rows: the baseline, RS-DA and EAR).
"""

import sys

from sweeps import experiment as shared
from sweeps.cli import main
from sweeps.spaces import BASELINE, unique

# The paper's grid: three one-factor sweeps around its chosen setting, not a cross product.
# Layer at alpha = beta = 1; beta at alpha = 1; alpha at beta = 0.1 (layer 6 where the paper
# fixes it); plus the released scripts' alpha = 0.1, beta = 1.
LAYERS = (3, 6, 9, 12)
BETAS = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
ALPHAS = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8)
PAPER_SETTING = {"alpha": 1.0, "beta": 0.1, "layer": 6}
RELEASED_SETTING = {"alpha": 0.1, "beta": 1.0, "layer": 6}

PAPER_GRID = unique(
    [
        *({"method": "ear", "alpha": 1.0, "beta": 1.0, "layer": layer} for layer in LAYERS),
        *({"method": "ear", "alpha": 1.0, "beta": beta, "layer": 6} for beta in BETAS),
        *({"method": "ear", "alpha": alpha, "beta": 0.1, "layer": 6} for alpha in ALPHAS),
        {"method": "ear", **PAPER_SETTING},
        {"method": "ear", **RELEASED_SETTING},
    ]
)  # 17 configurations
# Smoke: the paper's and the released scripts' settings. Every grid point is one `--set`
# away: --set alpha=.. --set beta=.. --set layer=..
SMOKE_POINTS = [{"method": "ear", **PAPER_SETTING}, {"method": "ear", **RELEASED_SETTING}]
# Table 1's XLM-R rows: "XLM-R*", "+RS-DA*" (huang2021's released variant) and "+Ours". All
# three train on the sweep's budget: the card declares where "+RS-DA*"'s leaves huang2021's.
XLMR_POINTS = [
    BASELINE,
    {"method": "rs_da", "rs_da_variant": "released"},
    {"method": "ear", **PAPER_SETTING},
]

# The paper card the paper presets are built from (seeds, m, training settings, departures).
PAPER = "ding2022"
POINTS = {
    "smoke": [BASELINE, *SMOKE_POINTS],
    "paper": shared.paper_points(PAPER, "ear_xnli", "paper", [BASELINE, *PAPER_GRID]),
    "paper-xlmr": shared.paper_points(PAPER, "ear_xnli", "paper-xlmr", XLMR_POINTS),
}
SEEDS = {"smoke": [0, 1], **shared.paper_seeds(PAPER, "ear_xnli", ("paper", "paper-xlmr"))}
# Paired t-test on per-example scores averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None
# Each trial's model is logged (`model/`) so the report can register the selected one:
# ~2 MB for the tiny model, ~700 MB per mBERT trial (--set log_models=true).
LOG_MODELS = {"smoke": True, "paper": False}
# Strategy `search`: phase-1 samples, and the configurations re-run over every seed.
SEARCH = {"smoke": {"search_trials": 4, "top_k": 1}, "paper": {"search_trials": 40, "top_k": 3}}


def trial_settings(preset: str, data_dir: str | None, experiment: str = "ear_xnli") -> dict:
    """What every trial of the sweep shares: the smoke budget on synthetic data, or the
    paper card's settings for `experiment` (ding2022's XNLI experiments share this)."""
    if preset != "smoke":
        return shared.paper_settings(PAPER, experiment, preset, data_dir)
    base = {
        **shared.SMOKE_TRAINING,
        "task": "xnli",
        "target_langs": list(shared.SYNTHETIC_TARGETS),
    }
    base.update(shared.data_settings(data_dir, default_source="synthetic"))
    if data_dir:
        # The real training sample (999 pairs) gives the tiny model little to learn from;
        # evaluating on 1,000 test pairs per language keeps the smoke run short.
        base["max_eval_examples"] = 1000
    return base


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
