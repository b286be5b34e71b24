"""Machines for `make cluster-check`, made on this one: each node a network namespace on a
private bridge (10.77.0.0/24, no route out), with its own sshd (Debian's; key only, a key pair
made per run) started under `unshare --pid --mount --uts`, so that each node has its own
processes (`ray stop`, `pkill -f "mlflow server"` see only its own), its own /tmp, /run and
hostname, and its own home: /root, a folder of the run bound over it. The rest of the file
system is shared, read as any image's would be. The nodes log in as root: this machine's Python
lives under /root/.pyenv, which a node user could not reach; root's home being the node's own,
the secrets the setup makes there are the node's alone.

The node's Python (the "image"): a venv in its home whose site-packages sees this project's
.venv and a layer of the packages ray[default] and mlflow[auth] add to it (installed once per
run with the host's network); pip on the nodes is offline (no index: nothing routes out), so
the setup's pip calls find everything installed and install only the project, editable, from
the node's copy. The head also runs PostgreSQL, as an installed package's service would: its
own cluster, initialised per run in the run's folder, bound over Debian's data directory.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BRIDGE = "xltbr0"
SUBNET = "10.77.0"
HOST_ADDRESS = f"{SUBNET}.254"
PYENV = Path("/root/.pyenv")
# The packages the nodes' pip finds installed (the setup's pip calls, AWS's as on premises).
IMAGE_PACKAGES = ["ray[default]", "mlflow[auth]", "psycopg[binary]", "boto3"]


@dataclass(frozen=True)
class Node:
    name: str
    address: str
    root: Path

    @property
    def netns(self) -> str:
        return f"xlt-{self.name}"

    @property
    def veth(self) -> str:
        return f"xlt-{self.name}"[:15]

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def head(self) -> bool:
        return self.name == "head"


def lab_nodes(run: Path, workers: int) -> list[Node]:
    """The head (10.77.0.1) and `workers` workers (10.77.0.2, ...), each in run/<name>."""
    names = ["head"] + [f"worker{i}" for i in range(1, workers + 1)]
    return [Node(name, f"{SUBNET}.{i}", run / name) for i, name in enumerate(names, 1)]


def network_commands(nodes: list[Node]) -> list[list[str]]:
    """The bridge (this machine's end: HOST_ADDRESS), and each node's namespace and veth."""
    commands = [
        ["ip", "link", "add", BRIDGE, "type", "bridge"],
        ["ip", "addr", "add", f"{HOST_ADDRESS}/24", "dev", BRIDGE],
        ["ip", "link", "set", BRIDGE, "up"],
    ]
    for node in nodes:
        inside = ["ip", "netns", "exec", node.netns, "ip"]
        commands += [
            ["ip", "netns", "add", node.netns],
            ["ip", "link", "add", node.veth, "type", "veth", "peer", "eth0", "netns", node.netns],
            ["ip", "link", "set", node.veth, "master", BRIDGE, "up"],
            inside + ["addr", "add", f"{node.address}/24", "dev", "eth0"],
            inside + ["link", "set", "eth0", "up"],
            inside + ["link", "set", "lo", "up"],
        ]
    return commands


def teardown_commands(nodes: list[Node]) -> list[list[str]]:
    """What network_commands made, removed: each veth pair first (a deleted namespace goes
    only once nothing refers to it, which took minutes here; its veth would stay till then)."""
    commands = []
    for node in nodes:
        commands += [["ip", "link", "del", node.veth], ["ip", "netns", "del", node.netns]]
    return commands + [["ip", "link", "del", BRIDGE]]


def sshd_config(node: Node) -> str:
    return (
        f"ListenAddress {node.address}\nPort 22\nHostKey {node.root}/ssh_host_ed25519_key\n"
        "PidFile /run/sshd.pid\nAuthorizedKeysFile .ssh/authorized_keys\n"
        "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nUsePAM no\nSubsystem sftp internal-sftp\n"
    )


def boot_script(node: Node) -> str:
    """What runs as the node's first process: its private mounts, then sshd in the foreground
    (the namespace's init: it reaps what the node's daemons leave)."""
    root = shlex.quote(str(node.root))
    lines = [
        "set -eu",
        f"hostname xlt-{node.name}",
        "mount -t tmpfs -o mode=1777 tmpfs /tmp",
        "mount -t tmpfs -o mode=755 tmpfs /run",
        "mkdir -p /run/sshd",
        f"mount --bind {root}/hosts /etc/hosts",
        # /root becomes the node's home; this machine's Python stays where the venv expects it.
        f"mkdir -p {root}/pyenv && mount --bind {PYENV} {root}/pyenv",
        f"mount --bind {root}/home /root",
        f"mkdir -p {PYENV} && mount --bind {root}/pyenv {PYENV}",
    ]
    if node.head:
        lines += [
            f"mount --bind {root}/pgdata /var/lib/postgresql/{postgres_version()}/main",
            f"mount --bind {root}/pglog /var/log/postgresql",
            "install -d -o postgres -g postgres -m 2775 /run/postgresql",
            f"pg_ctlcluster {postgres_version()} main start",
        ]
    lines.append(f"exec /usr/sbin/sshd -D -e -f {root}/sshd_config")
    return "\n".join(lines) + "\n"


def boot_command(node: Node) -> list[str]:
    """The node's boot script in its namespace, as PID 1 of a PID namespace of its own (killing
    the `unshare` kills the node: --kill-child, and the kernel ends a namespace with its init)."""
    unshare = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "--mount", "--uts"]
    return ["ip", "netns", "exec", node.netns, *unshare, "bash", str(node.root / "boot.sh")]


def run(command: list[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    """`command`, its output kept; CommandFailed naming `what` and its last line on failure."""
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise CommandFailed(f"{what} failed (exit {done.returncode}): {last[0]}")
    return done


class CommandFailed(RuntimeError):
    """A step's command failed: its message is the cause, one line."""


