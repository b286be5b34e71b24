"""docs/extending.md, followed step by step in a temporary package on PYTHONPATH, named in
XLT_PLUGINS: an objective (a declaration with a setting of its own and a class: EAR with a
scaled L1 embedding push, nothing else) and a pair task (a declaration and a loader of
synthetic pairs, nothing else), each run through a sweep's `--dry-run` (a sweep script in the
package: "Add a sweep") and one tiny trial (`python -m xlt_core`, the objective's setting
given with `--set`, a bad value of it refused); a declaration missing a required field stops
the import of the project's configuration, naming the declaration and the field."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import scaled_timeout
from sweep_helpers import run_command
from tiny_trials import TINY_TRIAL
from tracking_stores import tracking_store

REPO = Path(__file__).resolve().parents[2]

# "Add an objective", step 1: the class (it may import torch).
OBJECTIVE_CLASS = '''
from dataclasses import dataclass, replace

from xlt_core.objectives.ear import EAR


@dataclass
class EARL1(EAR):
    """EAR whose embedding push is the L1 distance of the mean-pooled word embeddings,
    times l1_scale."""

    l1_scale: float = 1.0

    @classmethod
    def from_config(cls, config, pad_id, synonyms):
        objective = super().from_config(config, pad_id, synonyms)
        return replace(objective, l1_scale=config.objective.l1_scale)

    def target_weights(self):
        return {"ept_l1": self.alpha, "apt": self.beta}

    def targets(self, output, batch, size):
        parts = super().targets(output, batch, size)
        embeddings = output.hidden_states[0]
        mask = batch["attention_mask"].unsqueeze(-1).to(embeddings.dtype)
        pooled = (embeddings * mask).sum(1) / mask.sum(1)
        parts["ept_l1"] = -self.l1_scale * (pooled[:size] - pooled[size:]).abs().mean()
        return parts
'''
# Step 2: its settings and its declaration, in a torch-free module: EAR's settings and a
# knob of its own.
OBJECTIVE_DECLARATION = """
from dataclasses import dataclass

from xlt_core.objective_settings import setting
from xlt_core.objectives.declarations import EarSettings
from xlt_core.registry import ObjectiveDeclaration, register_objective


@dataclass(frozen=True)
class EarL1Settings(EarSettings):
    l1_scale: float = setting(1.0, at_least=0.0, at_most=10.0, source="the L1 push as is")


register_objective(
    ObjectiveDeclaration(
        name="ear_l1",
        implementation="xlt_demo.ear_l1:EARL1",
        step_cost=1.66,
        settings=EarL1Settings,
        uses_synonyms=True,
        copies=True,
        paired_rows=True,
    )
)
"""
# "Add a task", steps 1 and 2: a loader of synthetic pairs (is the second sentence the
# first?), its language lister and its declaration.
PAIR_TASK = """
import random

from xlt_core.data.examples import PairExample
from xlt_core.registry import ALL, TaskData, TaskDeclaration, register_task

WORDS = {
    "en": ("red", "blue", "cat", "dog", "runs", "sleeps"),
    "de": ("rot", "blau", "katze", "hund", "rennt", "schlaeft"),
}
SIZES = {"train": 48, "dev": 16, "test": 16}


def load(source, split, lang, data_dir):
    rng = random.Random(f"{split}-{lang}")
    sentence = lambda: " ".join(rng.choice(WORDS[lang]) for _ in range(4))
    pairs = []
    for i in range(SIZES[split]):
        first = sentence()
        second = first if i % 2 else sentence()
        pairs.append(PairExample(first, second, int(first == second)))
    return pairs


def languages(source, split, data_dir):
    return tuple(WORDS)


