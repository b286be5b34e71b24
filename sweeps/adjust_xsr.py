"""The original vs the adjusted encoder vs adjusted + continual alignment on Tatoeba sentence
retrieval, each fine-tuned on English extractive QA first, over seeds (Efimov et al. 2023,
Table 5: "we fine-tune the model on a QA task", L119).

    python sweeps/adjust_xsr.py --preset smoke     # synthetic QA, pairs and parallel data
    python sweeps/adjust_xsr.py --preset smoke --data-dir /path/to/xtreme-data
    python sweeps/adjust_xsr.py --preset paper     # mBERT, SQuAD, Tatoeba, WikiMatrix (hub)

The `paper` preset is built from the paper's card, `sweeps/papers/efimov2023.yaml`: es, ru,
vi, hi; adjust_qa's QA fine-tuning (HuggingFace's run_qa.py budget); the XNLI sweep's
adjustment and continual settings, with the card's declared departures (the layer is chosen
on a dev part of Tatoeba, not on the reported queries).
`--preset released` runs the authors' released code (pefimov/cross-lingual-adjustment@04edbc1):
the card's `released` values (random batches, the continual regulariser at weight 1).
"""

import sys

from sweeps.cli import main
from sweeps.families import efimov2023
from sweeps.spec import experiment as shared

PAPER = efimov2023.PAPER
# The three encoders (sweeps/families/efimov2023.py); each trial fine-tunes its encoder on
# QA, then retrieves.
POINTS = {
    "smoke": efimov2023.SMOKE_POINTS,
    **{p: efimov2023.paper_points("adjust_xsr", p) for p in efimov2023.PRESETS},
}
SEEDS = {"smoke": [0, 1], **shared.paper_seeds(PAPER, "adjust_xsr", efimov2023.PRESETS)}
# Paired t-test on per-query reciprocal ranks averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# XSR has no English queries: the report selects on the dev pairs of every language.
SELECTION_METRIC = "dev/pooled/mrr"


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        # The smoke QA fine-tuning adjust_qa runs; retrieval tests at most 400 pairs per language.
        return {
            **efimov2023.smoke_task_settings("xsr", data_dir, ["vi", "de", "es"]),
            **efimov2023.SMOKE_QA_TRAINING,
            "max_eval_examples": 400,
        }
    return shared.paper_settings(PAPER, "adjust_xsr", preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
