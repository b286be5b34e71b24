"""ray_cluster.yaml passes Ray's own validation and the project's head checks (MLflow on
PostgreSQL on the private address, no password in the file, RAY_ADDRESS exported) and is
closed (MLflow's basic auth, Ray's token, both made on the head); trials get the resources
`--trials-per-gpu` asks for, and Ray never packs more than K of them onto one (logical) GPU;
CPUs no node has, seeds beyond 32 bits and lengths beyond the model's positions are refused."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import scaled_timeout

from benchmarks.tracking_servers import JOBS_OFF
from sweeps.cluster import validate_cluster_file
from sweeps.planning.trial_resources import trial_resources
from sweeps.running.resources import check_cpus_fit
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError, DataError
from xlt_core.preflight import check_resources, model_max_positions

REPO = Path(__file__).resolve().parents[2]
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
    assert "mlflow server --app-name basic-auth --host $(hostname -I" in head
    assert "--artifacts-destination" in head
    assert "--backend-store-uri postgresql://xlt@localhost:5432/mlflow" in head
    # Without MLflow's job consumers, as the benchmarks' servers (benchmarks.tracking_servers).
    server = next(
        command for command in config["head_start_ray_commands"] if "nohup mlflow server" in command
    )
    assert all(f"{name}={value} " in server for name, value in JOBS_OFF.items())
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
    for key in (
        "setup_commands",
        "head_setup_commands",
        "head_start_ray_commands",
        "worker_setup_commands",
        "worker_start_ray_commands",
    ):
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
    _assert_refused(old, new, problem, tmp_path)


def _assert_refused(old: str, new: str, problem: str, tmp_path: Path) -> None:
    """A copy of ray_cluster.yaml with `old` replaced by `new` is refused, naming `problem`."""
    text = CLUSTER_FILE.read_text()
    assert old in text
    changed = tmp_path / "ray_cluster.yaml"
    changed.write_text(text.replace(old, new))
    with pytest.raises(DataError, match=re.escape(problem)):
        validate_cluster_file(changed)


ADMIN_PASSWORD = "MLFLOW_AUTH_ADMIN_PASSWORD=$(cat ~/.xlt/mlflow_admin_password)"


@pytest.mark.parametrize(
    "old, new, problem",
    [
        (  # the MLflow server open to anyone who reaches its port
            "--app-name basic-auth ",
            "",
            "the MLflow server runs without authentication (--app-name basic-auth)",
        ),
        (ADMIN_PASSWORD, "", "not started with MLFLOW_AUTH_ADMIN_PASSWORD=$(cat"),
        (ADMIN_PASSWORD, "MLFLOW_AUTH_ADMIN_PASSWORD=hunter2", "the file holds an MLflow password"),
        (
            "mlflow_tracking_password = %s",
            "mlflow_tracking_password = hunter2",
            "the file holds an MLflow password",
        ),
        (
            "(umask 077 && openssl rand -hex 24 > ~/.xlt/mlflow_admin_password)",
            "echo hunter2 > ~/.xlt/mlflow_admin_password",
            "does not generate the MLflow admin password on the head",
        ),
        (  # the sweeps' credentials readable by every local user
            "umask 077 && mkdir -p ~/.mlflow",
            "mkdir -p ~/.mlflow",
            "does not give sweeps the MLflow credentials in ~/.mlflow/credentials",
        ),
        ('"mlflow[auth]"', '"mlflow"', "does not install MLflow's basic-auth app"),
        (  # Ray open to anyone who reaches its ports
            "RAY_AUTH_MODE=token ray start --head",
            "ray start --head",
            "head_start_ray_commands start Ray without token authentication",
        ),
        (
            "RAY_AUTH_MODE=token ray start --address",
            "ray start --address",
            "worker_start_ray_commands start Ray without token authentication",
        ),
        (
            "RAY_AUTH_MODE=token ray start --head",
            "RAY_AUTH_MODE=disabled RAY_AUTH_MODE=token ray start --head",
            "Ray's authentication off",
        ),
        (
            "RAY_AUTH_MODE=token ray start --head",
            "RAY_AUTH_TOKEN=abc RAY_AUTH_MODE=token ray start --head",
            "the file holds a Ray token",
        ),
        (
            "(umask 077 && mkdir -p ~/.ray && openssl rand -hex 32 > ~/.ray/auth_token)",
            "true",
            "does not generate the Ray token on the head",
        ),
        (  # every MLflow user may read, change, delete and re-grant every run
            "default_permission = NO_PERMISSIONS",
            "default_permission = MANAGE",
            "default_permission is MANAGE: allowed is NO_PERMISSIONS",
        ),
        (  # MLflow's default, READ
            "default_permission = NO_PERMISSIONS\\n",
            "",
            "default_permission is not set (MLflow's default: READ)",
        ),
        ("  - ~/.ray/auth_token\n", "", "the workers are not given the Ray token"),
        ("  - ~/.mlflow/credentials\n", "", "the workers are not given MLflow credentials"),
        (
            'echo "export RAY_AUTH_MODE=token" >> ~/.xlt/env.sh',
            "echo",
            "export RAY_AUTH_MODE=token in ~/.xlt/env.sh",
        ),
    ],
)
def test_an_open_cluster_is_refused(old, new, problem, tmp_path):
    _assert_refused(old, new, problem, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    "old, new, missing",
    [
        ("--app-name basic-auth ", "", "--app-name basic-auth"),
        ("RAY_AUTH_MODE=token ray start --head", "ray start --head", "RAY_AUTH_MODE=token"),
        ("default_permission = NO_PERMISSIONS", "default_permission = MANAGE", "MANAGE"),
    ],
)
def test_cluster_command_fails_for_an_open_cluster(old, new, missing, tmp_path):
    """`python -m sweeps.cluster FILE`, as a user runs it: exit 2, naming what is missing."""
    changed = tmp_path / "ray_cluster.yaml"
    changed.write_text(CLUSTER_FILE.read_text().replace(old, new))
    command = [sys.executable, "-m", "sweeps.cluster"]
    checked = subprocess.run(
        [*command, str(changed)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert checked.returncode == 2 and missing in checked.stderr, checked.stderr
    valid = subprocess.run(
        [*command, str(CLUSTER_FILE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert valid.returncode == 0, valid.stderr


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


@pytest.mark.parametrize(
    "cpus, cluster, nodes, joined, refused",
    [
        (3.0, {"CPU": 2.0}, [2.0], False, "at most 2 (this machine's Ray has 2)"),
        (2.0, {"CPU": 2.0}, [2.0], False, None),
        (8.0, {"CPU": 8.0}, [0.0, 4.0, 4.0], True, "at most 4 (the largest node of this"),
        (4.0, {"CPU": 8.0}, [0.0, 4.0, 4.0], True, None),
        (8.0, {"CPU": 0.0}, [0.0], True, None),  # workers not started: the autoscaler decides
    ],
)
def test_cpus_per_trial_beyond_every_node_is_refused(cpus, cluster, nodes, joined, refused):
    if refused is None:
        check_cpus_fit(cpus, cluster, nodes, joined)
    else:
        with pytest.raises(ConfigError, match=re.escape(refused)):
            check_cpus_fit(cpus, cluster, nodes, joined)


@pytest.mark.parametrize("cpus", [float("nan"), float("inf"), 0.0, -1.0])
def test_cpus_per_trial_not_a_positive_number_is_refused(cpus):
    for trials_per_gpu in (None, 4):
        with pytest.raises(ConfigError, match="cpus_per_trial.*a finite number > 0"):
            trial_resources(cpus, trials_per_gpu, {"CPU": 4.0, "GPU": 1.0})


@pytest.mark.parametrize(
    "settings, field, allowed",
    [
        ({"seed": 2**32}, "seed", "between 0 and 4294967295"),
        ({"seed": -1}, "seed", "between 0 and 4294967295"),
        ({"max_seq_length": 513}, "max_seq_length", "between 8 and 512"),
        ({"max_seq_length": 200_000_000}, "max_seq_length", "between 8 and 512"),
    ],
)
def test_numbers_out_of_range_are_refused(settings, field, allowed):
    with pytest.raises(ConfigError, match=f"{field}.*{allowed}"):
        TrialConfig.from_dict(settings)
    TrialConfig.from_dict({"seed": 2**32 - 1, "max_seq_length": 512})  # the bounds themselves


def test_max_seq_length_beyond_a_pretrained_models_positions_is_refused(tmp_path):
    from transformers import BertConfig, XLMRobertaConfig

    bert, xlmr = tmp_path / "bert", tmp_path / "xlmr"
    BertConfig(max_position_embeddings=64).save_pretrained(bert)
    XLMRobertaConfig(max_position_embeddings=514, pad_token_id=1).save_pretrained(xlmr)
    assert model_max_positions(TrialConfig(model=str(xlmr))) == 512  # after the padding index
    assert model_max_positions(TrialConfig(model=str(tmp_path / "absent"))) is None
    check_resources(TrialConfig(model=str(bert), max_seq_length=64))
    with pytest.raises(ConfigError, match=re.escape("max_seq_length=65") + ".*between 8 and 64"):
        check_resources(TrialConfig(model=str(bert), max_seq_length=65))


@pytest.mark.slow
def test_cpus_per_trial_beyond_the_machine_exits_instead_of_hanging(tmp_path):
    """The sweep refuses before a trial is scheduled: exit 2 naming the setting, not a wait."""
    cpus = len(os.sched_getaffinity(0)) + 1
    completed = subprocess.run(
        [sys.executable, str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "smoke"]
        + ["--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"]
        + ["--set", f"cpus_per_trial={cpus}", "--set", "tiny_layers=2", "--set", "layer=2"],
        cwd=tmp_path,
        env={key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(300),
    )
    assert completed.returncode == 2, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert f"cpus_per_trial={cpus}" in completed.stderr and "at most" in completed.stderr


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

    # "local": a plain ray.init() would attach to the last cluster another test or a `ray start`
    # recorded in /tmp/ray/ray_current_cluster (CI met one), and refuse num_cpus/num_gpus.
    ray.init(address="local", num_cpus=8, num_gpus=1, include_dashboard=False)
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