register_task(
    TaskDeclaration(
        name="toy_pairs",
        implementation="xlt_core.tasks.pair_classification_task:PairClassificationTask",
        head="sequence_classification",
        metric="accuracy",
        selection_set="{dev_lang}",
        data=TaskData(train=48, dev=16, test=16, words=8.0),
        objectives=ALL,
        labels=("different", "same"),
        loader="xlt_demo.toy_pairs:load",
        lister="xlt_demo.toy_pairs:languages",
    )
)
"""
# "Add a sweep": both on the new task, one seed.
SWEEP = '''"""Fine-tuning and EAR-L1 on the toy pairs."""

import sys

from sweeps.cli import main
from sweeps.spec.spaces import BASELINE

POINTS = {"smoke": [BASELINE, {"method": "ear_l1", "alpha": 1.0, "beta": 0.1, "layer": 2}]}
SEEDS = {"smoke": [0]}
SIGNIFICANCE_TEST = "ttest"


def trial_settings(preset, data_dir):
    return {"task": "toy_pairs", "target_langs": ["de"], "model": "tiny", "tiny_layers": 2}


if __name__ == "__main__":
    sys.exit(main(sys.modules[__name__]))
'''
PLUGINS = "xlt_demo.ear_l1_declaration,xlt_demo.toy_pairs"
TRIAL = {
    **TINY_TRIAL,
    "layer": 2,
    "max_train_examples": 16,
    "max_eval_examples": 8,
    "max_seq_length": 48,
    "target_langs": "de",
    "m": 1,
}


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """The temporary package `xlt_demo`; returns the folder that holds it."""
    root = tmp_path_factory.mktemp("plugin")
    package = root / "xlt_demo"
    package.mkdir()
    files = {
        "__init__.py": "",
        "ear_l1.py": OBJECTIVE_CLASS,
        "ear_l1_declaration.py": OBJECTIVE_DECLARATION,
        "toy_pairs.py": PAIR_TASK,
        "demo_sweep.py": SWEEP,
    }
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text).lstrip())
    return root


def _environment(root: Path, plugins: str = PLUGINS) -> dict:
    # "Add an objective", step 3: the package on PYTHONPATH, its modules in XLT_PLUGINS.
    return {"PYTHONPATH": f"{root}{os.pathsep}{REPO}", "XLT_PLUGINS": plugins}


def _run(args: list[str], root: Path, plugins: str = PLUGINS) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=root,
        env={**os.environ, **_environment(root, plugins)},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(300),
    )


def _trial(root: Path, **settings) -> tuple[dict, str]:
    values = {**TRIAL, "cache_dir": str(root / "cache"), **settings}
    sets = [arg for key, value in values.items() for arg in ("--set", f"{key}={value}")]
    completed = _run(["-m", "xlt_core", "--threads", "1", *sets], root)
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    return json.loads(out[out.index("{\n") :]), out


def _written(root: Path) -> set[Path]:
    """The files and folders under `root`, less Python's bytecode caches."""
    return {path for path in root.rglob("*") if "__pycache__" not in path.parts}


def test_the_sweep_dry_run_plans_the_new_objective_on_the_new_task(plugin):
    before = _written(plugin)  # the module's trials, when they ran first, left their cache
    completed = _run([str(plugin / "xlt_demo" / "demo_sweep.py"), "--dry-run"], plugin)
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    assert "2 configurations x 1 seeds = 2 trials" in out
    assert "ear_l1 alpha=1 beta=0.1 layer=2 m=1 l1_scale=1" in out
    assert _written(plugin) == before  # nothing trained or tracked


@pytest.mark.slow
def test_the_new_objective_trains_a_tiny_trial(plugin):
    metrics, out = _trial(plugin, task="xnli", method="ear_l1", l1_scale=0)
    assert "dev/en/accuracy" in metrics["metrics"]
    # The plugin's class computed the loss, with the setting given: no L1 push at all.
    assert re.search(r"train/ept_l1=-?0\.0000,", out), out[-3000:]


def test_the_new_objectives_setting_reaches_it(plugin):
    code = (
        "from xlt_core.config import TrialConfig; "
        "from xlt_core.objectives import build_objective; "
        "config = TrialConfig.from_dict({'method': 'ear_l1', 'l1_scale': '2.5'}); "
        "print(build_objective(config, 0, {'dog': ['hound']}).l1_scale)"
    )
    completed = _run(["-c", code], plugin)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "2.5"


@pytest.mark.parametrize(
    ("value", "allowed"),
    [("11", "l1_scale=11.0: a number in [0.0, 10.0]"), ("big", "l1_scale='big': a number")],
)
def test_a_bad_value_of_the_new_objectives_setting_exits_2_naming_it(plugin, value, allowed):
    sets = ["--set", "method=ear_l1", "--set", f"l1_scale={value}"]
    completed = _run(["-m", "xlt_core", *sets], plugin)
    assert completed.returncode == 2
    assert f"error: invalid setting {allowed}" in completed.stderr


@pytest.mark.slow
def test_the_new_task_trains_a_tiny_trial(plugin):
    metrics, _ = _trial(plugin, task="toy_pairs", method="finetune")
    assert {"dev/en/accuracy", "test/de/accuracy", "test/en/accuracy"} <= set(metrics["metrics"])


