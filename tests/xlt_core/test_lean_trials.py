"""Lean trials: what a trial imports, the threads `python -m xlt_core` takes, the checkpoints
`ListReporter` keeps, and the one training step the trial and the benchmarks share."""

import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch
from conftest import require_shared_data

import xlt_core.__main__ as xlt_main
from xlt_core import trial
from xlt_core.config import TrialConfig
from xlt_core.cpus import available_cpus
from xlt_core.errors import TrainingDiverged
from xlt_core.registry import HEADS
from xlt_core.reporting import ListReporter
from xlt_core.train import epoch_batches, train
from xlt_core.trial_result import TrialResult

REPO = Path(__file__).resolve().parents[2]
CPU = torch.device("cpu")
# Libraries an XNLI trial has no use for: seqeval (NER scoring) pulls in scikit-learn and
# pandas; transformers' modelling stack (~2 s, scipy with it) waits until a model is built.
HEAVY = ("seqeval", "sklearn", "pandas", "scipy", "transformers.modeling_utils")

# --- imports ----------------------------------------------------------------------------

PROBE = """
import json, sys
import xlt_core.trial
from xlt_core.config import TrialConfig
from xlt_core.preflight import check_resources
loaded = {}
loaded["import xlt_core.trial"] = sorted(m for m in HEAVY if m in sys.modules)
check_resources(TrialConfig(task="xnli", cache_dir=sys.argv[1]))
loaded["xnli check_resources"] = sorted(m for m in HEAVY if m in sys.modules)
from xlt_core.tasks.token_classification import entity_counts
entity_counts(["B-PER", "I-PER"], ["B-PER", "O"])
loaded["NER scoring"] = sorted(m for m in HEAVY if m in sys.modules)
print(json.dumps(loaded))
"""


@pytest.mark.slow
def test_an_xnli_trial_imports_no_ner_or_modelling_library_until_it_needs_one(tmp_path):
    script = f"HEAVY = {HEAVY!r}\n{PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=True,
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded["import xlt_core.trial"] == []
    assert loaded["xnli check_resources"] == []
    # NER scoring does import seqeval and what it pulls in: the probe sees an import.
    assert {"seqeval", "sklearn"} <= set(loaded["NER scoring"])


# Every task's smoke sweep (the adjust sweeps check parallel data for their adaptations), on
# the synthetic data or, given a data directory, on local files, which read_data reads.
DRIVER_PROBE = """
import dataclasses, json, sys
import sweeps.running.runner, sweeps.running.search, sweeps.running.trainable
from sweeps import adjust_ner, adjust_qa, adjust_xsr, ear_pawsx, ear_xnli
from sweeps.cli import resolve_paths
from sweeps.spec.experiment import experiment_spec
cache_dir, data_dir = sys.argv[1], sys.argv[2] or None
for script in (ear_xnli, ear_pawsx, adjust_ner, adjust_qa, adjust_xsr):
    spec = experiment_spec(script, "smoke", data_dir)
    spec = dataclasses.replace(spec, base={**spec.base, "cache_dir": cache_dir})
    sweeps.running.runner.check_sweep(resolve_paths(spec))
print(json.dumps(sorted(m for m in ("torch", "transformers") if m in sys.modules)))
"""


