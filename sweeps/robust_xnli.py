"""Baseline, ADV, RS-RP and RS-DA on XNLI with the same seeds (Huang et al. 2021), with the
generalized pairs and the mixed-language set evaluated.

    python sweeps/robust_xnli.py --preset smoke
    python sweeps/robust_xnli.py --preset paper

The `paper` preset is built from the paper's card, `sweeps/papers/huang2021.yaml` (XTREME's
budget the paper follows, 10 seeds, ADV and RS-RP at Enc(x), m = 3, fp32), with its declared
departures.
"""

import sys

from sweeps import ear_xnli
from sweeps import experiment as shared
from sweeps.cli import main
from sweeps.spaces import BASELINE

PAPER = "huang2021"
EXPERIMENT = "robust_xnli"
# The paper's L-inf radius grid of ADV and RS-RP (huang2021.txt L166: "The size of robust
# regions is searched from {0.001,0.01,0.1,1.0}", and the same for RS-RP's ball).
EPSILONS = (0.001, 0.01, 0.1, 1.0)


def paper_points(experiment: str) -> list[dict]:
    """The baseline, ADV and RS-RP at every epsilon of the grid, and RS-DA, with the card's
    hyperparameters of the experiment (m = 3 on XNLI, 10 on PAWS-X; the ADV solver; the
    RS-DA variant)."""
    points = [
        {"method": method, "epsilon": epsilon}
        for method in ("adv", "rs_rp")
        for epsilon in EPSILONS
    ]
    return shared.paper_points(PAPER, experiment, "paper", [BASELINE, *points, {"method": "rs_da"}])


# One point per method for CPU minutes, at the paper's site (TrialConfig's default) as the
# paper preset runs: the grid's smallest radius (on the tiny model's Enc(x), ADV at 0.1 stays
# at chance, 0.001 and 0.01 learn: docs/design.md) and 2 copies instead of 3 (RS-DA's epochs
# grow with m).
SMOKE_POINTS = [
    {"method": "adv", "epsilon": 0.001},
    {"method": "rs_rp", "epsilon": 0.001},
    {"method": "rs_da", "m": 2, "rs_da_variant": "released"},
]

POINTS = {"smoke": [BASELINE, *SMOKE_POINTS], "paper": paper_points(EXPERIMENT)}
# Smoke: the EAR sweep's seeds, so the two smoke sweeps' runs pair up; paper: the card's 10.
SEEDS = {"smoke": ear_xnli.SEEDS["smoke"], **shared.paper_seeds(PAPER, EXPERIMENT, ("paper",))}
# The paper tests significance with a bootstrapped paired t-test (Tables 1-2 captions).
SIGNIFICANCE_TEST = "bootstrap"
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """Smoke: the EAR smoke sweep's settings with both extra evaluation sets; paper: the card's."""
    if preset == "smoke":
        return {
            **ear_xnli.trial_settings(preset, data_dir),
            "generalized_pairs": True,
            "mixed_language": True,
        }
    return shared.paper_settings(PAPER, EXPERIMENT, preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
