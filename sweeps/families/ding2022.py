"""What the EAR scripts share (Ding et al. 2022; card `sweeps/papers/ding2022.yaml`):
`ear_xnli`, `ear_pawsx`, `ear_ablation`, `ear_dictionary_scale`, `ear_source_language` and
`ear_targets` take the paper's grid, its chosen setting and the XNLI trial settings here."""

from sweeps.families.smoke_tasks import xnli_smoke_settings
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE, unique

# The paper card the paper presets are built from (seeds, m, training settings, departures).
PAPER = "ding2022"
# Paired t-test on per-example scores averaged over seeds.
SIGNIFICANCE_TEST = "ttest"

# The paper's grid: three one-factor sweeps around its chosen setting, not a cross product.
# Layer at alpha = beta = 1; beta at alpha = 1; alpha at beta = 0.1 (layer 6 where the paper
# fixes it); plus the released scripts' alpha = 0.1, beta = 1 (KB-Ding/EAR@b508ce7
# scripts/bert-ept-apt-xnli.sh:13-15: ALPHA=0.1, BETA=1, AP_LAYER=5, which
# models/bert_ept_apt.py:85 reads as attentions[5], the sixth layer).
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


def xnli_trial_settings(preset: str, data_dir: str | None, experiment: str) -> dict:
    """What every trial of an XNLI experiment of the paper shares: the smoke budget, or the
    paper card's settings for `experiment`."""
    if preset == "smoke":
        return xnli_smoke_settings(data_dir)
    return shared.paper_settings(PAPER, experiment, preset, data_dir)
