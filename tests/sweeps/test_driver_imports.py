"""The sweep driver imports no torch (issue 24): its pre-flight (settings, data, the model's
depth and positions from its config.json, the cost plan), the tracking store and the parent
run, and Tune's side of a real sweep leave torch and transformers to the trials."""

import json
import os
import subprocess
import sys

import pytest
from conftest import require_shared_data, scaled_timeout
from sweep_helpers import REPO, TINY

from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_resources, model_config_fields, model_max_positions

HEAVY = ("torch", "transformers")
BERT_CONFIG = {
    "model_type": "bert",
    "num_hidden_layers": 12,
    "hidden_size": 768,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "vocab_size": 119_547,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}

# The paper preset on a local model directory and the shared XNLI sample: the dry run, then the
# real command with Ray's start and the phases mocked, so that the pre-flight (every local
# file read), the store and the parent run are the driver's own. Prints what it saw as JSON.
PAPER_DRIVER = """
import json, sys
from unittest import mock
import ray
from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.strategies.grid import GridPhases
args = ["--preset", "paper", "--data-dir", sys.argv[2], "--set", f"model={sys.argv[1]}",
        "--set", "seeds=0", "--set", "target_langs=de,es"]
dry_run = main(ear_xnli, [*args, "--dry-run"])
parents = []
def run_no_phase(self):
    parents.append(self.phases.parent_run_id)
    return [], 0
with mock.patch.object(ray, "is_initialized", return_value=False), \\
        mock.patch.object(ray, "init"), mock.patch.object(ray, "shutdown"), \\
        mock.patch.object(ray, "nodes", return_value=[]), \\
        mock.patch.object(ray, "cluster_resources", return_value={"CPU": 2.0}), \\
        mock.patch.object(GridPhases, "run", run_no_phase):
    code = main(ear_xnli, args)
heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print(json.dumps({"dry_run": dry_run, "code": code, "parents": parents, "heavy": heavy}))
"""

# A real tiny sweep (local Ray, Tune, trials in workers, the report) run by this process.
REAL_DRIVER = """
import json, sys
from sweeps import ear_xnli
from sweeps.cli import main
code = main(ear_xnli, sys.argv[1:])
heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}))
"""

# The driver's modules alone: what they load before a sweep starts.
DRIVER_MODULES = """
import json, sys
import sweeps.cli, sweeps.records.run_context, sweeps.running.runner, sweeps.records.tracking
print(json.dumps({"loaded": sorted(m for m in ("mlflow", "ray", "torch") if m in sys.modules)}))
"""


def _driver(script: str, args: list[str], cwd, timeout_s: float) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(
        MLFLOW_TRACKING_URI=f"sqlite:///{cwd / 'mlflow.db'}",
        HF_HUB_OFFLINE="1",  # a hub lookup would fail the pre-flight, not wait for a network
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(timeout_s),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _bert_directory(path, **fields):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({**BERT_CONFIG, **fields}))
    return path


@pytest.mark.slow
def test_paper_pre_flight_and_parent_run_import_no_torch(tmp_path):
    data_dir = require_shared_data("xnli")
    model = _bert_directory(tmp_path / "mbert")
    seen = _driver(PAPER_DRIVER, [str(model), str(data_dir)], tmp_path, 120)
    assert seen["dry_run"] == 0
    assert len(seen["parents"]) == 1  # pre-flight passed, store open, parent run started
    assert seen["code"] == 1  # no trial ran (the phases are mocked)
    assert seen["heavy"] == []


@pytest.mark.slow
def test_a_real_sweeps_driver_imports_no_torch(tmp_path):
    args = ["--preset", "smoke", *TINY, "--set", "seeds=0", "--set", "log_models=false"]
    seen = _driver(REAL_DRIVER, args, tmp_path, 300)
    assert seen["code"] == 0  # three trials trained (in Ray workers) and reported
    assert seen["heavy"] == []


@pytest.mark.slow
def test_the_drivers_modules_leave_mlflow_and_ray_to_the_sweep(tmp_path):
    """On a new store the sweep imports MLflow in the thread that opens the store while Ray
    starts (sweeps/running/runner.py `run_sweep`), which only works if nothing the command imports
    before has loaded it already."""
    assert _driver(DRIVER_MODULES, [], tmp_path, 60)["loaded"] == []


def test_a_layer_beyond_the_models_depth_is_refused_from_its_config_json(tmp_path):
    model = _bert_directory(tmp_path / "bert", num_hidden_layers=4)
    check_resources(TrialConfig(model=str(model), method="ear", layer=4))
    with pytest.raises(ConfigError, match=r"layer=5.*between 1 and 4"):
        check_resources(TrialConfig(model=str(model), method="ear", layer=5))


def test_roberta_positions_count_after_the_padding_index(tmp_path):
    model = _bert_directory(
        tmp_path / "xlmr", model_type="xlm-roberta", max_position_embeddings=514, pad_token_id=1
    )
    assert model_max_positions(TrialConfig(model=str(model))) == 512
    with pytest.raises(ConfigError, match=r"max_seq_length=513"):
        check_resources(TrialConfig(model=str(model), max_seq_length=513))


def test_an_absent_or_unreadable_model_directory_is_named(tmp_path):
    absent = tmp_path / "absent"
    with pytest.raises(ConfigError, match=f"model=.*no directory {absent}"):
        check_resources(TrialConfig(model=str(absent), method="ear"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match="holds no JSON object"):
        check_resources(TrialConfig(model=str(broken), method="ear"))


def test_a_models_config_is_read_once_and_read_only(tmp_path):
    model = _bert_directory(tmp_path / "bert")
    fields = model_config_fields(str(model))
    (model / "config.json").unlink()  # the cached fields stand for the model
    assert model_config_fields(str(model)) is fields
    with pytest.raises(TypeError):
        fields["num_hidden_layers"] = 2
