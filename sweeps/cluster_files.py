"""The cluster files, made from one template: `python -m sweeps.cluster_files`.

ray_cluster.yaml (AWS) and ray_cluster_onprem.yaml (Ray's local node provider: machines named by
address, reached over SSH) share their nodes' setup and start commands: both are a file's own
top (sweeps/cluster_templates/aws.yaml.in, onprem.yaml.in: provider, auth, node types) followed
by sweeps/cluster_templates/nodes.yaml.in, with only what must differ filled in: the SSH user's
home directory, and the head's `ray start` options (`--num-cpus=0` on premises, where the local
provider takes no node types to give the head {CPU: 0}). With no option it writes both committed
files at the repository root (`--check`: exit 1 if either differs from what it would write);
with a lab's addresses, user and key it writes an on-premises file for them (`--output`).
"""

from __future__ import annotations

import argparse
import ipaddress
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from xlt_core.errors import DataError

TEMPLATES = Path(__file__).parent / "cluster_templates"
REPO = Path(__file__).resolve().parents[1]
AWS_FILE = "ray_cluster.yaml"
ONPREM_FILE = "ray_cluster_onprem.yaml"
HEADER = (
    "# Made by `python -m sweeps.cluster_files` from sweeps/cluster_templates/{top} and\n"
    "# nodes.yaml.in (the setup this file shares with {other}): edit those, then run it.\n"
)
USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,62}")


@dataclass(frozen=True)
class Lab:
    """An on-premises cluster: its machines' addresses, the SSH user and key `ray up` uses.
    The defaults are the committed file's placeholders (192.0.2.0/24 is kept for documentation)."""

    head_ip: str = "192.0.2.10"
    worker_ips: tuple[str, ...] = ("192.0.2.11", "192.0.2.12")
    ssh_user: str = "xlt"
    ssh_private_key: str = "~/.ssh/id_ed25519"
    cluster_name: str = "xlt-sweeps-onprem"

    def __post_init__(self):
        for address in (self.head_ip, *self.worker_ips):
            try:
                ipaddress.ip_address(address)
            except ValueError:
                raise DataError(f"{address!r}: not an IP address (head_ip, worker_ips)") from None
        if not self.worker_ips:
            raise DataError("worker_ips: at least one worker address is needed")
        if not USER.fullmatch(self.ssh_user):
            raise DataError(f"ssh_user {self.ssh_user!r}: allowed is a Unix user name")
        if not self.ssh_private_key or re.search(r"[\s\"'#]", self.ssh_private_key):
            raise DataError(f"ssh_private_key {self.ssh_private_key!r}: a path without spaces")
        if not NAME.fullmatch(self.cluster_name):
            raise DataError(f"cluster_name {self.cluster_name!r}: letters, digits and '-' only")

    @property
    def home(self) -> str:
        return "/root" if self.ssh_user == "root" else f"/home/{self.ssh_user}"


def render(top: str, values: dict[str, str], other: str) -> str:
    """The template `top` followed by the nodes' template, each __NAME__ replaced by its value."""
    text = HEADER.format(top=top, other=other)
    text += (TEMPLATES / top).read_text() + (TEMPLATES / "nodes.yaml.in").read_text()
    for name, value in values.items():
        text = text.replace(f"__{name}__", value)
    left = re.search(r"__[A-Z_]+__", text)
    if left:
        raise DataError(f"sweeps/cluster_templates: {left.group()} has no value")
    return text


def aws_file() -> str:
    return render("aws.yaml.in", {"HOME": "/home/ubuntu", "HEAD_OPTIONS": ""}, ONPREM_FILE)


def onprem_file(lab: Lab = Lab()) -> str:
    values = {
        "HOME": lab.home,
        "HEAD_OPTIONS": " --num-cpus=0",
        "CLUSTER_NAME": lab.cluster_name,
        "HEAD_IP": lab.head_ip,
        "WORKER_IPS": "[" + ", ".join(lab.worker_ips) + "]",
        "SSH_USER": lab.ssh_user,
        "SSH_PRIVATE_KEY": lab.ssh_private_key,
    }
    return render("onprem.yaml.in", values, AWS_FILE)


def committed_files() -> dict[str, str]:
    """Each committed cluster file's name and the text the templates make of it."""
    return {AWS_FILE: aws_file(), ONPREM_FILE: onprem_file()}


def stale_files(root: Path = REPO) -> list[str]:
    """The committed cluster files under `root` that differ from what the templates make."""
    return [
        name
        for name, text in committed_files().items()
        if not (root / name).is_file() or (root / name).read_text() != text
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sweeps.cluster_files", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    parser.add_argument("--head-ip", help="the head's address (an on-premises file)")
    parser.add_argument("--worker-ip", action="append", default=[], help="a worker's address")
    parser.add_argument("--ssh-user", default=Lab.ssh_user)
    parser.add_argument("--ssh-key", default=Lab.ssh_private_key, help="the private key's path")
    parser.add_argument("--cluster-name", default=Lab.cluster_name)
    parser.add_argument("--output", type=Path, help="where the on-premises file goes")
    args = parser.parse_args(argv)
    try:
        if args.head_ip or args.worker_ip or args.output:
            if not (args.head_ip and args.worker_ip and args.output):
                parser.error("an on-premises file needs --head-ip, --worker-ip and --output")
            lab = Lab(
                args.head_ip, tuple(args.worker_ip), args.ssh_user, args.ssh_key, args.cluster_name
            )
            args.output.write_text(onprem_file(lab))
            print(f"{args.output}: written ({lab.head_ip}, workers {', '.join(lab.worker_ips)})")
            return 0
        stale = stale_files()
        if args.check:
            for name in stale:
                print(f"{name}: differs from sweeps/cluster_templates: run {parser.prog}")
            return 1 if stale else 0
        for name, text in committed_files().items():
            (REPO / name).write_text(text)
            print(f"{name}: written")
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
