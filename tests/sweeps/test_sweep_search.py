"""Strategy `search` end to end: phase 1 (Optuna TPE + ASHA, one seed), phase 2 (top-k and
the baseline over every seed), a report built from phase 2 only, the Optuna study stored.

The driver is killed once the first trial has finished and the sweep is continued with
`--resume`: finished trials are not re-run and no child run is duplicated.
"""

import json
import os
import tempfile
from pathlib import Path

import optuna
import pytest
from mlflow.tracking import MlflowClient
from sweep_helpers import (
    TINY,
    child_runs,
    kill_driver,
    parent_runs,
    resume_sweep,
    smoke_spec,
    start_script,
    wait_for,
)

from analysis.collect import collect_trials
from sweeps.planning import search_space
from sweeps.running import search
from sweeps.running.search_phases import OPTUNA_STORAGE_TAG, OPTUNA_STUDY_TAG
from xlt_core.errors import ConfigError
from xlt_schema import CONFIG_KEY_TAG, PHASE_TAG, STOPPED_EARLY_TAG, TRIAL_ID_TAG


def test_search_takes_training_objectives_and_their_baseline():
    spec = smoke_spec("ear_xnli", ["tiny_layers=2", "layer=2"])
    assert spec.baseline_points() == [{"method": "finetune"}]
    ranges = search_space.search_ranges(spec)
    assert list(ranges) == ["ear"] and ranges["ear"]["layer"] == ("choice", (2,))
    for point in search.starting_points(spec, ranges):  # the names DefineByRun samples
        assert set(point) == {"point/method", *(f"point/{name}" for name in ranges["ear"])}


def test_phase_one_draws_at_most_search_concurrency_configurations_at_once():
    spec = smoke_spec("ear_xnli", ["tiny_layers=2", "layer=2", "search_concurrency=3"])
    searcher = search.phase_one_searcher(spec, "study")
    assert type(searcher).__name__ == "ConcurrencyLimiter" and searcher.max_concurrent == 3
    assert type(searcher.searcher).__name__ == "OptunaSearch"
    assert smoke_spec("ear_xnli", []).search_concurrency == 4  # the documented default


def test_search_refuses_a_sweep_with_an_adaptation():
    spec = smoke_spec("adjust_xnli", [])
    # The adjusted points train with method finetune too: only the plain one is the baseline.
    assert spec.baseline_points() == [{"method": "finetune"}]
    with pytest.raises(ConfigError, match="adaptation adjusted"):
        search_space.search_ranges(spec)


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """A search sweep whose driver is killed after its first finished trial, then resumed.
    Yields the working directory, the tracking URI, and the runs finished before the kill."""
    workdir = tmp_path_factory.mktemp("search")
    uri = f"sqlite:///{workdir / 'mlflow.db'}"
    args = [
        "--preset",
        "smoke",
        "--strategy",
        "search",
        "--tracking-uri",
        uri,
        *TINY,
        "--set",
        "search_trials=3",
    ]
    ray_tmpdir = tempfile.mkdtemp(
        prefix="xr", dir="/tmp"
    )  # short: Ray's socket paths have a length limit
    env = {**os.environ, "RAY_TMPDIR": ray_tmpdir}
    driver = start_script(workdir, *args, env=env)
    try:
        finished = wait_for(
            lambda: [r for r in child_runs(uri) if r.info.status == "FINISHED"],
            300,
            "a finished trial",
        )
    finally:
        kill_driver(driver, ray_tmpdir)
    before = {
        r.info.run_id: r.info.end_time
        for r in child_runs(uri)
        if r.info.status in ("FINISHED", "KILLED")
    }
    assert finished and before
    resumed = resume_sweep(workdir, args, env)
    assert "Resuming sweep" in resumed.stdout
    return workdir, uri, before


@pytest.mark.slow
def test_resume_keeps_finished_trials_and_duplicates_no_run(searched):
    _, uri, before = searched
    runs = {r.info.run_id: r for r in child_runs(uri)}
    for run_id, end_time in before.items():  # finished before the kill: not run again
        assert runs[run_id].info.end_time == end_time
    assert len({r.data.tags[TRIAL_ID_TAG] for r in runs.values()}) == len(runs)
    final = [r for r in runs.values() if r.data.tags[PHASE_TAG] == "final"]
    assert len({(r.data.tags[CONFIG_KEY_TAG], r.data.params["seed"]) for r in final}) == len(final)
    assert len(parent_runs(uri)) == 1


