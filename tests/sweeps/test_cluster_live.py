"""`python -m sweeps.cluster --live`, as docs/cluster.md shows it, on a head made on this
machine: a real Ray head (`ray start --head`, with token authentication, then without), an
MLflow-like basic-auth server on its "private" address 127.0.0.2, a dashboard-like listener
on 127.0.0.1, the secrets in a temporary home. All of it runs in network, PID and mount
namespaces of its own (`unshare`), which end with it: only loopback, no other process of
this machine is seen or stopped. The closed head passes (exit 0); Ray started with
RAY_AUTH_MODE=disabled fails the audit (exit 1), naming Ray."""

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import scaled_timeout

REPO = Path(__file__).resolve().parents[2]
LIVE = "python -m sweeps.cluster --live"  # as docs/cluster.md shows it
PRIVATE = "127.0.0.2"


def ray(home: Path, *args: str, mode: str = "token") -> None:
    """`ray ...` as the head's user, RAY_AUTH_MODE=`mode` (Ray 2.60 turns token mode on by
    itself where ~/.ray/auth_token exists: opening the hole takes `disabled`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(home), RAY_AUTH_MODE=mode)
    ray_command = Path(sys.executable).with_name("ray")
    subprocess.run([str(ray_command), *args], env=env, check=True, capture_output=True)


def audit(home: Path) -> dict:
    """The documented command, run as on the head: the addresses from ~/.xlt/env.sh."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("RAY_") and k != "MLFLOW_TRACKING_URI"
    }
    done = subprocess.run(
        [sys.executable, *LIVE.split()[1:]],
        cwd=REPO,
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
    )
    return {"code": done.returncode, "out": done.stdout, "err": done.stderr[-2000:]}


def in_namespace(out: Path) -> None:
    """The head, closed then open, audited each time; the outcomes written to `out`."""
    from test_cluster_audit import closed_home, fake_mlflow

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    home = closed_home(Path(tempfile.mkdtemp()))
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    (home / ".xlt" / "env.sh").write_text(
        f"export RAY_ADDRESS={PRIVATE}:6379\nexport MLFLOW_TRACKING_URI=http://{PRIVATE}:5000\n"
    )
    start = ["start", "--head", f"--node-ip-address={PRIVATE}", "--port=6379", "--num-cpus=1"]
    start += ["--include-dashboard=false", f"--temp-dir={home}/ray", "--disable-usage-stats"]
    outcomes = {}
    with fake_mlflow(port=5000), socket.create_server(("127.0.0.1", 8265)):
        for case, mode in (("closed", "token"), ("no token", "disabled")):
            ray(home, *start, mode=mode)
            try:
                outcomes[case] = audit(home)
            finally:
                ray(home, "stop", "--force")
    out.write_text(json.dumps(outcomes))


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare (util-linux)")
def test_live_audit_passes_a_closed_head_and_fails_without_the_token(tmp_path):
    out = tmp_path / "outcomes.json"
    namespace = ["unshare", "--map-root-user", "--net", "--pid", "--fork", "--mount-proc"]
    done = subprocess.run(
        [*namespace, sys.executable, __file__, str(out)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(REPO), str(REPO / "tests")))},
        capture_output=True,
        text=True,
        timeout=scaled_timeout(300),
    )
    assert done.returncode == 0 and out.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    outcomes = json.loads(out.read_text())
    closed, open_ = outcomes["closed"], outcomes["no token"]
    assert closed["code"] == 0, closed
    assert f"PASS Ray at {PRIVATE}:6379 refuses a client without a token" in closed["out"]
    assert (
        f"PASS Ray at {PRIVATE}:6379 accepted a client with the cluster's token" in (closed["out"])
    )
    assert "port [::]:6379 (gcs_server" in closed["out"]  # Ray's GCS, on every interface
    assert open_["code"] == 1, open_
    assert f"FAIL Ray at {PRIVATE}:6379 accepted a client without a token" in open_["out"]
    assert f"FAIL Ray at {PRIVATE}:6379 accepted a client with a wrong token" in open_["out"]


def test_the_docs_run_on_the_head_the_command_this_file_runs():
    """docs/cluster.md's `ray exec` runs LIVE on the head, the command tested above."""
    shown = (REPO / "docs" / "cluster.md").read_text()
    assert f"ray exec ray_cluster.yaml 'cd ~/xlt-sweeps && {LIVE}'" in shown


if __name__ == "__main__":
    in_namespace(Path(sys.argv[1]))
