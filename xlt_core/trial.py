"""One trial = train on the source language + evaluate on every language, for every task:
`run_trial(config, reporter)`.

The task (`config.task`, looked up in `tasks.TASKS`) says how its data is read, encoded
and scored; the objective (`config.method`, `objectives.OBJECTIVES`) turns batches into a
loss; the adaptation (`config.adaptation`) adjusts the encoder first and may wrap the
objective with continual alignment (`adjustment.prepare_method`, probed by `probing`).
"""

from __future__ import annotations

from xlt_core.adjustment import tokenizer_texts
from xlt_core.config import TrialConfig
from xlt_core.data.loading import load_synonyms
from xlt_core.models import load_model
from xlt_core.objectives import build_objective
from xlt_core.preflight import check_resources
from xlt_core.probing import prepare_probed_method, trained_state
from xlt_core.reporting import Reporter
from xlt_core.tasks import TASKS
from xlt_core.train import train
from xlt_core.trial_result import TrialResult, save_trained, seed_everything, trial_device


def run_trial(config: TrialConfig, reporter: Reporter) -> TrialResult:
    task = TASKS[config.task]
    check_resources(config)
    seed_everything(config.seed)
    device = trial_device()

    train_examples = task.load_training(config)
    texts = task.training_texts(train_examples) + tokenizer_texts(config)
    model, tokenizer = load_model(config, task.num_labels(config), texts, head=task.head)
    evaluator = task.evaluator(config, model, tokenizer, device)

    objective = None
    if task.trains:
        objective = build_objective(config, tokenizer.pad_token_id, load_synonyms(config))
    # The adaptation: the adjusted encoder, and continual alignment wrapped around the objective.
    objective, metrics, probe = prepare_probed_method(config, model, tokenizer, objective, device)
    best_step, seconds = 0, 0.0
    if task.trains:
        encode = task.encoder(config, tokenizer, train_examples)
        # Synonym copies (EAR, RS-DA) are drawn per seed from the shared training examples.
        training_set = objective.training_set(train_examples, encode, config.seed)
        outcome = train(
            model, objective, training_set, config, evaluator.dev_metric, reporter, device
        )
        best_step, seconds = outcome.best_step, outcome.seconds
        probe.record(trained_state(config), model.base_model)

    final_metrics, scores = evaluator.evaluate()
    save_trained(config, model, tokenizer)
    return TrialResult(
        metrics | probe.metrics | final_metrics, scores, best_step, seconds, probe.figures
    )
