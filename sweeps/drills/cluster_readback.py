"""Run on the head by `make cluster-check` (sweeps.drills.cluster_check), through `ray exec`:
the latest smoke sweep read back through the head's MLflow server ($MLFLOW_TRACKING_URI) with
the admin's password (MLflow's client reads ~/.mlflow/credentials; nothing prints it), and
where its trials ran (their `xlt.ray_node_id` tag, mapped to node addresses by the cluster the
head's $RAY_ADDRESS names). Prints one JSON line; exit 1 if the sweep is incomplete or a trial
ran on the head.

    python -m sweeps.drills.cluster_readback [--set KEY=VALUE ...]   # the sweep's settings
    python -m sweeps.drills.cluster_readback --nodes                 # the nodes alive only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections import Counter

from sweeps.drills.sigint import EXPERIMENT, expected_trials, parent_problems, trial_problems
from sweeps.running.trainable import NODE_TAG
from xlt_schema import PARENT_ROLE, PARENT_RUN_TAG, ROLE_TAG, TRIAL_ROLE


def alive_nodes() -> dict[str, dict]:
    """Each node alive in the cluster: its id, with its address and CPUs."""
    import ray

    ray.init(logging_level="ERROR")
    try:
        return {
            node["NodeID"]: {
                "address": node["NodeManagerAddress"],
                "cpus": node["Resources"].get("CPU", 0),
            }
            for node in ray.nodes()
            if node["Alive"]
        }
    finally:
        ray.shutdown()


def status_without_password(uri: str) -> int:
    """The HTTP status the server answers a request without credentials with."""
    url = f"{uri}/api/2.0/mlflow/experiments/search?max_results=1"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def latest_sweep(uri: str, settings: list[str]) -> dict:
    """The latest sweep's parent, its trial runs by status, and its problems."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    if experiment is None:
        return {"problems": [f"no experiment {EXPERIMENT} on {uri}"]}
    runs = client.search_runs([experiment.experiment_id], max_results=10000)
    parents = sorted(
        (run for run in runs if run.data.tags.get(ROLE_TAG) == PARENT_ROLE),
        key=lambda run: run.info.start_time,
    )
    if not parents:
        return {"runs": len(runs), "problems": ["no sweep"]}
    parent = parents[-1]
    trials = [
        run
        for run in runs
        if run.data.tags.get(ROLE_TAG) == TRIAL_ROLE
        and run.data.tags.get(PARENT_RUN_TAG) == parent.info.run_id
    ]
    return {
        "runs": len(runs),
        "sweeps": len(parents),
        "parent": parent.info.run_id,
        "trial_runs": dict(Counter(run.info.status for run in trials)),
        "trial_nodes": sorted({run.data.tags.get(NODE_TAG, "?") for run in trials}),
        "problems": parent_problems(parent) + trial_problems(trials, expected_trials(settings)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sweeps.drills.cluster_readback")
    parser.add_argument("--set", action="append", default=[], dest="settings")
    parser.add_argument("--nodes", action="store_true", help="only the nodes alive")
    args = parser.parse_args(argv)
    nodes = alive_nodes()
    if args.nodes:
        print(json.dumps({"nodes": sorted(node["address"] for node in nodes.values())}))
        return 0
    uri = os.environ["MLFLOW_TRACKING_URI"]
    summary = {"tracking_uri": uri, "status_without_password": status_without_password(uri)}
    summary.update(latest_sweep(uri, args.settings))
    where = [
        nodes.get(node, {"address": f"{node} (gone)", "cpus": None})
        for node in summary.get("trial_nodes", [])
    ]
    summary["trial_nodes"] = [node["address"] for node in where]
    if any(node["cpus"] == 0 for node in where):
        summary["problems"].append("a trial ran on a node without CPUs (the head)")
    if summary["status_without_password"] != 401:
        summary["problems"].append("the server answers without a password")
    print(json.dumps(summary))
    return 1 if summary["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
