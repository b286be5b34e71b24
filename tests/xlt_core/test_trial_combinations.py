"""Every task x method x adaptation, as the registry lists them (plugins named in
XLT_PLUGINS included): supported ones train in-process on a tiny model and report their
objective's loss parts; the others are refused before any work, naming the task and what it
supports."""

import itertools

import pytest
from tiny_trials import TINY_TRIAL

from xlt_core import registry
from xlt_core.config import ADAPTATIONS, TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_resources
from xlt_core.reporting import ListReporter
from xlt_core.tasks import TASKS
from xlt_core.trial import run_trial

# Loss parts each objective logs (as train/<part>), and what continual alignment adds; an
# objective not listed (a plugin's) is held to the cross-entropy every objective logs.
OBJECTIVE_PARTS = {
    "finetune": {"ce"},
    "ear": {"ce", "robust_ce", "ept", "apt"},
    "adv": {"ce", "adv_ce"},
    "rs_rp": {"ce"},
    "rs_da": {"ce"},
    "ear_nt": {"ce", "robust_ce", "apt"},
    "ear_srpt": {"ce", "robust_ce", "ept", "srpt"},
    "rs_syntax": {"ce"},
}
CONTINUAL_PARTS = {"align", "reg"}
# The selection metric each task ranks by, present in every trial's final metrics.
TINY = {
    **TINY_TRIAL,
    "layer": 2,
    "max_train_examples": 16,
    "max_eval_examples": 8,
    "max_seq_length": 48,
    "learning_rate": 1e-3,
    "parallel_max_sentences": 40,
    "adjust_learning_rate": 1e-3,
    "m": 1,
    "epsilon": 0.001,
}
# QA trials read and window every evaluation set (10-15 s each here), and XSR trials fine-tune
# on QA first (40-65 CPU-seconds each, a sixth of the fast tier's CPU): marked slow.
COMBINATIONS = [
    pytest.param(*combination, marks=pytest.mark.slow)
    if combination[0] in ("qa", "xsr")
    else combination
    for combination in itertools.product(
        registry.task_names(), registry.objective_names(), ADAPTATIONS
    )
]


# The tasks that train here on the shared samples (the targets that have en-vi parallel
# data); every other task, a new one included, on its synthetic data.
SHARED_SAMPLE_TASKS = ("ner", "qa", "xsr")


def _settings(task: str, data_dir) -> dict:
    if task not in SHARED_SAMPLE_TASKS:
        return {"task": task, "data_source": "synthetic", "parallel_data": "synthetic"}
    # QA windows need room for the question beside a stride of a third of the length.
    return {
        **({"max_seq_length": 128, "tiny_vocab_size": 2000} if task == "qa" else {}),
        "task": task,
        "data_source": "local",
        "data_dir": str(data_dir),
        "target_langs": "vi",
        "parallel_data": str(data_dir / "parallel"),
    }


def _config(task, method, adaptation, data_dir, cache_dir) -> TrialConfig:
    values = {**TINY, **_settings(task, data_dir), "method": method, "adaptation": adaptation}
    return TrialConfig.from_dict({**values, "cache_dir": str(cache_dir)})


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    # One cache for the module: alignments and adjusted encoders are computed once.
    return tmp_path_factory.mktemp("xlt-cache")


@pytest.fixture(scope="module")
def data_dir():
    from conftest import SHARED_DATA

    return SHARED_DATA


@pytest.mark.parametrize("task,method,adaptation", COMBINATIONS)
def test_each_combination_trains_or_is_refused(task, method, adaptation, data_dir, cache_dir):
    supported = method in TASKS[task].objectives and adaptation in TASKS[task].adaptations
    if task in SHARED_SAMPLE_TASKS and not (data_dir / "panx").is_dir():
        pytest.skip(f"the shared data samples are not at {data_dir}")
    config = _config(task, method, adaptation, data_dir, cache_dir)
    if not supported:
        with pytest.raises(ConfigError) as refused:
            check_resources(config)
        message = str(refused.value)
        assert f"task={task} supports" in message
        assert (method if method not in TASKS[task].objectives else adaptation) in message
        return
    reporter = ListReporter()
    result = run_trial(config, reporter)
    assert config.selection_metric() in result.metrics
    logged = {key.removeprefix("train/") for _, metrics in reporter.reports for key in metrics}
    expected = OBJECTIVE_PARTS.get(method, {"ce"}) | (
        CONTINUAL_PARTS if adaptation == "adjusted_continual" else set()
    )
    assert expected <= logged, f"missing loss parts {expected - logged}"
    if adaptation != "none":
        assert result.metrics["adjust/steps"] >= 1
        assert "adjust/aligned_distance_after" in result.metrics
    else:
        assert not any(key.startswith("adjust/") for key in result.metrics)
