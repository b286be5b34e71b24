"""Turn a finished sweep on the tracking server into report.md and selected_config.json."""

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
from mlflow.entities import Run

from analysis.collect import (collect_trials, connect, find_parent_run, parse_metric_key,
                              split_languages, tidy_metrics)
from analysis.select import (CONFIG_COLUMNS, DEFAULT_BASELINE_METHOD, TEST_SPLIT, Selection,
                             aggregate_over_seeds, baseline_config_key, compare_to_baseline,
                             select_best)
from analysis.stats import CONFIDENCE_LEVEL

REPORT_ARTIFACT_DIR = "report"
MARKDOWN_NAME = "report.md"
JSON_NAME = "selected_config.json"
TABLE_SPLITS = ("dev", TEST_SPLIT)
SIGNIFICANCE_LEVEL = 0.05


@dataclass(frozen=True)
class SweepReport:
    """Where a sweep's report went and what it concluded."""

    parent_run_id: str
    selection: Selection
    markdown_path: str
    json_path: str
    markdown: str
    comparison: pd.DataFrame  # one row per test language, see compare_to_baseline
    artifact_paths: tuple[str, ...]  # on the parent run


def format_mean_std(mean: float, std: float) -> str:
    """A fraction's mean ± std in percent with one decimal (no ± when std is undefined)."""
    if math.isnan(std):
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} ± {100 * std:.1f}"


def _format_params(params: dict) -> str:
    return ", ".join(f"{name}={value}" for name, value in params.items()) or "(none)"


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", r"\|") for cell in cells) + " |"


def _markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_markdown_row(header), _markdown_row(["---"] * len(header)),
            *(_markdown_row(row) for row in rows)]


def _score_table(trials: pd.DataFrame, scores: pd.DataFrame, split: str, metric_name: str,
                 baseline_key: str, selected_key: str) -> list[str]:
    """Configurations x languages of mean ± std over seeds, baseline first."""
    title = [f"## {split} {metric_name} (%)", ""]
    split_scores = scores[(scores["split"] == split) & (scores["metric"] == metric_name)]
    if split_scores.empty:
        return [*title, f"_No {split} {metric_name} was logged._"]
    languages = split_languages(trials, split)
    configs = sorted(split_scores[CONFIG_COLUMNS].drop_duplicates().itertuples(index=False),
                     key=lambda config: (config.config_key != baseline_key, config.config_label))
    rows = []
    for config in configs:
        cells = split_scores[split_scores["config_key"] == config.config_key].set_index("lang")
        label = config.config_label
        if config.config_key == baseline_key:
            label = f"**Baseline:** {label}"
        if config.config_key == selected_key:
            label = f"{label} **(selected)**"
        values = [format_mean_std(cells.at[lang, "mean"], cells.at[lang, "std"])
                  if lang in cells.index else "–" for lang in languages]
        rows.append([label, str(cells["n_seeds"].max()), *values])
    return [*title, *_markdown_table(["Configuration", "Seeds", *languages], rows), "",
            "Cells: mean ± standard deviation over seeds, in percent."]


def _selection_section(selection: Selection, baseline_method: str) -> list[str]:
    rule = (f"Rule: the non-baseline configuration with the highest mean {selection.metric} over "
            "seeds; ties go to the lower standard deviation over seeds, then to the alphabetically "
            "first label. Test scores play no part in the choice.")
    if selection.method == baseline_method:
        rule += " No non-baseline configuration finished, so the baseline is selected."
    return ["## Selected configuration", "", rule, "",
            f"- Configuration: {selection.config_label} (method `{selection.method}`, "
            f"config_key `{selection.config_key}`)",
            f"- Parameters: {_format_params(selection.params)}",
            f"- Mean {selection.metric}: {format_mean_std(selection.mean, selection.std)}"
            f" % over {selection.n_seeds} seeds",
            f"- Runs: {', '.join(f'`{run_id}`' for run_id in selection.run_ids)}"]


