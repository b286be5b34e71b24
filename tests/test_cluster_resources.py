"""ray_cluster.yaml passes Ray's own validation and the project's head checks (MLflow on
PostgreSQL on the private address, no password in the file, RAY_ADDRESS exported); trials get
the resources `--trials-per-gpu` asks for, and Ray never packs more than K of them onto one
(logical) GPU."""

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from sweeps.cluster import validate_cluster_file
from sweeps.resources import trial_resources
from xlt_core.errors import DataError

REPO = Path(__file__).resolve().parents[1]
CLUSTER_FILE = REPO / "ray_cluster.yaml"


def test_cluster_file_validates_with_ray_defaults():
    prepared = validate_cluster_file(CLUSTER_FILE)
    assert prepared["provider"]["type"] == "aws"
    assert prepared["available_node_types"][prepared["head_node_type"]]["resources"] == {"CPU": 0}
    workers = [
        t
        for name, t in prepared["available_node_types"].items()
        if name != prepared["head_node_type"]
    ]
    assert [t["node_config"]["InstanceType"] for t in workers] == ["g5.xlarge"]


def test_cluster_file_runs_mlflow_on_postgresql_and_holds_no_credentials():
    text = CLUSTER_FILE.read_text()
    config = yaml.safe_load(text)
    head = " ".join(config["head_start_ray_commands"])
    assert "mlflow server --host $(hostname -I" in head and "--artifacts-destination" in head
    assert "--backend-store-uri postgresql://xlt@localhost:5432/mlflow" in head
    setup = " ".join(config["head_setup_commands"])
    assert "openssl rand" in setup and "sqlite" not in head
    assert "0.0.0.0" not in text
    for secret in (
        "aws_access_key_id",
        "aws_secret_access_key",
        "AWS_SECRET",
        "AKIA",
        "ssh_private_key",
    ):
        assert secret.lower() not in text.lower()


def test_head_commands_are_valid_bash():
    config = yaml.safe_load(CLUSTER_FILE.read_text())
    for key in ("setup_commands", "head_setup_commands", "head_start_ray_commands"):
        for command in config[key]:
            checked = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
            assert checked.returncode == 0, (command, checked.stderr)


PRIVATE_IP = "$(hostname -I | awk '{print $1}')"


@pytest.mark.parametrize(
    "old, new, problem",
    [
        (  # a password written in the file
            "PASSWORD '$(cat ~/.xlt/pg_password)'",
            "PASSWORD 'hunter2'",
            "the file holds a password literal",
        ),
        (
            "postgresql://xlt@localhost",
            "postgresql://xlt:hunter2@localhost",
            "the file holds a password in a PostgreSQL URI",
        ),
        (  # the password not generated on the head
            "(umask 077 && openssl rand -hex 24 > ~/.xlt/pg_password)",
            "echo hunter2 > ~/.xlt/pg_password",
            "does not generate the database password on the head",
        ),
        (
            f"--host {PRIVATE_IP} --port 5000",
            "--host 0.0.0.0 --port 5000",
            "the MLflow server does not bind the head's private address",
        ),
        (
            "--backend-store-uri postgresql://xlt@localhost:5432/mlflow",
            "--backend-store-uri sqlite:////home/ubuntu/mlflow/mlflow.db",
            "--backend-store-uri is not postgresql://",
        ),
        ("-y -q postgresql", "-y -q sqlite3", "does not install PostgreSQL"),
        (  # a sweep on the head would start a private Ray
            f"export RAY_ADDRESS={PRIVATE_IP}:6379",
            "export RAY_ADDRES=auto",
            "does not export RAY_ADDRESS",
        ),
        (f"{PRIVATE_IP}:6379", f"{PRIVATE_IP}:6380", "port it serves (6379)"),
        (f"http://{PRIVATE_IP}:5000", "http://localhost:5000", "export MLFLOW_TRACKING_URI"),
        ("sed -i '1i . ~/.xlt/env.sh' ~/.bashrc", "true", "does not source ~/.xlt/env.sh"),
    ],
)
def test_cluster_file_without_the_head_setup_is_refused(old, new, problem, tmp_path):
    text = CLUSTER_FILE.read_text()
    assert old in text
    changed = tmp_path / "ray_cluster.yaml"
    changed.write_text(text.replace(old, new))
    with pytest.raises(DataError, match=re.escape(problem)):
        validate_cluster_file(changed)


@pytest.mark.parametrize(
    "cpus, k, cluster, expected",
    [
        (None, None, {"CPU": 2.0}, {"cpu": 1.0}),
        (2.0, None, {"CPU": 8.0}, {"cpu": 2.0}),
        (None, 4, {"CPU": 4.0, "GPU": 1.0}, {"cpu": 1, "gpu": 0.25}),  # a g5.xlarge
        (None, 2, {"CPU": 16.0, "GPU": 2.0}, {"cpu": 4, "gpu": 0.5}),
        (None, 8, {"CPU": 4.0, "GPU": 1.0}, {"cpu": 1.0, "gpu": 0.125}),  # never below one CPU
        (3.0, 4, {"CPU": 4.0, "GPU": 1.0}, {"cpu": 3.0, "gpu": 0.25}),
        (None, 4, {"CPU": 4.0}, {"cpu": 1.0, "gpu": 0.25}),  # GPU workers not started yet
    ],
)
def test_trial_resources(cpus, k, cluster, expected):
    assert trial_resources(cpus, k, cluster) == expected


@pytest.mark.slow
def test_four_trials_per_gpu_never_more(tmp_path):
    import ray
    from ray import tune

    def probe(config):
        """Records when it ran and which GPU Ray gave it; its sleep is its workload. (Nested, so
        that Ray ships it by value: workers cannot import this test module.)"""
        start = time.time()
        time.sleep(1.5)
        Path(config["out"], f"{config['i']}.json").write_text(
            json.dumps({"start": start, "end": time.time(), "gpus": ray.get_gpu_ids()})
        )

    ray.init(num_cpus=8, num_gpus=1, include_dashboard=False)
    try:
        resources = trial_resources(None, 4, ray.cluster_resources())
        assert resources == {"cpu": 2, "gpu": 0.25}
        tuner = tune.Tuner(
            tune.with_resources(probe, resources),
            param_space={"i": tune.grid_search(list(range(8))), "out": str(tmp_path / "probe")},
            run_config=tune.RunConfig(storage_path=str(tmp_path / "ray_results"), verbose=0),
        )
        (tmp_path / "probe").mkdir()
        results = tuner.fit()
    finally:
        ray.shutdown()
    assert not results.errors
    spans = [json.loads(path.read_text()) for path in (tmp_path / "probe").glob("*.json")]
    assert len(spans) == 8 and all(span["gpus"] for span in spans)
    events = sorted(
        [(s["start"], 1) for s in spans] + [(s["end"], -1) for s in spans],
        key=lambda e: (e[0], e[1]),
    )
    running, most = 0, 0
    for _, change in events:
        running += change
        most = max(most, running)
    assert 2 <= most <= 4, most  # packed onto the one GPU, never more than 4 at once
