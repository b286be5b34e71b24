"""RS-DA on PAWS-X over the number of synonym copies m (Huang et al. 2021, Fig. 3: the
curve that chose m = 10 for PAWS-X), beside plain fine-tuning; the report's
hyperparameter-response plot draws the metric against m.

    python sweeps/rs_da_m_curve.py --preset smoke
    python sweeps/rs_da_m_curve.py --preset paper --dry-run

The paper's text says only that m <= 10 helps markedly and m > 10 slightly; the figure's
exact m values are not in the text, so the paper preset takes 1, 3, 5, 10, 15 and 20.
"""

import sys

from sweeps import ear_pawsx, robust_pawsx
from sweeps.cli import main
from sweeps.spaces import BASELINE

M_VALUES = {"smoke": (1, 2, 3), "paper": (1, 3, 5, 10, 15, 20)}
POINTS = {
    preset: [BASELINE, *({"method": "rs_da", "m": m, "rs_da_variant": "released"} for m in ms)]
    for preset, ms in M_VALUES.items()
}
SEEDS = robust_pawsx.SEEDS
SIGNIFICANCE_TEST = robust_pawsx.SIGNIFICANCE_TEST
trial_settings = ear_pawsx.trial_settings


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
