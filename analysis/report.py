"""Turn a finished sweep on the tracking server into a report: Markdown and LaTeX tables,
PNG plots, the selected configuration as JSON, and (when asked) the selected model in the
registry.

Three steps after the read (:mod:`analysis.sweep_records`): the analysis
(:mod:`analysis.sweep_analysis`, pure), the renderers (:mod:`analysis.render`) and the
publishing (:mod:`analysis.publish`: plots, files, registry, MLflow). Everything is written
to a local directory and logged on the sweep's parent run under ``report/``; the report of a
sweep still running or interrupted is only written locally and says that it is incomplete
(:mod:`analysis.completeness`). The significance test is the seed-aware ``crossed`` test
(:mod:`analysis.stats`) unless ``significance_test`` names a seed-averaged one; the parent
run's ``significance_test`` param only records the test its paper used.
"""

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.collect import connect
from analysis.mlflow_ui import ui_address, ui_command
from analysis.papers import PUBLISHED_RESULTS
from analysis.publication import Publication, Registration
from analysis.publish import (
    REPORT_ARTIFACT_DIR,
    draw_plots,
    publish_report,
    register_selection,
    report_directory,
)
from analysis.render import format_mean_std, read_only_note, render_report
from analysis.section import ReportOptions
from analysis.select import DEFAULT_BASELINE_METHOD, DEFAULT_CORRECTION, TEST_SPLIT, Selection
from analysis.stats import DEFAULT_TEST
from analysis.sweep_analysis import SweepAnalysis, analyse_sweep
from analysis.sweep_records import read_sweep
from analysis.verdict import Verdict

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepReport:
    """Where a sweep's report went and what it concluded."""

    parent_run_id: str
    selection: Selection
    markdown_path: str
    json_path: str
    markdown: str
    comparison: pd.DataFrame  # selected vs baseline, one row per test language
    artifact_paths: tuple[str, ...]  # on the parent run
    latex_path: str = ""
    plot_paths: tuple[str, ...] = ()
    registration: Registration | None = None
    significance_test: str = DEFAULT_TEST
    warnings: tuple[str, ...] = ()  # sanity warnings (analysis.sanity), said before the rest
    verdict: Verdict | None = None
    ui_address: str = ""  # the MLflow UI page of the sweep's runs
    ui_command: str = ""  # what serves it ("" when the tracking URI is a server)
    incomplete: str = ""  # "incomplete: N of M trials ...": nothing was written to the sweep


def report_sweep(
    tracking_uri: str,
    experiment: str,
    parent_run_id: str | None = None,
    out_dir: str | None = None,
    reference: str | None = None,
    significance_test: str | None = None,
    correction: str = DEFAULT_CORRECTION,
    baseline_method: str = DEFAULT_BASELINE_METHOD,
    register: bool = False,
    model_name: str | None = None,
    selection_metric: str | None = None,
    paper_results: str | Path = PUBLISHED_RESULTS,
    register_anyway: bool = False,
    target_difference: float | None = None,
) -> SweepReport:
    """Read, analyse, render and publish the report of a sweep (registering its selected
    model only with ``register``).

    Everything is read from and written to ``tracking_uri`` (tracking and model registry),
    not the process environment. Without ``parent_run_id`` the newest parent run with
    finished trials is reported; without ``out_dir`` the files go to a new temporary
    directory that is kept. The baseline is ``baseline_method`` with adaptation ``none``;
    every other configuration is a candidate. ``reference`` names the second reference for
    ``**`` marks (a method or an adaptation with one configuration, a config label or key).
    ``significance_test`` replaces the default ``crossed`` test by name. With ``register`` (off by
    default: reading a report registers nothing) the best seed of the selected configuration
    is registered as ``models:/<model_name>@champion`` (``model_name``: by default the
    experiment's) when its run logged a model; not for a sweep with sanity warnings
    (:mod:`analysis.sanity`) unless ``register_anyway``; the alias moves only as
    :func:`analysis.model_registry.moves_alias` allows, and never to a model worse on dev than its
    holder's unless ``register_anyway``. ``selection_metric`` defaults to the parent run's
    param, else dev/en/accuracy, else the sweep's English-dev metric. A sweep still running
    or interrupted is only read: its report goes to ``out_dir`` only and says so.
    """
    client = connect(tracking_uri)
    options = ReportOptions(
        significance_test,
        correction,
        baseline_method,
        reference,
        selection_metric,
        paper_results,
        target_difference,
    )
    analysis = analyse_sweep(read_sweep(client, experiment, parent_run_id), options)
    out = report_directory(out_dir)
    plots = draw_plots(client, analysis, out)
    registration = None
    if register:
        registration = register_selection(
            client, analysis, model_name or experiment, register_anyway
        )
    experiment_id = analysis.parent.experiment_id
    publication = Publication(
        plots, registration, ui_address(tracking_uri, experiment_id), ui_command(tracking_uri)
    )
    texts = render_report(analysis, publication)
    files, logged = publish_report(client, analysis, texts, plots, out)
    return _sweep_report(analysis, publication, texts.markdown, files, logged)


