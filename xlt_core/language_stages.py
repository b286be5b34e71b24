"""An adjusted trial, one pair of languages at a time (efimov2023 L63: "In all cases, we
work with one pair of languages at a time").

A trial is (configuration, seed). With adaptation `adjusted` or `adjusted_continual` and
target languages L1..Lk, each Li with parallel data is a *language stage*: the original
model, adjusted on en-Li pairs only (cached per language, seed and settings,
`adjustment.py`), fine-tuned on the English task data (with continual alignment on en-Li
pairs for `adjusted_continual`), and evaluated on the trial's sets restricted to Li: its
own sets (`test/Li`, `mixed/Li`, `xquad/Li-en`, ...), English and the dev set that selects,
and any target without parallel data (no encoder is adjusted for it). Generalized pairs
(`test/<a>-<b>`) are evaluated within a stage's languages only: no model is adjusted for
two targets, so `test/es-ru` is not evaluated for an adjusted trial.

The trial's result merges the stages (`merge_stages`), so that analysis keeps one run per
(configuration, seed):

- an evaluation metric (`<split>/<lang>/<metric>`) that one stage logs is that stage's
  model's: `test/Li/...` comes from Li's model; one that several stages log (English, the
  dev set that selects, targets without parallel data, XSR's `dev/pooled/mrr`) is their
  **mean over the k models**, and so are its per-example `scores`, `counts` and
  `exact_match_scores` (element-wise); other per-example fields that differ between the
  models (predictions) are kept per model as `<field>_by_model` = {lang: value};
- any other metric several stages log (`adjust/...`, `probing/...`) is kept per language
  as `<group>_<lang>/<name>` (two-part keys: analysis does not take them for evaluation
  metrics) besides its mean under its own name;
- probing figures go to `probing/<lang>/<file>`, and `probing/<state>_distances.json`
  pools every language's distances (the report's side-by-side histograms).

Training curves continue across stages: stage i's steps follow stage i-1's last step, and
each point carries `train/language_stage` = i. Every checkpoint of a stage also holds the
finished stages' results (`STAGES_FILE`): a trial interrupted in Li's stage resumes there,
from Li's last checkpoint, and does not redo the finished languages. A finished stage's
probing figures are kept only while the files of the attempt that wrote them exist.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from xlt_core.config import TrialConfig
from xlt_core.data.parallel import stage_targets
from xlt_core.reporting import Reporter
from xlt_core.trial_result import TrialResult
from xlt_schema import parse_metric_key

STAGES_FILE = "language_stages.json"
STAGE_CURVE = "train/language_stage"
# Per-example fields that are averaged over the models that evaluated one set.
AVERAGED_FIELDS = ("scores", "counts", "exact_match_scores")


def stage_config(config: TrialConfig, lang: str) -> TrialConfig:
    """Language `lang`'s stage: the trial's settings with `lang` and the targets without
    parallel data as targets; probing files and the saved model (`save_model_dir/<lang>`: a
    trial's model is one per language) in folders of their own."""

    def own_folder(directory: str | None) -> str | None:
        return str(Path(directory) / lang) if directory else None

    return dataclasses.replace(
        config,
        target_langs=stage_targets(config)[lang],
        probing_dir=own_folder(config.probing_dir),
        save_model_dir=own_folder(config.save_model_dir),
    )


class StageReporter:
    """The trial's reporter as one stage sees it: steps offset past the stages before,
    the finished stages' results written into every checkpoint, and only this stage's
    checkpoints offered to resume from."""

    def __init__(self, reporter: Reporter, lang: str, index: int, finished: list[dict]):
        self.reporter, self.lang, self.index, self.finished = reporter, lang, index, finished
        self.offset = sum(record["steps"] for record in finished)
        self.last_step = 0

    def report(self, step, metrics, checkpoint_dir=None) -> None:
        self.last_step = step
        if checkpoint_dir is not None:
            saved = {"stage": self.lang, "step": step, "finished": self.finished}
            (Path(checkpoint_dir) / STAGES_FILE).write_text(json.dumps(saved, default=_plain))
        stage_metrics = {**metrics, STAGE_CURVE: float(self.index)}
        self.reporter.report(self.offset + step, stage_metrics, checkpoint_dir)

    def latest_checkpoint(self) -> str | None:
        directory = self.reporter.latest_checkpoint()
        saved = saved_stages(directory)
        if saved is None or saved["stage"] != self.lang:
            return None
        self.last_step = saved["step"]
        return directory


def _plain(value):
    """numpy scalars and arrays (e.g. a chosen layer) as JSON values."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def saved_stages(directory: str | None) -> dict | None:
    """The stages file of a checkpoint directory, if it has one."""
    path = Path(directory) / STAGES_FILE if directory else None
    return json.loads(path.read_text()) if path is not None and path.exists() else None


def run_language_stages(
    config: TrialConfig,
    reporter: Reporter,
    run_stage: Callable[[TrialConfig, Reporter], TrialResult],
) -> TrialResult:
    """Run (or resume) one stage per target language with parallel data, in the order of
    `target_langs`, and merge their results."""
    saved = saved_stages(reporter.latest_checkpoint())
    finished = saved["finished"] if saved else []
    done = {record["lang"] for record in finished}
    for index, lang in enumerate(stage_targets(config)):
        if lang in done:
            continue
        stage_reporter = StageReporter(reporter, lang, index, finished)
        result = run_stage(stage_config(config, lang), stage_reporter)
        finished = [*finished, _record(lang, result, stage_reporter.last_step)]
    return merge_stages(finished)


def _record(lang: str, result: TrialResult, steps: int) -> dict:
    return {"lang": lang, "steps": steps, **dataclasses.asdict(result)}


def merge_stages(records: list[dict]) -> TrialResult:
    """One trial result from the stages' (see the module docstring); its best step is the
    stages' mean (each stage's own is `stage_<lang>/best_step`), its seconds their sum."""
    langs = [record["lang"] for record in records]
    metrics = _merge_metrics(langs, [record["metrics"] for record in records])
    for record in records:
        metrics[f"stage_{record['lang']}/best_step"] = float(record["best_step"])
    scores = {}
    for key in dict.fromkeys(k for record in records for k in record["example_scores"]):
        logged = {
            r["lang"]: r["example_scores"][key] for r in records if key in r["example_scores"]
        }
        scores[key] = _merge_example_scores(logged)
    return TrialResult(
        metrics,
        scores,
        round(float(np.mean([record["best_step"] for record in records]))),
        sum(record["train_seconds"] for record in records),
        _merge_figures(records),
    )


def _merge_metrics(langs: list[str], stage_metrics: list[Mapping[str, float]]) -> dict:
    merged = {}
    for key in dict.fromkeys(k for metrics in stage_metrics for k in metrics):
        logged = {lang: m[key] for lang, m in zip(langs, stage_metrics) if key in m}
        merged[key] = float(np.mean(list(logged.values())))
        if len(logged) > 1 and parse_metric_key(key) is None:
            group, _, name = key.partition("/")
            merged.update({f"{group}_{lang}/{name}": value for lang, value in logged.items()})
    return merged


def _merge_example_scores(logged: dict[str, dict]) -> dict:
    """One evaluation set's per-example scores from the models that evaluated it."""
    first = next(iter(logged.values()))
    if len(logged) == 1:
        return first
    merged = {}
    for field, value in first.items():
        values = [scores[field] for scores in logged.values()]
        if field in AVERAGED_FIELDS:
            merged[field] = np.mean(np.asarray(values, dtype=float), axis=0).tolist()
        elif all(other == value for other in values):
            merged[field] = value
        else:
            merged[f"{field}_by_model"] = {lang: s[field] for lang, s in logged.items()}
    return merged


def _merge_figures(records: list[dict]) -> dict[str, str]:
    """Each stage's figures under `probing/<lang>/`, and every state's distances pooled
    over the languages (written beside the first stage's files)."""
    figures, pooled, directory = {}, {}, None
    for record in records:
        for artifact, path in record["figures"].items():
            if not Path(path).exists():
                continue  # written by an earlier attempt of the trial
            group, _, name = artifact.partition("/")
            figures[f"{group}/{record['lang']}/{name}"] = path
            if artifact.endswith("_distances.json"):
                # The stage's probing folder is <probing_dir>/<lang>: pooled files go above.
                directory = Path(path).parent.parent
                distances = json.loads(Path(path).read_text())
                pooling = pooled.setdefault(artifact, {"related": [], "unrelated": []})
                for kind in pooling:
                    pooling[kind] += distances[kind]
    for artifact, distances in pooled.items():
        path = directory / Path(artifact).name
        path.write_text(json.dumps(distances))
        figures[artifact] = str(path)
    return figures
