"""What a newcomer sees of the demo (`make demo`: sweeps/ear_xnli.py --preset smoke) and of
its report: by default the plan, a line per finished trial with its score and the ETA, and the
closing summary, without the libraries' own notes, warnings and progress bars (silenced where
they are made: sweeps/running/library_output.py, xlt_schema/log.py); a failed trial still shows."""

import os
import re
import subprocess
import sys

import pytest
from conftest import scaled_timeout, what_went_wrong
from scripted_trials import DIVERGING_TRIAL
from sweep_helpers import ONE_EAR, REPO, run_command
from tracking_stores import sqlite_uri, tracking_store

from sweeps.cli import EXIT_TRIALS_FAILED
from sweeps.running.trainable import TRIAL_FUNCTION_ENV

DEMO = [str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "smoke"]
# What Ray, Tune, MLflow and the trial workers printed of their own before (issue 45).
LIBRARY_LINES = (
    "Token authentication",  # Ray's warning that it turned token authentication on
    "Configuration for experiment",  # Tune's box
    "View detailed results here",  # Tune
    "Checkpoint successfully created",  # Ray Train, after every evaluation
    "Creating initial MLflow database tables",  # MLflow, on a new store
    "(run_tracked_trial pid=",  # anything a trial worker prints
)
# A tqdm bar's percentage or rate ("Loading weights: 100%|...| 41/41 [00:00<00:00, 7226.70it/s]").
PROGRESS_BAR = re.compile(r"\d%\||it/s\]|s/it\]")


def library_lines(lines: list[str]) -> list[str]:
    """The lines a library printed: a warning that is not the report's own (`WARNING: `,
    its sanity checks), the known notes above, progress bars."""
    return [
        line
        for line in lines
        if ("WARNING" in line and not line.startswith("WARNING: "))
        or any(text in line for text in LIBRARY_LINES)
        or PROGRESS_BAR.search(line)
    ]


@pytest.mark.slow
def test_the_demos_default_output_is_the_plan_the_trials_and_the_summary(ear_xnli_smoke):
    completed = ear_xnli_smoke.completed  # the demo's command, shrunk by --set values
    lines = (completed.stdout + completed.stderr).splitlines()
    assert len(lines) <= 40, what_went_wrong(completed)
    assert library_lines(lines) == [], what_went_wrong(completed)
    out = completed.stdout
    assert re.search(
        r"^Sweep ear_xnli \(smoke, grid\): 3 configurations x 2 seeds, then the selected and "
        r"the baseline x 2 fresh seeds; ",
        out,
        re.M,
    )

    def ended(phase: str) -> list[str]:
        return sorted(
            re.findall(
                rf"^\[{phase}\] \S.*seed=\d: dev score [01]\.\d{{3}}; trials: (\d) ended, "
                r"\d running, \d pending; ETA \S+$",
                out,
                re.M,
            )
        )

    assert ended("grid") == ["1", "2", "3", "4", "5", "6"], out
    # The selected configuration and the baseline on fresh seeds 2 and 3 (none when the
    # baseline is selected), and the verdict decided on them.
    confirmed = re.search(r"^Confirmation: (.*) \(selected on dev\) and finetune", out, re.M)
    if confirmed:
        assert ended("confirm") == ["1", "2", "3", "4"], out
        assert "Decided on the confirmation phase's 2 fresh seeds (2, 3)" in out
    else:
        assert "The baseline is selected: no confirmation phase" in out, out
    assert "] step " not in out and "] finished: " not in out  # the trials' lines: -v
    assert re.search(r"^Verdict: .*the selected configuration ", out, re.M | re.I)
    report = re.search(r"^Report files: (\S+/report\.md)$", out, re.M)
    assert report and (ear_xnli_smoke.workdir / report.group(1)).is_file(), out
    assert re.search(r"^Runs in the MLflow UI: http://127\.0\.0\.1:5000/\S+ \(serve it", out, re.M)


@pytest.mark.slow
def test_the_report_of_the_demos_store_is_a_few_lines(ear_xnli_smoke, tmp_path):
    sweep = ear_xnli_smoke.copy_to(tmp_path / "copy")  # a report writes to the store
    report = ["report", "--experiment", "ear_xnli", "--out", str(tmp_path / "report")]
    completed = run_command(["-m", "analysis", *report], sweep.workdir)
    lines = (completed.stdout + completed.stderr).splitlines()
    assert len(lines) <= 15, what_went_wrong(completed)
    assert library_lines(lines) == [], what_went_wrong(completed)
    assert re.search(r"^Verdict: ", completed.stdout, re.M)
    assert f"Report files: {tmp_path / 'report' / 'report.md'}" in lines
    assert "Logged to parent run " not in completed.stdout  # a detail: -v only


@pytest.mark.slow
def test_a_failed_trial_shows_in_the_default_output(tmp_path):
    # Scripted trials (tests/scripted_trials.py): one of six (the paper's EAR
    # setting and the baseline, 3 seeds: 2 are left, as the seed-aware test needs) diverges.
    tracking_store(tmp_path)
    env = {
        **os.environ,
        "MLFLOW_TRACKING_URI": sqlite_uri(tmp_path),
        TRIAL_FUNCTION_ENV: DIVERGING_TRIAL,  # the Ray workers inherit it
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH")])
        ),
    }
    completed = subprocess.run(
        [sys.executable, *DEMO, *ONE_EAR, "--set", "seeds=0,1,2", "--set", "log_models=false"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(600),
    )
    assert completed.returncode == EXIT_TRIALS_FAILED, what_went_wrong(completed)
    lines = (completed.stdout + completed.stderr).splitlines()
    assert library_lines(lines) == [], what_went_wrong(completed)
    failed = [line for line in lines if ": failed: " in line]
    assert len(failed) == 1, what_went_wrong(completed)
    assert re.match(
        r"\[grid\] ear alpha=1 \S.* seed=1: failed: TrainingDiverged: loss became nan at step 2 "
        r"\(scripted\); trials: \d ended \(1 failed\), ",
        failed[0],
    ), failed[0]
    # The 6 trials of the grid and the confirmation's 6 (ear alpha=1 and the baseline on
    # fresh seeds 3, 4, 5, none of which diverges).
    assert "11 of 12 trials of the reported phase finished; 1 trials failed in all" in lines
