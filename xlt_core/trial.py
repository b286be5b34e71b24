"""One trial = train on English + evaluate on every language: `run_trial(config, reporter)`."""

from __future__ import annotations

from pathlib import Path

from xlt_core.adjustment import check_parallel, tokenizer_texts
from xlt_core.config import TrialConfig
from xlt_core.data.loading import check_data, load_split, load_synonyms, num_labels
from xlt_core.errors import ConfigError
from xlt_core.evaluation import evaluation_sets
from xlt_core.models import load_model, model_depth
from xlt_core.objectives import build_objective
from xlt_core.probing import prepare_probed_method, trained_state
from xlt_core.reporting import Reporter
from xlt_core.task_trials import TASK_CHECKS, TASK_RUNNERS
from xlt_core.tasks.pair_classification import encode_pairs, predict, score_predictions
from xlt_core.train import train
from xlt_core.trial_result import TrialResult, save_trained, seed_everything, trial_device


def check_resources(config: TrialConfig) -> None:
    """Checks that need the file system (data, languages, the model's depth): cheap, and
    run before any training so that a bad sweep fails in seconds."""
    if config.task in TASK_CHECKS:
        TASK_CHECKS[config.task](config)
    else:
        check_data(config)
    check_parallel(config)
    depth = model_depth(config)
    if config.method == "ear" and config.layer > depth:
        raise ConfigError(
            "layer",
            config.layer,
            f"a layer between 1 and {depth} ({config.model} has {depth} layers)",
        )


def run_trial(config: TrialConfig, reporter: Reporter) -> TrialResult:
    check_resources(config)
    seed_everything(config.seed)
    if config.task in TASK_RUNNERS:
        return TASK_RUNNERS[config.task](config, reporter)
    device = trial_device()
    cache_dir = Path(config.cache_dir)

    train_examples = load_split(config, "train", config.source_lang)
    texts = [
        text for example in train_examples for text in (example.sentence1, example.sentence2)
    ] + tokenizer_texts(config)
    model, tokenizer = load_model(config, num_labels(config), texts)
    pad_id = tokenizer.pad_token_id

    def encode(examples, persist=False):
        return encode_pairs(
            tokenizer, examples, config.max_seq_length, cache_dir if persist else None
        )

    eval_sets = {
        key: encode(examples, persist=True) for key, examples in evaluation_sets(config).items()
    }
    dev = eval_sets[("dev", config.source_lang)]

    def dev_accuracy() -> float:
        return score_predictions(
            predict(model, dev, 2 * config.batch_size, pad_id, device), dev.labels
        )["value"]

    objective = build_objective(config, pad_id, load_synonyms(config))
    objective, method_metrics, probe = prepare_probed_method(
        config, model, tokenizer, objective, device
    )
    # The plain English training set is shared by every trial; synonym copies are drawn per seed.
    training_set = objective.training_set(
        train_examples, lambda ex: encode(ex, persist=ex is train_examples), config.seed
    )
    outcome = train(model, objective, training_set, config, dev_accuracy, reporter, device)
    probe.record(trained_state(config.method), model.base_model)

    metrics, scores = method_metrics | probe.metrics, {}
    for (split, lang), encoded in eval_sets.items():
        scored = score_predictions(
            predict(model, encoded, 2 * config.batch_size, pad_id, device), encoded.labels
        )
        metrics[f"{split}/{lang}/accuracy"] = scored.pop("value")
        scores[f"{split}-{lang}"] = {"split": split, "lang": lang, **scored}
    save_trained(config, model, tokenizer)
    return TrialResult(metrics, scores, outcome.best_step, outcome.seconds, probe.figures)
