"""The original model vs the cross-lingually adjusted one vs adjusted + continual alignment,
fine-tuned on English XNLI, over seeds (Efimov et al. 2023), with the mixed-language set.

    python sweeps/adjust_xnli.py --preset smoke     # synthetic XNLI + synthetic parallel data
    python sweeps/adjust_xnli.py --preset paper     # mBERT, XNLI and WikiMatrix from the hub

The `paper` preset is built from the paper's card, `sweeps/papers/efimov2023.yaml`: es, ru,
vi, hi; HuggingFace's run_xnli.py budget (lr 5e-5, 2 epochs); 30K pairs per seed from a
250K WikiMatrix pool; Eq. 2's alpha = 0.01; 5 seeds; fp32; with its declared departures.
An adjusted trial adjusts one encoder per target language, on that language's pairs only
(`xlt_core/language_stages.py`).
`--preset released` runs the authors' released code (pefimov/cross-lingual-adjustment@04edbc1):
the card's `released` values (random batches, the continual regulariser at weight 1).
"""

import sys

from sweeps.cli import main
from sweeps.families import efimov2023
from sweeps.spec import experiment as shared

PAPER = efimov2023.PAPER
# The three encoders (sweeps/families/efimov2023.py): original, adjusted, adjusted + continual.
POINTS = {
    "smoke": efimov2023.SMOKE_POINTS,
    **{p: efimov2023.paper_points("adjust_xnli", p) for p in efimov2023.PRESETS},
}
SEEDS = {"smoke": [0, 1], **shared.paper_seeds(PAPER, "adjust_xnli", efimov2023.PRESETS)}
# Paired t-test on per-example scores averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# None: the report selects on English dev accuracy.
SELECTION_METRIC = None


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        # With --data-dir: real XNLI files in the languages of the shared sample's parallel
        # data (en-vi OpenSubtitles) and its XNLI files.
        base = efimov2023.smoke_task_settings("xnli", data_dir, ["vi", "es", "de"])
        return {**base, "max_eval_examples": 1000} if data_dir else base
    return shared.paper_settings(PAPER, "adjust_xnli", preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
