"""Names that cross the layers: MLflow tags, the metric-key format, the hyperparameter tag.

`xlt_core` writes metric keys, `sweeps` writes tags and `analysis` reads both; each name
has its one home here. This package imports nothing, so every layer may import it
(`analysis` stays free of torch, Ray and `xlt_core`).
"""

from __future__ import annotations

import re

# --- MLflow tags -------------------------------------------------------------------------
# Every tag this project sets is named `xlt.<name>` (TAG_PREFIX); the others are MLflow's own
# (`mlflow.*`: run name, nesting, source, git commit). Stores of 0.2.0 and earlier used bare
# names for some (`method`, `phase`, `failure`, ...): CHANGELOG.md.
TAG_PREFIX = "xlt."
ROLE_TAG = "xlt.role"  # "parent" (one per sweep invocation) or "trial" (one per trial)
PARENT_ROLE = "parent"
TRIAL_ROLE = "trial"
PARENT_RUN_TAG = "mlflow.parentRunId"  # MLflow's own nesting tag
TRIAL_ID_TAG = "xlt.ray_trial_id"  # a restarted trial finds its run by it
PHASE_TAG = "xlt.phase"  # grid | search | final | confirm
# The confirmation phase every strategy ends with: the selected configuration and the
# baseline re-run on fresh seeds, on which the verdict is decided (its runs never take part in
# the selection). The parent's CONFIRM_POINTS_TAG holds the two points it runs (JSON), so that
# a resumed sweep confirms the same selection.
CONFIRM_PHASE = "confirm"
CONFIRM_POINTS_TAG = "xlt.confirm_points"
# A strategy that decides its own winner (the seed race: sweeps/strategies/race.py) names its
# config_key on the parent run: the report selects it, not the best dev mean over every run
# (a race's dropped configurations ran fewer seeds).
WINNER_TAG = "xlt.winner"
# The parent run's artifact holding its sweep file (sweeps/planning/sweep_file.py): what
# `--from-run` reads and `--resume` compares with.
SWEEP_FILE_ARTIFACT = "sweep_config.yaml"
# Parent-run tags that let `--resume` find an interrupted sweep and continue it.
SWEEP_KEY_TAG = "xlt.sweep_key"
RAY_NAME_TAG = "xlt.ray_name"
STORAGE_TAG = "xlt.storage_path"
STAGE_TAG = "xlt.stage"
COMPLETE_TAG = "xlt.complete"  # every trial of the sweep ended (set before the report)
REPORTED_TAG = "xlt.reported"  # the report was written (a resume after it has nothing to do)
# A run that a SIGINT/SIGTERM to the driver stopped: status KILLED and this tag set to
# INTERRUPTED (a trial run, or a parent whose trials did not all end). ASHA's early stops are
# KILLED with STOPPED_EARLY_TAG instead. `--resume` clears it and continues the run.
RUN_STATUS_TAG = "xlt.status"
INTERRUPTED = "interrupted"
STOPPED_EARLY_TAG = "xlt.stopped_early"
# Set on the parent of a two-phase search: only that phase's trials are its results.
REPORT_PHASE_TAG = "xlt.report_phase"
# Set on the parent of a paper preset's sweep: the paper card it was built from
# (sweeps/papers/<card>.yaml), and the departures from the paper it made (`--set` included),
# a JSON artifact {"paper", "citation", "departures": [{"setting", "paper", "ours", "reason"}]}.
PAPER_TAG = "xlt.paper"
DEPARTURES_ARTIFACT = "paper/departures.json"
FAILURE_TAG = "xlt.failure"
# A trial run that failed once, then finished on a retry: the earlier failure, kept.
PREVIOUS_FAILURE_TAG = "xlt.previous_failure"
# How a trial run's failure tag starts when its loss stopped being finite: the name of
# xlt_core.errors.TrainingDiverged (sweeps/running/trainable.py writes it; analysis reads it).
DIVERGED_FAILURE = "TrainingDiverged"
# A trial run's identity: its training objective, what happened to its encoder, the hash of
# every setting but the seed (seeds of one configuration share it) and a readable label.
METHOD_TAG = "xlt.method"
ADAPTATION_TAG = "xlt.adaptation"
CONFIG_KEY_TAG = "xlt.config_key"
CONFIG_LABEL_TAG = "xlt.config_label"
# Comma-separated names of the trial's hyperparameters (its method's and its adaptation's),
# so that analysis learns them from what the sweep recorded rather than from a copy.
HYPERPARAMETERS_TAG = "xlt.hyperparameters"

# The configuration every sweep compares against: plain fine-tuning of the original encoder.
BASELINE_METHOD = "finetune"
NO_ADAPTATION = "none"

# --- Metric keys ------------------------------------------------------------------------
# Evaluation metrics are `<split>/<lang>/<metric>` (`dev/en/accuracy`, `test/en-es/accuracy`,
# `xquad/es/f1`); training curves are `train/<name>`, never results.
TRAINING_SPLIT = "train"
# The dev selection metric at each evaluation during training (named apart from the final
# `dev/<lang>/<metric>`, the selected model's): what Tune's scheduler ranks running trials by.
DEV_CURVE = "train/dev_accuracy"
# A trial that kept its checkpoint by test (the released EAR scripts' rule, --preset released
# only) logs this value of its `selection_dev` param: the report claims nothing from it.
SELECTION_DEV_PARAM = "selection_dev"
SELECTION_ON_TEST = "test"
_METRIC_KEY = re.compile(r"^(?P<split>[^/]+)/(?P<lang>[^/]+)/(?P<metric>[^/]+)$")


def metric_key(split: str, lang: str, metric: str) -> str:
    """The key of an evaluation metric, e.g. `metric_key("test", "es", "accuracy")`."""
    return f"{split}/{lang}/{metric}"


def parse_metric_key(key: str) -> tuple[str, str, str] | None:
    """(split, lang, metric) of an evaluation metric key; None for anything else."""
    match = _METRIC_KEY.match(key)
    if match is None or match["split"] == TRAINING_SPLIT:
        return None
    return match["split"], match["lang"], match["metric"]


# The trial-run artifact folder of per-example scores, one `<split>-<lang>.json` per set.
PREDICTIONS_DIR = "predictions"
# A per-example artifact's field: true when its split's languages are translations of one item
# set, example i the same item in each (the task's declared `parallel_sets`), false when they
# are independent; absent from the artifacts of 0.5.0 and earlier. Where true, the report tests
# the mean over the languages on items (analysis/parallel_items.py).
PARALLEL_ITEMS_FIELD = "parallel_items"
# A trial's probing artifacts (xlt_core/probing.py): `probing/<state>.png` and
# `probing/<state>_distances.json` per model state, in efimov2023 Fig. 2's order.
PROBING_STATES = ("original", "adjusted", "finetuned", "adjusted_finetuned", "adjusted_continual")
PROBING_DISTANCES = "probing/{state}_distances.json"


def example_scores_key(split: str, lang: str) -> str:
    """The name of a per-example scores artifact: `predictions/<split>-<lang>.json`."""
    return f"{split}-{lang}"
