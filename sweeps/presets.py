"""Presets: what a sweep script runs when the user gives no overrides.

`smoke` runs offline in minutes on two CPU cores (tiny BERT, synthetic data unless a data
directory is given); `paper` is the papers' setting (mBERT, hub data, 5 seeds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sweeps import spaces
from xlt_core.errors import ConfigError

XNLI_TARGETS = ("ar", "bg", "de", "el", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")
PAWSX_TARGETS = ("de", "es", "fr", "ja", "ko", "zh")
SYNTHETIC_TARGETS = ["es", "de", "ru"]
# The shared PAWS-X sample (../shared/data/pawsx) holds dev files only, in these targets.
LOCAL_PAWSX_TARGETS = ["de", "es", "fr"]
SEEDS = {"smoke": [0, 1], "paper": [1, 2, 3, 4, 5]}


@dataclass
class SweepSpec:
    """One sweep: common trial settings, the method configurations, and the seeds."""

    experiment: str
    base: dict
    points: list[dict]
    seeds: list[int]
    # None: 1 CPU, or with --trials-per-gpu a share of a GPU node's CPUs (sweeps/resources.py).
    cpus_per_trial: float | None = None
    preset: str = "smoke"
    strategy: str = "grid"
    # The paper's test for this task, read by the report: ttest (paired t-test on per-example
    # scores averaged over seeds), permutation (NER), bootstrap (robust training).
    significance_test: str = "ttest"
    # Log each trial's trained model (`save_pretrained` folder) as its run's `model/`
    # artifact, so the report can register the selected one. On for smoke (the tiny model
    # is ~2 MB); off for paper presets (~700 MB per mBERT trial): `--set log_models=true`.
    log_models: bool = False
    # The dev metric the report selects on (parent-run param); None: English dev's.
    selection_metric: str | None = None
    extra_tags: dict = field(default_factory=dict)
    # Strategy `search` (sweeps/search.py): phase-1 samples, configurations re-run in phase 2,
    # and the method hyperparameters fixed with --set (constants in the search space).
    search_trials: int = 4
    top_k: int = 1
    fixed_axes: dict = field(default_factory=dict)


SMOKE_TRAINING = {
    "model": "tiny",
    "learning_rate": 1e-3,
    "batch_size": 32,
    "epochs": 3.0,
    "evals_per_epoch": 2,
    "max_seq_length": 64,
    "warmup_ratio": 0.1,
    "tiny_hidden_size": 64,
    "tiny_layers": 6,
    "tiny_heads": 4,
}

# XTREME's XNLI fine-tuning budget for mBERT (lr 2e-5, batch 32, max length 128); the
# epoch count is ours (2): override with --set epochs=N.
PAPER_TRAINING = {
    "model": "bert-base-multilingual-cased",
    "learning_rate": 2e-5,
    "batch_size": 32,
    "epochs": 2.0,
    "evals_per_epoch": 4,
    "max_seq_length": 128,
    "warmup_ratio": 0.1,
}


def ear_xnli(preset: str, data_dir: str | None) -> SweepSpec:
    if preset == "smoke":
        base = {**SMOKE_TRAINING, "task": "xnli", "target_langs": ["es", "de", "ru"]}
        base.update(_data_settings(data_dir, default_source="synthetic"))
        if data_dir:
            # The real training sample (999 pairs) gives the tiny model little to learn from;
            # evaluating on 1,000 test pairs per language keeps the smoke run short.
            base["max_eval_examples"] = 1000
        return SweepSpec(
            "ear_xnli",
            base,
            [spaces.BASELINE, *spaces.ear_smoke_points()],
            seeds=[0, 1],
            preset=preset,
            log_models=True,
        )
    base = {**PAPER_TRAINING, "task": "xnli", "target_langs": list(XNLI_TARGETS)}
    base.update(_data_settings(data_dir, default_source="hub"))
    return SweepSpec(
        "ear_xnli",
        base,
        [spaces.BASELINE, *spaces.ear_paper_points()],
        seeds=[1, 2, 3, 4, 5],
        preset=preset,
        search_trials=40,
        top_k=3,
    )


def robust_xnli(preset: str, data_dir: str | None) -> SweepSpec:
    """Baseline, ADV, RS-RP and RS-DA on XNLI with the same seeds (Huang et al. 2021), with
    the generalized pairs and the mixed-language set evaluated."""
    xnli = ear_xnli(preset, data_dir)  # the same trial settings and seeds as the EAR sweep
    base = {**xnli.base, "generalized_pairs": True, "mixed_language": True}
    points = (
        spaces.robust_smoke_points()
        if preset == "smoke"
        else spaces.robust_paper_points(spaces.RS_DA_M["xnli"])
    )
    return _robust_spec("robust_xnli", base, points, xnli.seeds, preset)


def robust_pawsx(preset: str, data_dir: str | None) -> SweepSpec:
    """Baseline, ADV, RS-RP and RS-DA on PAWS-X with the same seeds, generalized pairs on."""
    points = (
        spaces.robust_smoke_points()
        if preset == "smoke"
        else spaces.robust_paper_points(spaces.RS_DA_M["pawsx"])
    )
    return _robust_spec(
        "robust_pawsx", _pawsx_base(preset, data_dir), points, SEEDS[preset], preset
    )


def ear_pawsx(preset: str, data_dir: str | None) -> SweepSpec:
    """EAR vs plain fine-tuning on PAWS-X; the paper draws m = 10 synonym copies there."""
    if preset == "smoke":
        points = spaces.ear_smoke_points()
    else:
        points = spaces.with_setting(spaces.ear_paper_points(), "m", spaces.RS_DA_M["pawsx"])
    return SweepSpec(
        "ear_pawsx",
        _pawsx_base(preset, data_dir),
        [spaces.BASELINE, *points],
        seeds=SEEDS[preset],
        preset=preset,
    )


def _robust_spec(
    experiment: str, base: dict, points: list[dict], seeds: list[int], preset: str
) -> SweepSpec:
    # The robust-training paper tests significance with a bootstrapped paired t-test.
    return SweepSpec(
        experiment,
        base,
        [spaces.BASELINE, *points],
        seeds=list(seeds),
        preset=preset,
        significance_test="bootstrap",
    )


def _pawsx_base(preset: str, data_dir: str | None) -> dict:
    """PAWS-X trial settings, generalized pairs on (both papers evaluate PAWS-X)."""
    if preset == "smoke":
        base = {
            **SMOKE_TRAINING,
            "task": "pawsx",
            "target_langs": list(SYNTHETIC_TARGETS),
            "generalized_pairs": True,
        }
        base.update(_data_settings(data_dir, default_source="synthetic"))
        if data_dir:
            # The shared sample has PAWS-X dev files only: cut them into disjoint train /
            # dev (selection) / test parts by example index (see xlt_core/data/loading.py).
            base.update({"split_dev_files": True, "target_langs": list(LOCAL_PAWSX_TARGETS)})
        return base
    base = {
        **PAPER_TRAINING,
        "task": "pawsx",
        "target_langs": list(PAWSX_TARGETS),
        "generalized_pairs": True,
    }
    base.update(_data_settings(data_dir, default_source="hub"))
    return base


def _data_settings(data_dir: str | None, default_source: str) -> dict:
    if data_dir:
        return {"data_source": "local", "data_dir": data_dir}
    return {"data_source": default_source}


# Adjustment sweeps (Efimov et al. 2023). The smoke presets adjust a tiny model trained from
# scratch, so they use a larger adjustment learning rate than the paper's 5e-5 for mBERT.
SMOKE_ADJUSTMENT = {**spaces.ADJUSTMENT_PAPER_SETTING, "adjust_learning_rate": 1e-3}
# OPUS-100 (OPUS-style `translation` rows, configs `en-xx`) stands in for the paper's parallel data.
PAPER_PARALLEL = {"parallel_data": "hub:Helsinki-NLP/opus-100", "parallel_max_sentences": 20000}


def adjust_xnli(preset: str, data_dir: str | None) -> SweepSpec:
    if preset == "smoke":
        base = {
            **SMOKE_TRAINING,
            "task": "xnli",
            "target_langs": ["es", "de", "ru"],
            "parallel_data": "synthetic",
            "parallel_max_sentences": 1000,
        }
        base.update(_data_settings(data_dir, default_source="synthetic"))
        if data_dir:
            # Real XNLI files; the shared sample has en-vi parallel data (OpenSubtitles) only.
            base.update(
                {
                    "target_langs": ["vi", "es", "de"],
                    "parallel_data": f"{data_dir}/parallel",
                    "max_eval_examples": 1000,
                }
            )
        points = spaces.adjustment_points(SMOKE_ADJUSTMENT, spaces.CONTINUAL_PAPER_SETTING)
        return SweepSpec("adjust_xnli", base, points, seeds=[0, 1], preset=preset)
    base = {**PAPER_TRAINING, **PAPER_PARALLEL, "task": "xnli", "target_langs": list(XNLI_TARGETS)}
    base.update(_data_settings(data_dir, default_source="hub"))
    points = spaces.adjustment_points(
        spaces.ADJUSTMENT_PAPER_SETTING, spaces.CONTINUAL_PAPER_SETTING
    )
    return SweepSpec("adjust_xnli", base, points, seeds=[1, 2, 3, 4, 5], preset=preset)


WIKIANN_TARGETS = ("ar", "de", "es", "fr", "hi", "ru", "vi", "zh")


def _require_data_dir(task: str, data_dir: str | None) -> str:
    if not data_dir:
        raise ConfigError(
            "--data-dir",
            None,
            f"a local XTREME-layout directory (e.g. ../shared/data): the {task} smoke preset has no synthetic data",
        )
    return data_dir


def adjust_ner(preset: str, data_dir: str | None) -> SweepSpec:
    """WikiANN NER; the paper tests significance with a permutation test on entity F1."""
    if preset == "smoke":
        data_dir = _require_data_dir("NER", data_dir)
        base = {
            **SMOKE_TRAINING,
            "task": "ner",
            "data_source": "local",
            "data_dir": data_dir,
            "target_langs": ["vi", "de", "es"],
            "parallel_data": f"{data_dir}/parallel",
            "max_train_examples": 2000,
            "max_eval_examples": 500,
            "epochs": 3.0,
        }
        points = spaces.adjustment_points(SMOKE_ADJUSTMENT, spaces.CONTINUAL_PAPER_SETTING)
        return SweepSpec(
            "adjust_ner", base, points, seeds=[0, 1], preset=preset, significance_test="permutation"
        )
    # The XNLI budget above (lr 2e-5, batch 32, max length 128); 3 epochs is our choice.
    base = {
        **PAPER_TRAINING,
        **PAPER_PARALLEL,
        "task": "ner",
        "target_langs": list(WIKIANN_TARGETS),
        "epochs": 3.0,
    }
    base.update(_data_settings(data_dir, default_source="hub"))
    points = spaces.adjustment_points(
        spaces.ADJUSTMENT_PAPER_SETTING, spaces.CONTINUAL_PAPER_SETTING
    )
    return SweepSpec(
        "adjust_ner",
        base,
        points,
        seeds=[1, 2, 3, 4, 5],
        preset=preset,
        significance_test="permutation",
    )


def adjust_xsr(preset: str, data_dir: str | None) -> SweepSpec:
    """Tatoeba retrieval with the encoder itself: original vs adjusted (no fine-tuning, so no
    continual learning: Eq. 2 needs a task loss). XSR has no English queries: the report
    selects on `dev/pooled/mrr` (the dev pairs of every language); the test is the t-test."""
    points = spaces.adjustment_points(
        SMOKE_ADJUSTMENT if preset == "smoke" else spaces.ADJUSTMENT_PAPER_SETTING,
        spaces.CONTINUAL_PAPER_SETTING,
    )[:2]
    if preset == "smoke":
        data_dir = _require_data_dir("XSR", data_dir)
        base = {
            **SMOKE_TRAINING,
            "task": "xsr",
            "data_source": "local",
            "data_dir": data_dir,
            "target_langs": ["vi", "de", "es"],
            "parallel_data": f"{data_dir}/parallel",
            "max_eval_examples": 400,
        }
        return SweepSpec(
            "adjust_xsr",
            base,
            points,
            seeds=[0, 1],
            preset=preset,
            selection_metric="dev/pooled/mrr",
        )
    base = {**PAPER_TRAINING, **PAPER_PARALLEL, "task": "xsr", "target_langs": list(XSR_TARGETS)}
    base.update(_data_settings(data_dir, default_source="hub"))
    return SweepSpec(
        "adjust_xsr",
        base,
        points,
        seeds=[1, 2, 3, 4, 5],
        preset=preset,
        selection_metric="dev/pooled/mrr",
    )


def adjust_qa(preset: str, data_dir: str | None) -> SweepSpec:
    """Extractive QA: trained on English, evaluated on XQuAD, MLQA, TyDiQA-GoldP (and XQuAD's
    cross-lingual directions); the paper's test on F1 is the paired t-test."""
    points = spaces.adjustment_points(
        SMOKE_ADJUSTMENT if preset == "smoke" else spaces.ADJUSTMENT_PAPER_SETTING,
        spaces.CONTINUAL_PAPER_SETTING,
    )
    if preset == "smoke":
        data_dir = _require_data_dir("QA", data_dir)
        # Offline training on the English TyDiQA-GoldP train file; tiny sizes keep a trial short.
        base = {
            **SMOKE_TRAINING,
            "task": "qa",
            "data_source": "local",
            "data_dir": data_dir,
            "target_langs": ["vi", "es"],
            "parallel_data": f"{data_dir}/parallel",
            "max_seq_length": 128,
            "max_train_examples": 200,
            "max_eval_examples": 30,
            "epochs": 2.0,
        }
        return SweepSpec("adjust_qa", base, points, seeds=[0, 1], preset=preset)
    # XTREME's QA budget for mBERT: lr 3e-5, batch 32 (we keep 32), 2 epochs, length 384 (windows overlap by 128).
    base = {
        **PAPER_TRAINING,
        **PAPER_PARALLEL,
        "task": "qa",
        "target_langs": ["ar", "de", "es", "hi", "ru", "vi", "zh"],
        "learning_rate": 3e-5,
        "max_seq_length": 384,
        "epochs": 2.0,
    }
    base.update(_data_settings(data_dir, default_source="hub"))
    return SweepSpec("adjust_qa", base, points, seeds=[1, 2, 3, 4, 5], preset=preset)


XSR_TARGETS = ("ar", "de", "es", "fr", "hi", "ru", "vi", "zh")

PRESETS = {
    "ear_xnli": ear_xnli,
    "robust_xnli": robust_xnli,
    "robust_pawsx": robust_pawsx,
    "ear_pawsx": ear_pawsx,
    "adjust_xnli": adjust_xnli,
    "adjust_ner": adjust_ner,
    "adjust_xsr": adjust_xsr,
    "adjust_qa": adjust_qa,
}
