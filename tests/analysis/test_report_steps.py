"""The report in its steps, on fake sweeps in a SQLite store: the analysis writes nothing,
the Markdown renderer needs nothing but its result, matplotlib waits for the plots, and a
report read from Python registers nothing unless asked (the CLI registers by default)."""

import subprocess
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient
from test_registry_reports import BEST, FEW_KEYS, _make_sweep

from analysis.__main__ import main
from analysis.collect import connect
from analysis.publication import Publication
from analysis.render import render_markdown
from analysis.report import report_sweep
from analysis.section import ReportOptions
from analysis.sweep_analysis import analyse_sweep
from analysis.sweep_records import read_sweep

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return tmp_path_factory.mktemp("report-steps-store")


def _registered(client: MlflowClient, name: str) -> list:
    return client.search_registered_models(filter_string=f"name = '{name}'")


def test_a_python_report_registers_nothing_unless_asked(store, tmp_path):
    uri, client, _, _ = _make_sweep(store, "unasked", "ttest", False, BEST, FEW_KEYS)
    report = report_sweep(uri, "unasked", out_dir=str(tmp_path / "a"))
    assert report.registration is None
    assert _registered(client, "unasked") == []
    assert client.search_model_versions("name = 'unasked'") == []
    assert "Registration was not requested." in report.markdown
    asked = report_sweep(uri, "unasked", out_dir=str(tmp_path / "b"), register=True)
    assert asked.registration.registered and len(_registered(client, "unasked")) == 1


def test_the_cli_registers_by_default(store, tmp_path):
    uri, client, _, _ = _make_sweep(store, "cli_default", "ttest", False, BEST, FEW_KEYS)
    arguments = ["report", "--experiment", "cli_default", "--tracking-uri", uri, "--out"]
    assert main([*arguments, str(tmp_path / "a"), "--no-register"]) == 0
    assert _registered(client, "cli_default") == []
    assert main([*arguments, str(tmp_path / "b")]) == 0
    assert len(_registered(client, "cli_default")) == 1


def test_the_analysis_writes_nothing_and_the_markdown_is_rendered_from_it_alone(store, tmp_path):
    uri, client, parent, _ = _make_sweep(store, "steps", "ttest", False, BEST, FEW_KEYS)
    before = client.get_run(parent).data
    analysis = analyse_sweep(read_sweep(connect(uri), "steps"), ReportOptions())
    after = client.get_run(parent).data
    assert (after.tags, after.metrics) == (before.tags, before.metrics)
    assert client.list_artifacts(parent) == []
    assert analysis.selection.config_label == BEST and analysis.incomplete == ""

    report = report_sweep(uri, "steps", out_dir=str(tmp_path))
    publication = Publication(report.plot_paths, None, report.ui_address, report.ui_command)
    assert render_markdown(analysis, publication) == report.markdown
    assert client.list_artifacts(parent)  # publishing logged the report


@pytest.mark.slow
def test_reading_and_analysing_import_no_matplotlib():
    code = (
        "import sys, analysis.report, analysis.sweep_analysis, analysis.render, "
        "analysis.publish; print('matplotlib' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == "False"