def _comparison_section(comparison: pd.DataFrame) -> list[str]:
    rows = [[row.lang, f"{100 * row.system_mean:.1f}", f"{100 * row.baseline_mean:.1f}",
             f"{100 * row.mean_difference:+.1f}",
             f"[{100 * row.ci_low:+.1f}, {100 * row.ci_high:+.1f}]",
             f"{row.p_value:.3g}" + (" *" if row.p_value < SIGNIFICANCE_LEVEL else ""),
             str(row.n_examples)]
            for row in comparison.itertuples(index=False)]
    confidence = f"{100 * CONFIDENCE_LEVEL:.0f}%"
    return [f"## Selected configuration vs baseline ({TEST_SPLIT})", "",
            f"Two-sided paired t-test over examples on per-example scores averaged over the "
            f"{comparison['n_seeds'].iloc[0]} seed(s) both ran. Δ and its {confidence} CI are "
            f"in percentage points; * marks p < {SIGNIFICANCE_LEVEL}.", "",
            *_markdown_table(["Language", "Selected (%)", "Baseline (%)", "Δ (points)",
                              f"{confidence} CI", "p-value", "Examples"], rows)]


def render_markdown(experiment: str, parent: Run, trials: pd.DataFrame, selection: Selection,
                    comparison: pd.DataFrame, baseline_method: str = DEFAULT_BASELINE_METHOD) -> str:
    """The whole report.md text."""
    _, _, metric_name = parse_metric_key(selection.metric)
    scores = aggregate_over_seeds(tidy_metrics(trials))
    baseline_key = baseline_config_key(trials, baseline_method)
    lines = [f"# Sweep report: {experiment}, parent run `{parent.info.run_id}`", "",
             f"Finished trials: {len(trials)}; baseline method: `{baseline_method}`."]
    for split in TABLE_SPLITS:
        lines += ["", *_score_table(trials, scores, split, metric_name, baseline_key,
                                    selection.config_key)]
    lines += ["", *_selection_section(selection, baseline_method),
              "", *_comparison_section(comparison)]
    if parent.data.params:
        lines += ["", "## Sweep settings", "",
                  *(f"- {name}: {value}" for name, value in sorted(parent.data.params.items()))]
    return "\n".join(lines) + "\n"


def _strict_json(value):
    """NaN and infinities become null: strict JSON readers reject them."""
    if isinstance(value, dict):
        return {key: _strict_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _selection_payload(experiment: str, parent_run_id: str, selection: Selection,
                       comparison: pd.DataFrame, baseline_method: str) -> dict:
    return _strict_json({"experiment": experiment, "parent_run_id": parent_run_id,
                         **asdict(selection), "baseline_method": baseline_method,
                         "test_comparison": comparison.to_dict(orient="records")})


def report_sweep(tracking_uri: str, experiment: str, parent_run_id: str | None = None,
                 out_dir: str | None = None) -> SweepReport:
    """Write report.md and selected_config.json for a sweep and log them to its parent run.

    Without ``parent_run_id`` the newest parent run with finished trials is reported.
    Without ``out_dir`` the files go to a new temporary directory that is kept.
    """
    # One progress bar per downloaded score file would bury the summary.
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    client = connect(tracking_uri)
    parent = find_parent_run(client, experiment, parent_run_id)
    run_id = parent.info.run_id
    trials = collect_trials(client, run_id)
    selection = select_best(trials)
    comparison = compare_to_baseline(client, trials, selection.config_key)
    markdown = render_markdown(experiment, parent, trials, selection, comparison)

    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="sweep-report-"))
    out.mkdir(parents=True, exist_ok=True)
    markdown_path, json_path = out / MARKDOWN_NAME, out / JSON_NAME
    markdown_path.write_text(markdown, encoding="utf-8")
    payload = _selection_payload(experiment, run_id, selection, comparison, DEFAULT_BASELINE_METHOD)
    json_path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    for path in (markdown_path, json_path):
        client.log_artifact(run_id, str(path), artifact_path=REPORT_ARTIFACT_DIR)

    return SweepReport(parent_run_id=run_id, selection=selection, markdown_path=str(markdown_path),
                       json_path=str(json_path), markdown=markdown, comparison=comparison,
                       artifact_paths=tuple(f"{REPORT_ARTIFACT_DIR}/{path.name}"
                                            for path in (markdown_path, json_path)))


def format_summary(report: SweepReport) -> str:
    """What a sweep or the CLI prints at the end: the selection and where the report went."""
    selection = report.selection
    return "\n".join([
        f"Selected configuration: {selection.config_label} (method {selection.method}, config_key {selection.config_key})",
        f"  {selection.metric}: {format_mean_std(selection.mean, selection.std)} % over {selection.n_seeds} seeds",
        f"Report files: {report.markdown_path}",
        f"              {report.json_path}",
        f"Logged to parent run {report.parent_run_id} as {', '.join(report.artifact_paths)}",
    ])
