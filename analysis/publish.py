"""The publishing step of a sweep's report: its plots and files in a local directory, the
selected model in the model registry, and the files and the sweep's summary on its parent
run. A sweep still running or interrupted (:mod:`analysis.completeness`) is only read: its
files are written locally, nothing goes to the tracking server or the registry."""

import tempfile
import time
from pathlib import Path

from mlflow import MlflowClient
from mlflow.entities import Metric
from mlflow.utils.validation import MAX_METRICS_PER_BATCH

from analysis.mlflow_ui import log_summary, summary_metrics, summary_tags
from analysis.model_registry import (
    CHAMPION_ALIAS,
    SweepStamp,
    alias_holder,
    best_seed_run,
    register_champion,
)
from analysis.publication import Registration, ReportTexts
from analysis.seed_summary import seed_summary_metrics
from analysis.select import TEST_SPLIT
from analysis.sweep_analysis import SweepAnalysis
from analysis.sweep_records import read_probing_stages
from xlt_schema import COMPLETE_TAG

REPORT_ARTIFACT_DIR = "report"
MARKDOWN_NAME = "report.md"
LATEX_NAME = "report.tex"
JSON_NAME = "selected_config.json"


def report_directory(out_dir: str | None) -> Path:
    """``out_dir`` (created), else a new temporary directory that is kept."""
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="sweep-report-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def draw_plots(client: MlflowClient, analysis: SweepAnalysis, out: Path) -> tuple[str, ...]:
    """Every plot the sweep has data for, in ``out`` (the probing distances read here, only
    when plots are drawn)."""
    # matplotlib is imported only by a report that draws.
    from analysis.report_plots import draw_report_plots

    probing = read_probing_stages(client, analysis.trials)
    return tuple(draw_report_plots(analysis, out, probing))


def register_selection(
    client: MlflowClient, analysis: SweepAnalysis, model_name: str, register_anyway: bool
) -> Registration:
    """Register the selection's best seed (see :func:`analysis.model_registry.register_champion`);
    a sweep with sanity warnings registers nothing unless ``register_anyway``, a sweep that
    has not ended nothing whatever is asked."""
    parent, selection = analysis.parent, analysis.selection
    champion = best_seed_run(analysis.trials, selection.config_key, selection.metric)
    if analysis.incomplete or (analysis.warnings and not register_anyway):
        reason = (
            f"the sweep is {analysis.incomplete}; report it again once it has ended"
            if analysis.incomplete
            else "the sweep has sanity warnings (above); to register it anyway run "
            f"`python -m analysis report --experiment {analysis.experiment} --parent-run "
            f"{parent.run_id} --register-anyway`"
        )
        return Registration(
            run_id=champion,
            registered=False,
            model_name=model_name,
            alias=CHAMPION_ALIAS,
            reason=reason,
            holder=alias_holder(client, model_name, CHAMPION_ALIAS),
        )
    return register_champion(
        client,
        champion,
        model_name,
        SweepStamp(
            parent_run_id=parent.run_id,
            end_time=parent.end_time or 0,
            complete=parent.tags.get(COMPLETE_TAG) == "true",
        ),
        CHAMPION_ALIAS,
        description=f"{selection.config_label}, selected by {selection.metric} "
        f"(sweep parent run {parent.run_id})",
        metric=selection.metric,
        allow_worse=register_anyway,
    )


def publish_report(
    client: MlflowClient,
    analysis: SweepAnalysis,
    texts: ReportTexts,
    plots: tuple[str, ...],
    out: Path,
) -> tuple[list[Path], list[Path]]:
    """Write ``texts`` into ``out``; on the parent run of a sweep that
    has ended, log the summary and every file (the texts and ``plots``) under ``report/``.
    Returns the files and those logged."""
    parent, evaluation = analysis.parent, analysis.evaluation
    if not analysis.incomplete:
        log_summary(
            client,
            parent.run_id,
            parent.experiment_id,
            summary_metrics(analysis.selection, analysis.baseline_mean, evaluation, TEST_SPLIT),
            summary_tags(
                analysis.selection, analysis.verdict, evaluation, TEST_SPLIT, analysis.warnings
            ),
        )
        _log_seed_summary(client, analysis)
    written = {MARKDOWN_NAME: texts.markdown, LATEX_NAME: texts.latex, JSON_NAME: texts.json}
    for name, text in written.items():
        (out / name).write_text(text, encoding="utf-8")
    files = [*(out / name for name in written), *map(Path, plots)]
    logged = [] if analysis.incomplete else files  # a sweep still running is only read
    for path in logged:
        client.log_artifact(parent.run_id, str(path), artifact_path=REPORT_ARTIFACT_DIR)
    return files, logged


def _log_seed_summary(client: MlflowClient, analysis: SweepAnalysis) -> None:
    """Each configuration's mean and std over seeds on the parent run, for the runs table
    (in batches of MLflow's most metrics per request)."""
    metrics = seed_summary_metrics(analysis.seed_means, analysis.selection.metric)
    now = int(time.time() * 1000)
    entries = [Metric(key, value, now, 0) for key, value in metrics.items()]
    for start in range(0, len(entries), MAX_METRICS_PER_BATCH):
        batch = entries[start : start + MAX_METRICS_PER_BATCH]
        client.log_batch(analysis.parent.run_id, metrics=batch)
