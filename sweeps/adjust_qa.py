"""The original model vs the adjusted one vs adjusted + continual alignment, fine-tuned on
English extractive QA and evaluated on XQuAD and MLQA (each with its cross-lingual
directions) and TyDiQA-GoldP, over seeds (Efimov et al. 2023, Table 4).

    python sweeps/adjust_qa.py --preset smoke      # synthetic QA + synthetic parallel data
    python sweeps/adjust_qa.py --preset smoke --data-dir /path/to/xtreme-data
    python sweeps/adjust_qa.py --preset paper      # mBERT, SQuAD, XQuAD, MLQA, TyDiQA (hub)

The `paper` preset is built from the paper's card, `sweeps/papers/efimov2023.yaml`: es, ru,
vi, hi; HuggingFace's run_qa.py budget (lr 3e-5, 2 epochs, length 384, stride 128); MLQA's
test split; the XNLI sweep's adjustment and continual settings, with the card's declared
departures.
"""

import sys

from sweeps import adjust_xnli
from sweeps import experiment as shared
from sweeps.cli import main

PAPER = adjust_xnli.PAPER
# The XNLI sweep's three encoders: the original, the adjusted one, adjusted + continual.
POINTS = {"smoke": adjust_xnli.POINTS["smoke"], "paper": adjust_xnli.paper_points("adjust_qa")}
SEEDS = {"smoke": [0, 1], **shared.paper_seeds(PAPER, "adjust_qa", (shared.PAPER_PRESET,))}
# The paper's test on F1: the paired t-test on per-question scores averaged over seeds.
SIGNIFICANCE_TEST = "ttest"
# None: the report selects on English dev F1.
SELECTION_METRIC = None


# The smoke QA fine-tuning (adjust_xsr's too): synthetic questions, or with --data-dir the
# English TyDiQA-GoldP train file (its last 10% the dev set when the dev file is unlabelled);
# tiny sizes keep a trial short, and windows of 128 leave room for a question and its stride.
SMOKE_QA_TRAINING = {"max_seq_length": 128, "max_train_examples": 200, "epochs": 2.0}


def trial_settings(preset: str, data_dir: str | None) -> dict:
    if preset == "smoke":
        return {
            **adjust_xnli.smoke_task_settings("qa", data_dir, ["vi", "es"]),
            **SMOKE_QA_TRAINING,
            "max_eval_examples": 30,
        }
    return shared.paper_settings(PAPER, "adjust_qa", preset, data_dir)


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