@pytest.mark.slow
def test_each_trial_of_both_phases_has_its_run_name_in_tune(searched):
    """Sampled trials too (named from the searcher's point), through a kill and `--resume`."""
    from ray.tune import ExperimentAnalysis

    workdir, uri, _ = searched
    run_names = {r.data.tags[TRIAL_ID_TAG]: r.info.run_name for r in child_runs(uri)}
    tune_names = {}
    for phase in (path for path in (workdir / "ray_results").iterdir() if path.is_dir()):
        tune_names.update({t.trial_id: str(t) for t in ExperimentAnalysis(str(phase)).trials})
    assert tune_names == run_names


@pytest.mark.slow
def test_phase_one_samples_with_one_seed_and_phase_two_reruns_top_k_and_baseline(searched):
    _, uri, _ = searched
    runs = child_runs(uri)
    search = [r for r in runs if r.data.tags[PHASE_TAG] == "search"]
    final = [r for r in runs if r.data.tags[PHASE_TAG] == "final"]
    assert len(search) == 3 and len(final) == 4 and len(runs) == 7
    assert {r.data.params["seed"] for r in search} == {"0"}
    assert {r.data.params["method"] for r in search} == {"ear"}
    # ASHA may stop a phase-1 trial early: its run is closed as KILLED with the reason.
    for run in search:
        assert run.info.status in ("FINISHED", "KILLED")
        assert (run.info.status == "KILLED") == (STOPPED_EARLY_TAG in run.data.tags)
    assert all(r.info.status == "FINISHED" for r in final)
    pairs = {(r.data.tags[CONFIG_KEY_TAG], r.data.params["seed"]) for r in final}
    assert len(pairs) == 4 and {seed for _, seed in pairs} == {"0", "1"}  # balanced and paired
    final_ear = {r.data.tags[CONFIG_KEY_TAG] for r in final if r.data.params["method"] == "ear"}
    assert len(final_ear) == 1 and final_ear <= {r.data.tags[CONFIG_KEY_TAG] for r in search}
    assert {r.data.params["method"] for r in final} == {"finetune", "ear"}


@pytest.mark.slow
def test_report_is_built_from_phase_two_only(searched, tmp_path):
    _, uri, _ = searched
    (parent,) = parent_runs(uri)
    assert parent.info.status == "FINISHED" and parent.data.tags["xlt.report_phase"] == "final"
    client = MlflowClient(uri)
    final_ids = {r.info.run_id for r in child_runs(uri) if r.data.tags[PHASE_TAG] == "final"}
    assert set(collect_trials(client, parent.info.run_id)["run_id"]) == final_ids
    searched_finished = {
        r.info.run_id
        for r in child_runs(uri)
        if r.data.tags[PHASE_TAG] == "search" and r.info.status == "FINISHED"
    }
    if searched_finished:
        assert (
            set(collect_trials(client, parent.info.run_id, phase="search")["run_id"])
            == searched_finished
        )
    selected = json.loads(
        Path(
            client.download_artifacts(
                parent.info.run_id, "report/selected_config.json", str(tmp_path)
            )
        ).read_text()
    )
    assert selected["run_ids"] and set(selected["run_ids"]) <= final_ids


@pytest.mark.slow
def test_optuna_study_is_stored_for_the_dashboard(searched):
    workdir, uri, _ = searched
    (parent,) = parent_runs(uri)
    storage = parent.data.tags[OPTUNA_STORAGE_TAG]
    assert storage == f"sqlite:///{workdir / 'optuna.db'}"
    study = optuna.load_study(study_name=parent.data.tags[OPTUNA_STUDY_TAG], storage=storage)
    assert len(study.trials) == 3
    assert all(
        set(t.params) == {"point/method", "point/alpha", "point/beta", "point/layer", "point/m"}
        for t in study.trials
    )
    assert all(t.params["point/layer"] == 2 for t in study.trials)  # --set layer=2 fixes that axis
