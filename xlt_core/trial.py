"""One trial = train on the source language + evaluate on every language, for every task:
`run_trial(config, reporter)`.

The task (`config.task`, looked up in `tasks.TASKS`) says how its data is read, encoded
and scored; the objective (`config.method`, `objectives.OBJECTIVES`) turns batches into a
loss; the adaptation (`config.adaptation`), when there is one, adjusts the encoder first and may
wrap the objective with continual alignment (`adjustment.adapt`; `probing` probes the
encoder before and after it and after training).
An adjusted trial does this once per target language with parallel data, each language's
encoder adjusted on that language's pairs only (`language_stages`: efimov2023's one pair
of languages at a time); a trial without adaptation trains once.
"""

from __future__ import annotations

import copy

from xlt_core.adjustment import adapt, tokenizer_texts
from xlt_core.config import TrialConfig
from xlt_core.data.loading import load_synonyms
from xlt_core.language_stages import run_language_stages
from xlt_core.models import load_model
from xlt_core.objectives import build_objective
from xlt_core.preflight import check_resources
from xlt_core.probing import trained_state, trial_probe
from xlt_core.reporting import Reporter
from xlt_core.tasks import TASKS
from xlt_core.tasks.base import with_parallel_items
from xlt_core.train import pooled_test_score, train
from xlt_core.trial_result import TrialResult, save_trained, seed_everything, trial_device


def run_trial(config: TrialConfig, reporter: Reporter) -> TrialResult:
    task = TASKS[config.task]
    check_resources(config)
    seed_everything(config.seed)
    device = trial_device()

    train_examples = task.load_training(config)
    texts = task.training_texts(train_examples) + tokenizer_texts(config)
    model, tokenizer = load_model(config, task.num_labels(config), texts, head=task.head)
    if not config.adjusted:
        return _train_and_evaluate(config, model, tokenizer, train_examples, reporter, device)
    # Every language stage starts from the same original weights and head.
    original = copy.deepcopy({k: v.detach().cpu() for k, v in model.state_dict().items()})

    def run_stage(stage_config: TrialConfig, stage_reporter: Reporter) -> TrialResult:
        model.load_state_dict(original)
        seed_everything(config.seed)
        return _train_and_evaluate(
            stage_config, model, tokenizer, train_examples, stage_reporter, device
        )

    return run_language_stages(config, reporter, run_stage)


def _train_and_evaluate(
    config: TrialConfig, model, tokenizer, train_examples, reporter: Reporter, device
) -> TrialResult:
    """Adapt (for the adaptations), train (for tasks that train) and evaluate `model`."""
    task = TASKS[config.task]
    evaluator = task.evaluator(config, model, tokenizer, device)
    objective = build_objective(config, tokenizer.pad_token_id, load_synonyms(config))
    probe = trial_probe(config, tokenizer, device)
    probe.record("original", model.base_model)
    adaptation_metrics = {}
    if config.adjusted:
        # The adjusted encoder, and continual alignment wrapped around the objective.
        objective, adaptation_metrics = adapt(config, model, tokenizer, objective, device)
        probe.record("adjusted", model.base_model)
    encode = task.encoder(config, tokenizer, train_examples)
    # Synonym copies (EAR, RS-DA) are drawn per seed from the shared training examples.
    training_set = objective.training_set(train_examples, encode, config.seed)
    outcome = train(
        model,
        objective,
        training_set,
        config,
        evaluator.dev_metric,
        reporter,
        device,
        pooled_test_score(config, evaluator),
    )
    probe.record(trained_state(config), model.base_model)

    final_metrics, scores = evaluator.evaluate()
    scores = with_parallel_items(config, scores)
    save_trained(config, model, tokenizer)
    return TrialResult(
        adaptation_metrics | probe.metrics | final_metrics,
        scores,
        outcome.best_step,
        outcome.seconds,
        probe.figures,
    )