def _sweep_report(
    analysis: SweepAnalysis,
    publication: Publication,
    markdown: str,
    files: list[Path],
    logged: list[Path],
) -> SweepReport:
    """What :func:`report_sweep` returns, from the steps' results."""
    markdown_path, latex_path, json_path = files[:3]
    return SweepReport(
        parent_run_id=analysis.parent.run_id,
        selection=analysis.selection,
        markdown_path=str(markdown_path),
        json_path=str(json_path),
        markdown=markdown,
        comparison=analysis.comparisons.get(TEST_SPLIT, pd.DataFrame()),
        artifact_paths=tuple(f"{REPORT_ARTIFACT_DIR}/{path.name}" for path in logged),
        latex_path=str(latex_path),
        plot_paths=publication.plots,
        registration=publication.registration,
        significance_test=analysis.test,
        warnings=analysis.warnings,
        verdict=analysis.verdict,
        ui_address=publication.ui_address,
        ui_command=publication.ui_command,
        incomplete=analysis.incomplete,
    )


def _file_lines(report: SweepReport) -> list[str]:
    """`Report files: ` and a path a line, the plots on one (they grow with the sweep's
    hyperparameters and languages): the first's path, then the others' names, as they lie in
    the same folder."""
    lines = [f"Report files: {report.markdown_path}"]
    lines += [f"              {path}" for path in (report.latex_path, report.json_path)]
    if report.plot_paths:
        first, *others = report.plot_paths
        lines.append(", ".join([f"              {first}", *(Path(p).name for p in others)]))
    return lines


def _registry_line(registration: Registration | None) -> str:
    if registration is None:
        return "Model registry: not requested"
    holder = registration.holder
    held = (
        f"; @{registration.alias} is version {holder.version}"
        + (f" (sweep {holder.sweep_run_id})" if holder.sweep_run_id else "")
        if holder
        else f"; no version holds @{registration.alias}"
    )
    if not registration.registered:
        return f"Model registry: nothing registered ({registration.reason}){held}"
    moved = (
        "moved to it" if registration.alias_moved else f"not moved ({registration.alias_reason})"
    )
    return (
        f"Registered model: {registration.model_name} version {registration.version} "
        f"(run {registration.run_id}); alias @{registration.alias} {moved}{held}"
    )


def format_summary(report: SweepReport) -> str:
    """What a sweep or the CLI prints at the end: sanity warnings first, then the verdict
    against the baseline, the selection, where the report went and where the runs are."""
    return "\n".join(line for _, line in summary_lines(report))


# What a summary line is (`summary_lines`): printed, a note (INFO) or a detail (DEBUG, -v).
RESULT, NOTE, DETAIL = "result", "note", "detail"


def print_summary(report: SweepReport) -> None:
    """The summary on stdout: its result lines (warnings, the verdict, the report files)
    printed, its notes logged at INFO and its details at DEBUG, so that `-q` shows only the
    verdict and the paths, and `-v` everything."""
    for kind, line in summary_lines(report):
        if kind == RESULT:
            print(line, flush=True)
        else:
            logger.log(logging.INFO if kind == NOTE else logging.DEBUG, line)


def summary_lines(report: SweepReport) -> list[tuple[str, str]]:
    """`format_summary`'s lines, each with its kind: RESULT (sanity warnings, the verdict,
    the report files), NOTE (the selection, the model registry, the MLflow UI) or DETAIL
    (what was logged to the parent run)."""
    selection = report.selection
    verdict = [f"INCOMPLETE: {read_only_note(report.incomplete)}"] if report.incomplete else []
    verdict += [f"WARNING: {text}" for text in report.warnings]
    if report.verdict is not None:
        verdict += [f"Verdict: {report.verdict.headline}"]
        verdict += [f"         {report.verdict.languages}"] if report.verdict.languages else []
    selected = [
        f"Selected configuration: {selection.config_label} (method {selection.method}, "
        f"adaptation {selection.adaptation}, config_key {selection.config_key})",
        f"  {selection.metric}: {format_mean_std(selection.mean, selection.std)} % "
        f"over {selection.n_seeds} seeds (the best candidate on it; the verdict above says "
        "whether it beats the baseline)",
    ]
    files = _file_lines(report)
    logged = (
        f"Logged to parent run {report.parent_run_id} as {', '.join(report.artifact_paths)}"
        if report.artifact_paths
        else f"Nothing logged to parent run {report.parent_run_id} (the sweep is incomplete)"
    )
    notes = [_registry_line(report.registration)]
    if report.ui_address:
        serve = f" (serve it with: {report.ui_command})" if report.ui_command else ""
        notes.append(f"Runs in the MLflow UI: {report.ui_address}{serve}")
    return [
        *((RESULT, line) for line in verdict),
        *((NOTE, line) for line in selected),
        *((RESULT, line) for line in files),
        (DETAIL, logged),
        *((NOTE, line) for line in notes),
    ]
