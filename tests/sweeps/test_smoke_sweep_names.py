"""What the shared smoke sweep (`ear_xnli_smoke`, read only) recorded under which names: every
tag ours (`xlt.`) or MLflow's (`mlflow.`), params only for settings that apply, and each
trial's name in Ray Tune its MLflow run's name."""

import pytest
from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME
from sweep_helpers import child_runs, parent_runs

from xlt_schema import NO_ADAPTATION, TAG_PREFIX, TRIAL_ID_TAG

pytestmark = pytest.mark.slow


def _runs(sweep):
    return [*parent_runs(sweep.uri), *child_runs(sweep.uri)]


def test_every_tag_of_the_sweeps_runs_is_ours_or_mlflows(ear_xnli_smoke):
    runs = _runs(ear_xnli_smoke)
    assert len(runs) == 11  # the parent, its grid's 6 trials and the confirmation's 4
    stray = {
        (run.info.run_name, key)
        for run in runs
        for key in run.data.tags
        if not key.startswith((TAG_PREFIX, "mlflow."))  # MLflow's own tags
    }
    assert stray == set()


def test_no_run_logs_a_param_for_a_setting_that_does_not_apply(ear_xnli_smoke):
    for run in _runs(ear_xnli_smoke):
        unset = {
            name
            for name, value in run.data.params.items()
            if value.lower() in ("none", "")
            and not (name == "adaptation" and value == NO_ADAPTATION)  # a value, not "unset"
        }
        assert unset == set(), run.info.run_name
    trials = child_runs(ear_xnli_smoke.uri)
    baseline = [run for run in trials if run.data.params["method"] == "finetune"]
    assert baseline and all("alpha" not in run.data.params for run in baseline)


def test_each_trials_name_in_tune_is_its_mlflow_run_name(ear_xnli_smoke):
    from ray.tune import ExperimentAnalysis

    run_names = {
        run.data.tags[TRIAL_ID_TAG]: run.data.tags[MLFLOW_RUN_NAME]
        for run in child_runs(ear_xnli_smoke.uri)
    }
    phases = [path for path in (ear_xnli_smoke.workdir / "ray_results").iterdir() if path.is_dir()]
    assert sorted(path.name.rsplit("-", 1)[1] for path in phases) == ["confirm", "grid"]
    tune_names = {
        trial.trial_id: str(trial)
        for phase in phases
        for trial in ExperimentAnalysis(str(phase)).trials
    }
    assert len(tune_names) == 10  # the grid's 6 trials and the confirmation's 4
    assert tune_names == run_names
