"""A dead baseline end to end (issue 41, item 3): with `--max-failures 0` the baseline's trials
(both seeds) fail; the sweep exits 1 with one line saying why no report can be made and which
trials `--resume` runs again; after the fix, that `--resume` runs only those trials again
(each in its own run) and writes the report. In-process tests of the same: tests/sweeps/
test_interruption.py (`test_a_dead_baseline_...`)."""

import pytest
from conftest import what_went_wrong
from sweep_helpers import child_runs, parent_runs, plugin_sweep, sqlite_uri

from xlt_schema import CONFIG_KEY_TAG, FAILURE_TAG, PREVIOUS_FAILURE_TAG

# Imported by every process of the sweep (XLT_PLUGINS): the baseline's training raises while
# the marker file exists (the bug that the user then fixes).
BROKEN_BASELINE_PLUGIN = """
import os
from pathlib import Path

import xlt_core.trial

_run_trial = xlt_core.trial.run_trial


def _broken_baseline(config, reporter):
    if config.method == "finetune" and Path(os.environ["XLT_TEST_BROKEN"]).exists():
        raise RuntimeError("the baseline is broken (a test's bug)")
    return _run_trial(config, reporter)


xlt_core.trial.run_trial = _broken_baseline
"""


@pytest.mark.slow
def test_a_dead_baseline_exits_1_in_one_line_and_its_resume_reruns_only_it(tmp_path):
    broken = tmp_path / "broken"
    broken.touch()
    uri = sqlite_uri(tmp_path)
    plugin = ("broken_baseline", BROKEN_BASELINE_PLUGIN)
    run = plugin_sweep(tmp_path, tmp_path, uri, *plugin, XLT_TEST_BROKEN=str(broken))
    dead = run()
    assert dead.returncode == 1, what_went_wrong(dead)
    line = dead.stderr.strip().splitlines()[-1]
    assert line.startswith("error: no report can be made: the baseline"), dead.stderr[-3000:]
    assert "finetune seed=0 (RuntimeError" in line and line.endswith("--resume")
    assert "unexpected error" not in dead.stderr  # not the driver's crash
    before = {run.info.run_id: run for run in child_runs(uri)}
    statuses = sorted(run.info.status for run in before.values())
    assert statuses == ["FAILED", "FAILED", "FINISHED", "FINISHED"]  # both baseline seeds

    broken.unlink()  # the fix
    resumed = run("--resume")
    assert resumed.returncode == 0, what_went_wrong(resumed)
    after = {run.info.run_id: run for run in child_runs(uri)}
    assert after.keys() == before.keys()  # the same runs, none added
    assert len({(r.data.tags[CONFIG_KEY_TAG], r.data.params["seed"]) for r in after.values()}) == 4
    for key, run_after in after.items():
        assert run_after.info.status == "FINISHED" and FAILURE_TAG not in run_after.data.tags
        if before[key].info.status == "FINISHED":  # not run again
            assert run_after.info.end_time == before[key].info.end_time
        else:  # the baseline's, run again: its failure kept as history
            assert "the baseline is broken" in run_after.data.tags[PREVIOUS_FAILURE_TAG]
    (parent,) = parent_runs(uri)
    assert parent.info.status == "FINISHED" and parent.data.tags["xlt.reported"] == "true"
