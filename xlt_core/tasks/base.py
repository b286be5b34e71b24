"""What a task provides to the one trial path (`xlt_core.trial.run_trial`).

A task is declared once (`registry.TaskDeclaration`: name, head, metrics, supported
objectives and adaptations, data sizes; `tasks/declarations.py` holds the built-in ones)
and implemented by an object, built from its declaration, that has:

- `name`, `head` (a key of `registry.HEADS`), `objectives` and `adaptations`: the methods
  (`config.method`) and adaptations (`config.adaptation`) it supports; anything else is
  refused before any work starts (`DeclaredTask` gives these from the declaration);
- `check(config)`: cheap pre-flight checks (languages and files exist, no reading);
  `read(config)`: read every local file the trial will read, so that a corrupt line stops
  a sweep before Ray starts;
- `num_labels(config)`, `selection_metric(config)` (the dev metric that model and
  configuration selection rank by; `DeclaredTask` gives both from the declaration);
- `load_training(config)`: the training examples (empty for a task without training);
  `training_texts(examples)`: their text, for a tokenizer trained locally;
- `encoder(config, tokenizer, training_examples)`: a function that turns examples into a
  `TrainingSet` (objectives call it, on the examples or on copies they make);
- `evaluator(config, model, tokenizer, device)`: an `Evaluator` over every evaluation set.

Adding a task (docs/extending.md): a declaration naming such a class, e.g. a pair task's
declaration naming `tasks.pair_classification_task:PairClassificationTask` with its loader,
lister and labels: nothing else. Its torch-side helpers (encoding, prediction) are imported inside
`encoder` and `evaluator`: the sweep driver's pre-flight (`xlt_core.preflight`) imports TASKS
and runs `check` and `read` without torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from xlt_core import registry
from xlt_schema import PARALLEL_ITEMS_FIELD, example_scores_key, metric_key

if TYPE_CHECKING:
    import torch

    from xlt_core.config import TrialConfig


class Evaluator(Protocol):
    def dev_metric(self) -> float:
        """The selection metric on the source language's dev set (during training)."""

    def evaluate(self) -> tuple[dict[str, float], dict[str, dict]]:
        """Final metrics `<split>/<lang>/<metric>` and per-example scores `<split>-<lang>`."""


class Task(Protocol):
    name: str
    head: str
    objectives: tuple[str, ...]
    adaptations: tuple[str, ...]

    def check(self, config: TrialConfig) -> None: ...

    def read(self, config: TrialConfig) -> None: ...

    def num_labels(self, config: TrialConfig) -> int: ...

    def selection_metric(self, config: TrialConfig) -> str: ...

    def load_training(self, config: TrialConfig) -> Sequence[Any]: ...

    def training_texts(self, examples: Sequence[Any]) -> list[str]: ...

    def encoder(self, config: TrialConfig, tokenizer, training_examples) -> Callable: ...

    def evaluator(
        self, config: TrialConfig, model, tokenizer, device: torch.device
    ) -> Evaluator: ...


class DeclaredTask:
    """What a task's declaration gives: its name, head, supported objectives and adaptations
    and selection metric. Task classes derive from it and add the protocol's other methods;
    the registry builds one per declaration (`TaskClass(declaration)`)."""

    def __init__(self, declaration: registry.TaskDeclaration):
        self.declaration = declaration

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def head(self) -> str:
        return self.declaration.head

    @property
    def objectives(self) -> tuple[str, ...]:
        return registry.supported_objectives(self.declaration)

    @property
    def adaptations(self) -> tuple[str, ...]:
        return registry.supported_adaptations(self.declaration)

    def selection_metric(self, config: TrialConfig) -> str:
        return self.declaration.selection_metric_for(config)

    def num_labels(self, config: TrialConfig) -> int:
        """Its head's classes: the declaration's labels (a task without labels overrides it)."""
        return len(self.declaration.labels)


def limit(items: Sequence[Any], count: int | None) -> list[Any]:
    """The first `count` items (all when count is None)."""
    return list(items[:count]) if count else list(items)


def with_parallel_items(config: TrialConfig, scores: dict[str, dict]) -> dict[str, dict]:
    """Each per-example artifact with PARALLEL_ITEMS_FIELD: whether its split is one of the
    task's parallel sets for the trial's data source (translations of one item set, aligned by
    position: analysis tests their mean over the languages on items)."""
    parallel = registry.task(config.task).parallel_sets_for(config.data_source)
    # A key is `<split>-<lang>` (example_scores_key), for a payload that does not name its split.
    return {
        key: {**payload, PARALLEL_ITEMS_FIELD: payload.get("split", key.split("-")[0]) in parallel}
        for key, payload in scores.items()
    }


def data_location(config: TrialConfig, subdir: str) -> str:
    """Where a task's data come from, for messages: the local folder, or the source."""
    if config.data_source == "local":
        return f"{config.data_dir}/{subdir}"
    return f"data_source={config.data_source}"


@dataclass
class SetEvaluator:
    """The evaluator of a task with evaluation sets keyed (split, lang): `score(key)` gives
    a dict whose `value` is the metric `metric` (plus any `extra_metrics` entries); the
    rest of the dict (per-example scores, predictions) is the set's scores artifact."""

    score: Callable[[tuple[str, str]], dict]
    keys: Sequence[tuple[str, str]]
    dev: tuple[str, str]
    metric: str
    extra_metrics: tuple[str, ...] = ()

    def dev_metric(self) -> float:
        return self.score(self.dev)["value"]

    def evaluate(self) -> tuple[dict[str, float], dict[str, dict]]:
        metrics, scores = {}, {}
        for split, lang in self.keys:
            scored = self.score((split, lang))
            metrics[metric_key(split, lang, self.metric)] = scored.pop("value")
            for name in self.extra_metrics:
                metrics[metric_key(split, lang, name)] = scored.pop(name)
            scores[example_scores_key(split, lang)] = {"split": split, "lang": lang, **scored}
        return metrics, scores
