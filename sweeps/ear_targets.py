"""EAR with one target replaced, on XNLI (Ding et al. 2022, Tables 4 and A.4): EPT + APT
(the method), NT + APT (the Noise Target, Gaussian noise on the copies' word embeddings,
in place of EPT) and EPT + SRPT (the Sentence Representation Pull Target, mean-pooled
middle-layer states, in place of APT), beside plain fine-tuning.

    python sweeps/ear_targets.py --preset smoke
    python sweeps/ear_targets.py --preset paper --dry-run

The paper does not give NT's noise scale: the paper preset sweeps noise_sigma over 0.001,
0.01 and 0.1 (the robust-training paper's radius grid without its 1.0, which would bury
mBERT's word embeddings, whose entries are of order 0.05); the smoke preset uses the
default 0.01. SRPT reads layer 6, mBERT's "middle layer".
"""

import sys

from sweeps.cli import main
from sweeps.families import ding2022, smoke_tasks
from sweeps.spec import experiment as shared
from sweeps.spec.spaces import BASELINE

NOISE_SIGMAS = (0.001, 0.01, 0.1)
EPT_APT = {"method": "ear", **ding2022.PAPER_SETTING}
NT_APT = {"method": "ear_nt", "beta": 0.1, "layer": 6}
EPT_SRPT = {"method": "ear_srpt", **ding2022.PAPER_SETTING}

PAPER_POINTS = [
    BASELINE,
    EPT_APT,
    *({**NT_APT, "noise_sigma": sigma} for sigma in NOISE_SIGMAS),
    EPT_SRPT,
]
# paper: mBERT (Table 4); paper-xlmr: XLM-R base (Table A.4), the same rows.
# The paper card the paper presets are built from.
PAPER = ding2022.PAPER
PRESETS = ("paper", "paper-xlmr")
POINTS = {
    "smoke": [BASELINE, EPT_APT, NT_APT, EPT_SRPT],
    **{p: shared.paper_points(PAPER, "ear_targets", p, PAPER_POINTS) for p in PRESETS},
}
SEEDS = {"smoke": smoke_tasks.SMOKE_SEEDS, **shared.paper_seeds(PAPER, "ear_targets", PRESETS)}
SIGNIFICANCE_TEST = ding2022.SIGNIFICANCE_TEST


def trial_settings(preset: str, data_dir: str | None) -> dict:
    """The EAR XNLI smoke budget, or the paper card's settings of this experiment."""
    return ding2022.xnli_trial_settings(preset, data_dir, "ear_targets")


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
