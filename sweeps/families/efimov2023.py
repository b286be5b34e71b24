"""What the adjustment scripts share (Efimov et al. 2023; card `sweeps/papers/efimov2023.yaml`):
`adjust_xnli`, `adjust_ner`, `adjust_qa` and `adjust_xsr` compare the same three encoders
(the original, the adjusted one, adjusted + continual alignment) with the smoke settings
here."""

from sweeps.spec import experiment as shared

PAPER = "efimov2023"
# The card's presets: the paper's and the authors' released code's.
PRESETS = (shared.PAPER_PRESET, "released")
# The smoke presets adjust a tiny model trained from scratch, so with a larger adjustment
# learning rate than the paper's (its card: Cao et al.'s 5e-5); the other adjustment and
# continual hyperparameters are the card's.
SMOKE_ADJUSTMENT = {"adjust_epochs": 1.0, "adjust_learning_rate": 1e-3, "adjust_reg_weight": 1.0}
CONTINUAL = {"continual_alpha": 0.01, "continual_reg_weight": 0.01}


def adaptation_points(adjust: dict) -> dict[str, dict]:
    """Plain fine-tuning of the three encoders, by adaptation: the original (the baseline),
    the adjusted one, and the adjusted one with the continual alignment loss. Every point
    names its hyperparameters, so `--set adjust_learning_rate=...` fixes that axis in both
    adjusted points."""
    return {
        "none": {"method": "finetune"},
        "adjusted": {"method": "finetune", "adaptation": "adjusted", **adjust},
        "adjusted_continual": {
            "method": "finetune",
            "adaptation": "adjusted_continual",
            **adjust,
            **CONTINUAL,
        },
    }


def paper_points(experiment: str, preset: str = shared.PAPER_PRESET) -> list[dict]:
    """The three encoders with the card's adjustment and continual hyperparameters for a
    preset (the released code's continual regulariser weighs 1)."""
    points = list(adaptation_points({}).values())
    return shared.paper_points(PAPER, experiment, preset, points)


# The three encoders with the smoke adjustment.
SMOKE_POINTS = list(adaptation_points(SMOKE_ADJUSTMENT).values())
# The smoke QA fine-tuning of adjust_qa and adjust_xsr: synthetic questions, or with
# --data-dir the English TyDiQA-GoldP train file (its last 10% the dev set when the dev file
# is unlabelled); tiny sizes keep a trial short, and windows of 128 leave room for a question
# and its stride.
SMOKE_QA_TRAINING = {"max_seq_length": 128, "max_train_examples": 200, "epochs": 2.0}


def smoke_task_settings(task: str, data_dir: str | None, local_targets: list[str]) -> dict:
    """The smoke settings every adjust sweep shares: the task's synthetic data in the
    pseudo-languages with synthetic parallel data (no download); or, with `--data-dir`, local
    data in the XTREME layout in `local_targets` and the line-aligned parallel files under its
    `parallel/`. Each script adds its sizes."""
    base = {**shared.SMOKE_TRAINING, "task": task, "parallel_max_sentences": 1000}
    if not data_dir:
        return {
            **base,
            "data_source": "synthetic",
            "target_langs": list(shared.SYNTHETIC_TARGETS),
            "parallel_data": "synthetic",
        }
    return {
        **base,
        "data_source": "local",
        "data_dir": data_dir,
        "target_langs": list(local_targets),
        "parallel_data": f"{data_dir}/parallel",
    }
