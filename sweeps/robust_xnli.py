"""Baseline, ADV, RS-RP and RS-DA on XNLI with the same seeds (Huang et al. 2021), with the
generalized pairs and the mixed-language set evaluated.

    python sweeps/robust_xnli.py --preset smoke
    python sweeps/robust_xnli.py --preset paper
"""

import sys

from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.spaces import BASELINE

# The paper's L-inf radius grid of ADV and RS-RP, and RS-DA's synonym copies per example.
EPSILONS = (0.001, 0.01, 0.1, 1.0)
RS_DA_M = 3


def paper_points(m: int) -> list[dict]:
    """ADV and RS-RP at every epsilon of the grid, RS-DA (released variant) with m copies."""
    points = [
        {"method": method, "epsilon": epsilon}
        for method in ("adv", "rs_rp")
        for epsilon in EPSILONS
    ]
    return points + [{"method": "rs_da", "m": m, "rs_da_variant": "released"}]


# One point per method for CPU minutes: the grid's smallest radius (the tiny model's word
# embeddings start at std 0.02, and an adversarial L-inf step of 0.01 per coordinate keeps it
# at chance) and 2 copies instead of 3 (RS-DA's epochs grow with m).
SMOKE_POINTS = [
    {"method": "adv", "epsilon": 0.001},
    {"method": "rs_rp", "epsilon": 0.001},
    {"method": "rs_da", "m": 2, "rs_da_variant": "released"},
]

POINTS = {"smoke": [BASELINE, *SMOKE_POINTS], "paper": [BASELINE, *paper_points(RS_DA_M)]}
# The EAR sweep's seeds, so the two sweeps' runs pair up.
SEEDS = ear_xnli.SEEDS
# The paper tests significance with a bootstrapped paired t-test.
SIGNIFICANCE_TEST = "bootstrap"
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """The EAR sweep's trial settings, plus both of the paper's extra evaluation sets."""
    return {
        **ear_xnli.trial_settings(preset, data_dir),
        "generalized_pairs": True,
        "mixed_language": True,
    }


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
