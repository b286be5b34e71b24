"""ray_cluster.yaml passes Ray's own validation; trials get the resources `--trials-per-gpu`
asks for, and Ray never packs more than K of them onto one (logical) GPU."""

import json
import time
from pathlib import Path

import pytest
import yaml

from sweeps.cluster import validate_cluster_file
from sweeps.resources import trial_resources

REPO = Path(__file__).resolve().parents[1]


def test_cluster_file_validates_with_ray_defaults():
    prepared = validate_cluster_file(REPO / "ray_cluster.yaml")
    assert prepared["provider"]["type"] == "aws"
    assert prepared["available_node_types"][prepared["head_node_type"]]["resources"] == {"CPU": 0}
    workers = [
        t
        for name, t in prepared["available_node_types"].items()
        if name != prepared["head_node_type"]
    ]
    assert [t["node_config"]["InstanceType"] for t in workers] == ["g5.xlarge"]


def test_cluster_file_runs_mlflow_on_the_private_address_and_holds_no_credentials():
    text = (REPO / "ray_cluster.yaml").read_text()
    head = " ".join(yaml.safe_load(text)["head_start_ray_commands"])
    assert (
        "mlflow server --host $(hostname -I" in head
        and "--artifacts-destination" in head
        and "sqlite:////" in head
    )
    assert "0.0.0.0" not in text
    for secret in (
        "aws_access_key_id",
        "aws_secret_access_key",
        "AWS_SECRET",
        "AKIA",
        "ssh_private_key",
    ):
        assert secret.lower() not in text.lower()


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