@pytest.mark.parametrize("data", ["synthetic", "local"])
@pytest.mark.slow
def test_the_sweep_driver_checks_every_task_without_torch_or_transformers(data, tmp_path):
    """The driver never trains: its pre-flight checks and reads of every task's smoke sweep
    (with and without an adaptation) leave torch and transformers to the trials."""
    data_dir = ""
    if data == "local":
        samples = ("xnli", "pawsx", "panx", "xquad", "mlqa", "tydiqa", "tatoeba", "parallel")
        data_dir = str(require_shared_data(*samples))
    done = subprocess.run(
        [sys.executable, "-c", DRIVER_PROBE, str(tmp_path), data_dir],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=True,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.parametrize("head", sorted(HEADS))
def test_each_head_names_the_tiny_class_the_auto_class_builds_for_bert(head):
    import transformers
    from tiny_models import tiny_bert_config

    tiny_class, auto_class = (getattr(transformers, name) for name in HEADS[head])
    bert = tiny_bert_config(50, hidden_size=8, layers=1)
    assert type(auto_class.from_config(bert)) is tiny_class


@pytest.mark.parametrize("as_script", [True, False])
def test_only_a_sweep_script_process_skips_its_final_garbage_collection(monkeypatch, as_script):
    """Run as a script, a sweep freezes the heap as it ends (the interpreter's last collection
    would walk it for seconds); called in-process, as here, it leaves the caller's heap alone."""
    import gc
    import types

    from sweeps import cli, ear_xnli

    script = types.ModuleType("__main__" if as_script else ear_xnli.__name__)
    script.__dict__.update({k: v for k, v in vars(ear_xnli).items() if k != "__name__"})
    monkeypatch.setattr(cli, "_run", lambda spec, args, resume_command: 0)
    frozen = gc.get_freeze_count()
    try:
        assert cli.main(script, ["--set", "seeds=0"]) == 0
        assert (gc.get_freeze_count() > frozen) == as_script
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("module", ["analysis", "xlt_core"])
def test_the_report_and_trial_commands_freeze_the_heap_as_they_exit(module, monkeypatch, tmp_path):
    """`python -m analysis` and `python -m xlt_core` skip the final collection as the sweep
    scripts do; here each exits on bad input (exit 2) after its `main` returned."""
    import gc
    import runpy

    from tracking_stores import tracking_store

    argv = {
        "analysis": [
            "report",
            "--experiment",
            "nobody",
            "--tracking-uri",
            tracking_store(tmp_path),
        ],
        "xlt_core": ["--set", "epochs=-1"],
    }[module]
    monkeypatch.setattr(sys, "argv", [module, *argv])
    frozen = gc.get_freeze_count()
    try:
        with pytest.raises(SystemExit) as exited:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        assert exited.value.code == 2
        assert gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()


# --- python -m xlt_core: threads, one check -------------------------------------------


@pytest.fixture
def restore_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def threads_of_the_trial(monkeypatch, restore_threads):
    """Runs `main(argv)` with a stand-in trial; returns the torch threads it ran with."""

    def run(argv):
        seen = []

        def fake_trial(config, reporter):
            seen.append(torch.get_num_threads())
            return TrialResult({"dev/en/accuracy": 0.5}, {})

        monkeypatch.setattr(xlt_main, "run_trial", fake_trial)
        assert xlt_main.main(argv) == 0
        return seen[0]

    return run


def test_threads_default_to_the_cpus_of_the_process_affinity(monkeypatch, threads_of_the_trial):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    assert available_cpus() == 3
    assert threads_of_the_trial([]) == 3
    assert threads_of_the_trial(["--threads", "1"]) == 1


def test_an_explicit_omp_num_threads_sets_the_trial_threads(monkeypatch, threads_of_the_trial):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads_of_the_trial([]) == 1
    assert threads_of_the_trial(["--threads", "2"]) == 2


def test_without_affinity_the_machine_cpu_count_is_used(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert available_cpus() == 6


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_thread_count_is_refused_naming_the_flag(value, capsys, restore_threads):
    with pytest.raises(SystemExit) as stopped:
        xlt_main.main(["--threads", value])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert "--threads" in error and "positive integer" in error and repr(value) in error


def test_the_resources_are_checked_once(monkeypatch, restore_threads):
    calls = []

    class Stop(Exception):
        pass

    def spy(config):
        calls.append(config)

    def stop(seed):
        raise Stop

    # Whichever module holds a name for it, every call is counted.
    monkeypatch.setattr(trial, "check_resources", spy)
    monkeypatch.setattr(xlt_main, "check_resources", spy, raising=False)
    monkeypatch.setattr(trial, "seed_everything", stop)  # the first step after the check
    with pytest.raises(Stop):
        xlt_main.main(["--set", "seed=3"])
    assert len(calls) == 1 and calls[0].seed == 3


def test_a_bad_setting_still_exits_with_status_2(capsys, restore_threads):
    assert xlt_main.main(["--set", "task=ner", "--set", "method=ear"]) == 2
    assert "task=ner supports method" in capsys.readouterr().err


# --- checkpoints and the training step ----------------------------------------------------


class Items:
    """A training set of scalars whose loss pulls a Linear(1, 1) towards 1."""

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size

    def lengths(self):
        return [1 + i % 7 for i in range(self.size)]

    def batch(self, indices):
        return {"x": torch.tensor([[i / self.size] for i in indices])}


class SquaredError:
    name = "test"

    def __init__(self, nan_at=None):
        self.calls, self.nan_at = 0, nan_at

    def loss(self, model, batch):
        self.calls += 1
        loss = ((model(batch["x"]) - 1.0) ** 2).mean()
        if self.calls == self.nan_at:
            loss = loss * float("nan")
        return loss, {"ce": loss}


# 60 items in batches of 8: 8 steps per epoch, 16 in all; an evaluation every 2 steps.
TRAINING = dict(batch_size=8, epochs=2.0, evals_per_epoch=4, learning_rate=1e-2, seed=2)


def rising_dev_metric():
    """Each evaluation scores better than the last, so the last step's weights are kept."""
    count = iter(range(1000))
    return lambda: float(next(count))


def test_list_reporter_keeps_only_the_latest_checkpoint_and_close_removes_it(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    torch.manual_seed(0)
    with ListReporter() as reporter:
        train(
            torch.nn.Linear(1, 1),
            SquaredError(),
            Items(60),
            TrialConfig(**TRAINING),
            rising_dev_metric(),
            reporter,
            CPU,
        )
        assert [step for step, _ in reporter.reports] == [2, 4, 6, 8, 10, 12, 14, 16]
        # Of the eight checkpoints only the last is left, beside nothing of train()'s own.
        (kept,) = tmp_path.iterdir()
        assert [p.name for p in kept.iterdir()] == ["step-16"]
        assert reporter.latest_checkpoint() == str(kept / "step-16")
        assert (kept / "step-16" / "trainer_state.pt").is_file()
    assert list(tmp_path.iterdir()) == []
    assert reporter.latest_checkpoint() is None


def test_a_run_resumes_from_the_one_checkpoint_kept():
    config = TrialConfig(**TRAINING)
    torch.manual_seed(0)
    whole = torch.nn.Linear(1, 1)
    with ListReporter() as reporter:
        train(whole, SquaredError(), Items(60), config, rising_dev_metric(), reporter, CPU)
    torch.manual_seed(0)
    resumed = torch.nn.Linear(1, 1)
    with ListReporter() as reporter:
        stopped_at_5 = SquaredError(nan_at=5)  # after the checkpoint at step 4
        with pytest.raises(TrainingDiverged, match="at step 5 "):
            train(resumed, stopped_at_5, Items(60), config, rising_dev_metric(), reporter, CPU)
        train(resumed, SquaredError(), Items(60), config, rising_dev_metric(), reporter, CPU)
    for a, b in zip(whole.parameters(), resumed.parameters()):
        torch.testing.assert_close(a, b)


def test_the_benchmarks_take_the_training_loops_step(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))  # `benchmarks` is a folder, not an installed package
    from benchmarks.workload import Trainer

    config, items = TrialConfig(**TRAINING), Items(60)
    torch.manual_seed(0)
    trained = torch.nn.Linear(1, 1)
    with ListReporter() as reporter:
        outcome = train(trained, SquaredError(), items, config, rising_dev_metric(), reporter, CPU)
    torch.manual_seed(0)
    stepped = torch.nn.Linear(1, 1)
    trainer = Trainer(stepped, config, total_steps=outcome.steps)
    lengths = items.lengths()
    for epoch in (0, 1):
        for indices in epoch_batches(len(items), config.batch_size, config.seed, epoch, lengths):
            trainer.step(SquaredError(), items, indices)
    for a, b in zip(trained.parameters(), stepped.parameters()):
        torch.testing.assert_close(a, b)


@pytest.mark.slow
def test_python_m_xlt_core_leaves_no_checkpoint_behind(monkeypatch, tmp_path, capsys):
    # BERT's modeling module imports torch._dynamo, which makes torch's own cache folder in the
    # temporary directory: imported here first, as any earlier test in the session does.
    importlib.import_module("transformers.models.bert.modeling_bert")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    settings = {
        "epochs": "0.5",
        "evals_per_epoch": "6",
        "tiny_layers": "2",
        "max_train_examples": "200",
        "max_eval_examples": "40",
        "cache_dir": str(tmp_path / "cache"),
    }
    argv = ["--threads", "1"] + [a for k, v in settings.items() for a in ("--set", f"{k}={v}")]
    threads = torch.get_num_threads()
    try:
        assert xlt_main.main(argv) == 0
    finally:
        torch.set_num_threads(threads)
    shown = capsys.readouterr().out
    assert shown.count("train/dev_accuracy=") >= 3  # several evaluations, each a checkpoint
    assert json.loads(shown[shown.index("{") :])["metrics"]["dev/en/accuracy"] >= 0
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]