def test_a_declaration_missing_a_required_field_is_refused_naming_it(plugin):
    broken = plugin / "xlt_demo" / "broken_declaration.py"
    broken.write_text(OBJECTIVE_DECLARATION.replace("step_cost=1.66,", ""))
    completed = _run(["-c", "import xlt_core.config"], plugin, "xlt_demo.broken_declaration")
    assert completed.returncode != 0
    assert "objective declaration 'ear_l1', field step_cost: required" in completed.stderr


@pytest.mark.slow
def test_the_sweep_runs_both_in_ray_workers(plugin, tmp_path):
    """The Ray workers see the plugins: they inherit the driver's environment."""
    from mlflow import MlflowClient

    sweep = plugin / "xlt_demo" / "demo_sweep.py"
    small = ["epochs=1", "max_train_examples=16", "max_eval_examples=8", "max_seq_length=32"]
    overrides = [arg for setting in small for arg in ("--set", setting)]
    client = MlflowClient(tracking_store(tmp_path))
    run_command([str(sweep), *overrides], tmp_path, env=_environment(plugin))
    experiment = client.get_experiment_by_name("demo_sweep")
    runs = [
        run
        for run in client.search_runs([experiment.experiment_id], max_results=100)
        if run.data.tags.get("mlflow.parentRunId")
    ]
    by_method = {run.data.params["method"]: run for run in runs}
    assert set(by_method) == {"finetune", "ear_l1"}
    assert all(run.info.status == "FINISHED" for run in runs)
    assert "train/ept_l1" in by_method["ear_l1"].data.metrics
    assert "test/de/accuracy" in by_method["finetune"].data.metrics


# "Add an objective", step 3, in a sweep: the project's own sweep script with the plugin's
# objective in place of EAR, two of its axes fixed with --set (its own knob, and a layer the
# two-layer model has).
PROJECT_SWEEP = REPO / "sweeps" / "ear_xnli.py"
IN_PLACE_OF_EAR = [
    *("--set", "method=ear_l1", "--set", "l1_scale=0.5"),
    *("--set", "tiny_layers=2", "--set", "layer=2"),
]


def test_a_project_sweep_plans_the_plugin_objective_in_place_of_its_own(plugin):
    completed = _run([str(PROJECT_SWEEP), *IN_PLACE_OF_EAR, "--dry-run"], plugin)
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    assert "Method: ear_l1 in place of ear (--set method=ear_l1), the baseline kept" in out
    # The estimate's rows: trials, tokens, GPU-hours, GiB, then the configuration.
    rows = [line.split() for line in out.splitlines() if line.startswith("       ")]
    labels = [" ".join(row[4:]) for row in rows]
    plugin_point = "ear_l1 alpha=1 beta=0.1 layer=2 m=1 l1_scale=0.5"
    assert labels == [  # the grid's, then the confirmation's (the baseline and the selected)
        "finetune",
        plugin_point,
        "finetune",
        f"the selected configuration ({plugin_point}, costliest candidate)",
    ]


@pytest.mark.slow
def test_a_project_sweep_runs_the_plugin_objective_in_ray_workers(plugin, tmp_path):
    from mlflow import MlflowClient

    small = [
        "epochs=1",
        "max_train_examples=16",
        "max_eval_examples=8",
        "max_seq_length=32",
        "target_langs=es",
        "seeds=0",
        "log_models=false",
        "confirm_seeds=0",  # the grid's runs only: what the plugin trains
    ]
    overrides = [arg for setting in small for arg in ("--set", setting)]
    client = MlflowClient(tracking_store(tmp_path))
    run_command(
        [str(PROJECT_SWEEP), *IN_PLACE_OF_EAR, *overrides], tmp_path, env=_environment(plugin)
    )
    experiment = client.get_experiment_by_name("ear_xnli")
    runs = [
        run
        for run in client.search_runs([experiment.experiment_id], max_results=100)
        if run.data.tags.get("mlflow.parentRunId")
    ]
    by_method = {run.data.params["method"]: run for run in runs}
    assert set(by_method) == {"finetune", "ear_l1"} and len(runs) == 2
    assert all(run.info.status == "FINISHED" for run in runs)
    assert "train/ept_l1" in by_method["ear_l1"].data.metrics
    params = by_method["ear_l1"].data.params
    assert (params["layer"], params["l1_scale"]) == ("2", "0.5")
