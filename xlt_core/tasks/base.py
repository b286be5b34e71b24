"""What a task provides to the one trial path (`xlt_core.trial.run_trial`).

A task is one module of `xlt_core/tasks/` with one object that has:

- `name`, `head` (a key of `models.HEADS`), `objectives` and `adaptations`: the methods
  (`config.method`) and adaptations (`config.adaptation`) it supports; anything else is
  refused before any work starts;
- `check(config)`: cheap pre-flight checks (languages and files exist, no reading);
  `read(config)`: read every local file the trial will read, so that a corrupt line stops
  a sweep before Ray starts;
- `num_labels(config)`, `selection_metric(config)` (the dev metric that model and
  configuration selection rank by);
- `load_training(config)`: the training examples (empty for a task without training);
  `training_texts(examples)`: their text, for a tokenizer trained locally;
- `encoder(config, tokenizer, training_examples)`: a function that turns examples into a
  `TrainingSet` (objectives call it, on the examples or on copies they make);
- `evaluator(config, model, tokenizer, device)`: an `Evaluator` over every evaluation set.

Adding a task: a module with such an object, its entry in `tasks/__init__.py`'s TASKS, and
its name in `config.TASKS`. Its torch-side helpers (encoding, prediction) are imported inside
`encoder` and `evaluator`: the sweep driver's pre-flight (`xlt_core.preflight`) imports TASKS
and runs `check` and `read` without torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from xlt_core.config import TrialConfig
from xlt_schema import example_scores_key, metric_key

if TYPE_CHECKING:
    import torch


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


@dataclass(frozen=True)
class TaskDeclaration:
    """What every task declares: its name, its head and what it supports. Task classes
    derive from it and add the protocol's methods."""

    name: str
    head: str
    objectives: tuple[str, ...]
    adaptations: tuple[str, ...]


def limit(items: Sequence[Any], count: int | None) -> list[Any]:
    """The first `count` items (all when count is None)."""
    return list(items[:count]) if count else list(items)


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