def make_image(run_dir: Path, repo: Path) -> Path:
    """The layer of packages the nodes' image adds to .venv (pip, with this machine's network
    and pip's cache); its site-packages folder."""
    image = run_dir / "image"
    run([sys.executable, "-m", "venv", "--without-pip", str(image)], "the image's venv")
    site = image / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = site / "site-packages"
    (site / "xlt_image.pth").write_text(f"{venv_site(repo)}\n")
    pip = [str(image / "bin" / "python"), "-m", "pip", "install", "-q"]
    run([*pip, "-c", str(repo / "constraints.txt"), *IMAGE_PACKAGES], "pip install (image)")
    return site


def venv_site(repo: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return repo / ".venv" / "lib" / version / "site-packages"


def prepare_node(node: Node, nodes: list[Node], public_key: str, image_site: Path, repo: Path):
    """The node's files: its home (authorized key, shell start files, offline pip, the venv),
    its host key, hosts file, sshd configuration and boot script; the head's database cluster."""
    node.home.mkdir(parents=True, mode=0o700)
    node.root.chmod(0o711)
    ssh = node.home / ".ssh"
    ssh.mkdir(mode=0o700)
    (ssh / "authorized_keys").write_text(public_key)
    (ssh / "authorized_keys").chmod(0o600)
    path_line = "export PATH=/root/venv/bin:$PATH\n"
    (node.home / ".bashrc").write_text(path_line)
    (node.home / ".profile").write_text(path_line)
    (node.home / ".config" / "pip").mkdir(parents=True)
    # No index (nothing routes out) and no build isolation (which would fetch setuptools): the
    # project builds with the setuptools installed. pip reads "no-build-isolation = false" as
    # the flag given.
    pip_conf = "[global]\nno-index = true\nno-build-isolation = false\n"
    (node.home / ".config" / "pip" / "pip.conf").write_text(pip_conf)
    make_node_venv(node.home / "venv", [image_site, venv_site(repo)], repo)
    hosts = "127.0.0.1 localhost\n" + "".join(f"{n.address} xlt-{n.name}\n" for n in nodes)
    (node.root / "hosts").write_text(hosts)
    key = node.root / "ssh_host_ed25519_key"
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], "ssh-keygen (host key)")
    (node.root / "sshd_config").write_text(sshd_config(node))
    (node.root / "boot.sh").write_text(boot_script(node))
    if node.head:
        for folder in ("pgdata", "pglog"):
            (node.root / folder).mkdir(mode=0o700)
            os.chown(node.root / folder, *postgres_ids())
        initdb = f"/usr/lib/postgresql/{postgres_version()}/bin/initdb"
        initdb = [initdb, "-D", str(node.root / "pgdata"), "-E", "UTF8"]
        run(["runuser", "-u", "postgres", "--", *initdb], "initdb (the head's PostgreSQL)")


def make_node_venv(venv: Path, sites: list[Path], repo: Path):
    """A venv at the node's /root/venv that sees `sites`, with the console scripts the setup and
    the start commands call (this project's .venv's, run by the node's Python)."""
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], "the node's venv")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    (site / "xlt_image.pth").write_text("".join(f"{path}\n" for path in sites))
    for name in ("pip", "ray", "mlflow"):
        script = (repo / ".venv" / "bin" / name).read_text().split("\n", 1)[1]
        (venv / "bin" / name).write_text("#!/root/venv/bin/python\n" + script)
        (venv / "bin" / name).chmod(0o755)


def postgres_version() -> str:
    """The major version of Debian's installed PostgreSQL (the newest, if several): its
    programs in /usr/lib/postgresql/VERSION/bin, its cluster `main`."""
    found = [path.parts[-3] for path in Path("/usr/lib/postgresql").glob("*/bin/initdb")]
    if not found:
        raise CommandFailed("PostgreSQL not found: apt-get install -y postgresql")
    return max(found, key=int)


def postgres_ids() -> tuple[int, int]:
    import pwd

    entry = pwd.getpwnam("postgres")
    return entry.pw_uid, entry.pw_gid
