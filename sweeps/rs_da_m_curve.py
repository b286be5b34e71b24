"""RS-DA on PAWS-X over the number of synonym copies m (Huang et al. 2021, Fig. 3: the
curve that chose m = 10 for PAWS-X), beside plain fine-tuning; the report's
hyperparameter-response plot draws the metric against m.

    python sweeps/rs_da_m_curve.py --preset smoke
    python sweeps/rs_da_m_curve.py --preset paper --dry-run

The paper's text says only that m <= 10 helps markedly and m > 10 slightly; the figure's
exact m values are not in the text, so the paper preset takes 1, 3, 5, 10, 15 and 20 (a
declared departure of `sweeps/papers/huang2021.yaml`, which the preset is built from).
`--preset released` trains every m on the released RS-DA script's budget (3 epochs on PAWS-X).
"""

import sys

from sweeps.cli import main
from sweeps.families import huang2021, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

PAPER = huang2021.PAPER
EXPERIMENT = "rs_da_m_curve"
M_VALUES = {"smoke": (1, 2, 3), "paper": (1, 3, 5, 10, 15, 20)}


def m_points(ms: tuple[int, ...]) -> list[dict]:
    return [BASELINE, *({"method": "rs_da", "m": m, "rs_da_variant": "released"} for m in ms)]


# paper: the card's budget; released: the authors' released RS-DA scripts' (PAWS-X's 3 epochs).
PRESETS = ("paper", "released")
POINTS = {
    "smoke": m_points(M_VALUES["smoke"]),
    **{
        preset: shared.paper_points(PAPER, EXPERIMENT, preset, m_points(M_VALUES["paper"]))
        for preset in PRESETS
    },
}
SEEDS = {"smoke": smoke_tasks.SMOKE_SEEDS, **shared.paper_seeds(PAPER, EXPERIMENT, PRESETS)}
SIGNIFICANCE_TEST = huang2021.SIGNIFICANCE_TEST


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        return smoke_tasks.pawsx_smoke_settings(data_dir)
    return shared.paper_settings(PAPER, EXPERIMENT, preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
