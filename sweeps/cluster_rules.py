"""A cluster file's commands read one by one, for the holes one edit can open (issue 50).

`command_problems` reads every command of every command list (the top-level lists and each
node type's own) and refuses, naming the list, the command's line in the file, the command
(shortened) and what is allowed:
- an `mlflow server` (or `mlflow ui`, or MLflow's app under another web server) without
  `--app-name basic-auth` or its configuration (MLFLOW_AUTH_CONFIG_PATH), bound beyond the
  head's private address (`--host`, `-h`, `MLFLOW_HOST`: 0, 0.0.0.0, ::, a hostname), or
  handing its web server a bind of its own;
- a `ray start` without `RAY_AUTH_MODE=token`, or with a `--dashboard-host` other than
  127.0.0.1 or localhost;
- a command other than the one that writes it touching the basic-auth app's configuration
  (~/.xlt/mlflow_auth.ini, its default_permission), or editing a file under ~/.xlt in place;
- a secret made readable beyond its owner (`chmod` giving group or others a bit) or written
  without `umask 077` first.
The AWS security group is sweeps/cluster_groups.py's. Reading text can always be outwitted:
these cover the natural variants (quotes, `=` or a space, folded lines), not all of bash; the
live audit (sweeps/cluster_audit.py) probes the running head.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

import yaml

# The lists of shell commands a cluster file may hold, at the top and in a node type.
COMMAND_LISTS = (
    "initialization_commands",
    "setup_commands",
    "head_setup_commands",
    "worker_setup_commands",
    "head_start_ray_commands",
    "worker_start_ray_commands",
)
NODE_TYPE_COMMAND_LISTS = ("initialization_commands", "worker_setup_commands")
# The head's private address as its shell commands compute it.
PRIVATE_ADDRESS = "$(hostname -I | awk '{print $1}')"
# A VPC's (or a lab's) private ranges: a host literal or a security group range inside them
# stays inside the network.
PRIVATE_RANGES = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
# One shell word: a command substitution, a quoted string or a bare word.
WORD = r"""\$\([^)]*\)|'[^']*'|"[^"]*"|[^\s;&|]+"""
# Where a simple command ends (looked for with substitutions and quotes masked).
SEPARATOR = re.compile(r";|&&|\|\||(?<![>&<\d])&(?![&>])|\|")
HOME = r"(?:~|\$HOME|\$\{HOME\}|/home/[^/\s'\"]+|/root)"
SECRET_FILE = (
    rf"{HOME}/(?:\.ray/auth_token|\.mlflow/credentials|\.pgpass|"
    r"\.xlt/(?:pg_password|mlflow_admin_password|mlflow_secret_key|mlflow_auth\.ini))"
)
SECRET_PLACE = re.compile(rf"{HOME}/\.(?:ray|mlflow|xlt|pgpass)\b")
# A command that names a server to stop it (`pkill -f "mlflow server"`) starts none.
SIGNALS = re.compile(r"\s*(?:pkill|pgrep|killall)\b")
OWNER_ONLY = "a mode for its owner alone (600, 700, go-rwx)"
AUTH_CONFIG = "~/.xlt/mlflow_auth.ini"  # its path under the home, after "~/"


@dataclass(frozen=True)
class Command:
    """One command of a cluster file: its list and index (`name`), the line it starts on, its
    text (continuation lines joined, runs of white space made one space) and the file's lines
    (`source`, to find the line a folded command's offending word stands on)."""

    name: str
    line: int | None
    text: str
    source: tuple[str, ...] = ()

    def problem(self, span: tuple[int, int], what: str, allowed: str) -> str:
        return f'{self.where(span)} "{self.quote(span)}": {what}: allowed is {allowed}'

    def where(self, span: tuple[int, int]) -> str:
        """`head_start_ray_commands[3] (line 118)`: the line of the span's first word."""
        if self.line is None:
            return self.name
        words = self.text[span[0] : span[1]].split() or [""]
        following = self.source[self.line - 1 : self.line + 40]
        # the span's first three words, else two, else one (a folded command's line breaks)
        offsets = (
            n
            for count in (3, 2, 1)
            for n, line in enumerate(following)
            if " ".join(words[:count]) in line
        )
        return f"{self.name} (line {self.line + next(offsets, 0)})"

    def quote(self, span: tuple[int, int]) -> str:
        """The command around `span`, shortened to at most 110 characters."""
        left = max(0, span[0] - 40)
        right = min(len(self.text), max(span[1] + 20, span[0] + 60), left + 110)
        return "".join(
            (
                "..." if left else "",
                self.text[left:right],
                "..." if right < len(self.text) else "",
            )
        )


def node_lines(text: str) -> dict[tuple, int]:
    """The line (from 1) where each node of the YAML `text` starts, by its path of keys and
    indices."""
    lines: dict[tuple, int] = {}

    def walk(node, path: tuple) -> None:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index))

    root = yaml.compose(text)
    if root is not None:
        walk(root, ())
    return lines


def place(path: tuple, lines: dict[tuple, int]) -> str:
    """`head_start_ray_commands[3] (line 118)` for a path of keys and indices."""
    line = lines.get(path)
    return path_name(path) + (f" (line {line})" if line else "")


def path_name(path: tuple) -> str:
    """`available_node_types.head.node_config` or `head_start_ray_commands[3]`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def commands(config: dict, text: str) -> list[Command]:
    """Every command of every command list of the file (`config`, read from `text`), in
    order."""
    lines = node_lines(text)
    source = tuple(text.splitlines())
    places = [((key,), config.get(key)) for key in COMMAND_LISTS]
    for name, node_type in (config.get("available_node_types") or {}).items():
        if isinstance(node_type, dict):
            places += [
                (("available_node_types", name, key), node_type.get(key))
                for key in NODE_TYPE_COMMAND_LISTS
            ]
    return [
        Command(
            path_name((*path, index)),
            lines.get((*path, index)),
            " ".join(str(command).replace("\\\n", " ").split()),
            source,
        )
        for path, listed in places
        if isinstance(listed, list)
        for index, command in enumerate(listed)
    ]


def masked(text: str) -> str:
    """`text` with its substitutions and quoted strings blanked (same length), so that a `|`
    or `;` inside them ends no command."""
    return re.sub(r"""\$\([^)]*\)|'[^']*'|"[^"]*\"""", lambda m: "_" * len(m.group()), text)


def simple_command(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the simple command around text[start:end] (up to its separators)."""
    blank = masked(text)
    before = [m.end() for m in SEPARATOR.finditer(blank, 0, start)]
    after = SEPARATOR.search(blank, end)
    return (before[-1] if before else 0), (after.start() if after else len(text))


def option_values(text: str, names: str) -> list[tuple[str, tuple[int, int]]]:
    """Each value given to an option of `names` (a regex: `--host|-h`), `=` or a space
    between, quotes removed, with its span."""
    return [
        (unquote(m.group(1)), m.span())
        for m in re.finditer(rf"(?:^|(?<=\s))(?:{names})(?:=|\s+)({WORD})", text)
    ]


def unquote(word: str) -> str:
    if len(word) > 1 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def command_problems(config: dict, text: str) -> list[str]:
    """What the file's commands open (see the module's docstring), each as a phrase naming
    the command; [] when nothing."""
    head_ip = (config.get("provider") or {}).get("head_ip")
    problems = []
    for command in commands(config, text):
        problems += mlflow_server_problems(command, head_ip)
        problems += ray_start_problems(command)
        problems += auth_config_problems(command)
        problems += secret_mode_problems(command)
    return problems


def allowed_host(host: str, head_ip: str | None) -> bool:
    """The head's private address: as its commands compute it, the local provider's head
    address, or a literal address inside the private ranges."""
    if host in (PRIVATE_ADDRESS, head_ip):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in PRIVATE_RANGES)


def mlflow_server_problems(command: Command, head_ip: str | None) -> list[str]:
    """Each MLflow server the command starts: behind basic-auth, on the private address."""
    text, problems = command.text, []
    other_server = re.search(r"\b(?:gunicorn|uvicorn|waitress-serve|flask)\b[^;&|]*\bmlflow", text)
    if other_server:
        problems.append(
            command.problem(
                other_server.span(),
                "serves MLflow's app under a web server of its own",
                "`mlflow server --app-name basic-auth` alone",
            )
        )
    for server in re.finditer(r"\bmlflow\s+(?:server|ui)\b", text):
        start, end = simple_command(text, server.start(), server.end())
        if not SIGNALS.match(text, start):
            problems += _server_options_problems(command, text[start:end], start, head_ip)
    return problems


def _server_options_problems(
    command: Command, server: str, offset: int, head_ip: str | None
) -> list[str]:
    """One `mlflow server` simple command (`server`, at `offset` in the command)."""
    named = re.search(r"\bmlflow\s+(?:server|ui)\b", server)
    span = offset + named.start(), offset + named.end()
    problems = []
    apps = option_values(server, "--app-name")
    if not apps or any(app != "basic-auth" for app, _ in apps):
        problems.append(
            command.problem(
                span,
                "the MLflow server runs without authentication (--app-name basic-auth)",
                "`--app-name basic-auth`, and no other --app-name",
            )
        )
    configs = option_values(server, "MLFLOW_AUTH_CONFIG_PATH")
    setup_config = rf"{HOME}/{re.escape(AUTH_CONFIG[2:])}"
    if not configs or any(not re.fullmatch(setup_config, path) for path, _ in configs):
        problems.append(
            command.problem(
                span,
                "the MLflow server does not read the basic-auth configuration the setup writes "
                "(MLflow's own gives every user READ)",
                f"MLFLOW_AUTH_CONFIG_PATH=<home>/{AUTH_CONFIG[2:]} before `mlflow server`",
            )
        )
    return problems + _server_address_problems(command, server, offset, head_ip)


def _server_address_problems(
    command: Command, server: str, offset: int, head_ip: str | None
) -> list[str]:
    """The addresses one `mlflow server` binds: its --host and its web server's options."""
    problems = []
    hosts = option_values(server, "--host|-h") + option_values(server, "MLFLOW_HOST")
    for host, (start, end) in hosts:
        if not allowed_host(host, head_ip):
            problems.append(
                command.problem(
                    (offset + start, offset + end),
                    f"the MLflow server binds {host}",
                    f"the head's private address ({PRIVATE_ADDRESS}, or a literal address "
                    "in 10/8, 172.16/12 or 192.168/16): never 0, 0.0.0.0, ::, a hostname",
                )
            )
    passed = option_values(server, "--gunicorn-opts|--uvicorn-opts|--waitress-opts")
    passed += option_values(server, "MLFLOW_GUNICORN_OPTS|MLFLOW_UVICORN_OPTS")
    for options, (start, end) in passed:
        if re.search(r"(?:^|\s)(?:-b|--bind|--host|--port|--fd|--uds|--listen)\b", options):
            problems.append(
                command.problem(
                    (offset + start, offset + end),
                    "the MLflow server's web server is given an address of its own",
                    "the address --host gives (no -b, --bind, --host, --fd, --uds in its options)",
                )
            )
    return problems


def ray_start_problems(command: Command) -> list[str]:
    """Each `ray start`: with token authentication, the dashboard on localhost only."""
    text, problems = command.text, []
    for start_ray in re.finditer(r"\bray\s+start\b", text):
        start, end = simple_command(text, start_ray.start(), start_ray.end())
        if SIGNALS.match(text, start):
            continue
        prefix = text[start : start_ray.start()]
        exported = re.search(r"\bexport RAY_AUTH_MODE=token\b", text[: start_ray.start()])
        if not (re.search(r"(?:^|\s)RAY_AUTH_MODE=token\s", f" {prefix}") or exported):
            problems.append(
                command.problem(
                    start_ray.span(),
                    "starts Ray without token authentication",
                    "`RAY_AUTH_MODE=token ray start ...` (the token in ~/.ray/auth_token)",
                )
            )
        for host, (first, last) in option_values(text[start:end], "--dashboard-host"):
            if host not in ("127.0.0.1", "localhost"):
                problems.append(
                    command.problem(
                        (start + first, start + last),
                        f"Ray's dashboard listens on {host}",
                        "--dashboard-host=127.0.0.1 (or localhost, or none: Ray's default), "
                        "`ray dashboard` forwards it",
                    )
                )
    return problems


def auth_config_problems(command: Command) -> list[str]:
    """Only the command that writes ~/.xlt/mlflow_auth.ini names its settings (the server's
    start names its path): a later `sed` could give every user MANAGE."""
    text = re.sub(r"\bMLFLOW_AUTH_CONFIG_PATH=\S+", "", command.text)
    names = re.compile(r"mlflow_auth\.ini|default_permission|NO_PERMISSIONS")
    mentions = list(names.finditer(text))
    writes = re.search(rf"(?<!>)>\s*{HOME}/\.xlt/mlflow_auth\.ini", text)
    in_place = re.search(r"\b(?:sed|perl)\s+(?:-\w*\s+)*-\w*i", text)
    # an edit of a file under ~/.xlt (outside the quoted script), or of a permission
    touches = re.search(r"\.xlt\b", masked(text)) or re.search(
        r"\b(?:NO_PERMISSIONS|MANAGE|EDIT|READ|USE)\b", text
    )
    if in_place and touches:
        span = in_place.start(), touches.end()
    elif mentions and not (writes and len(mentions) == 3):
        span = mentions[-1].span() if writes else mentions[0].span()
    else:
        return []
    return [
        command.problem(
            span,
            f"changes the basic-auth app's configuration ({AUTH_CONFIG}, default_permission)",
            "the one setup command that writes it, with default_permission = NO_PERMISSIONS, "
            "and no command after it that edits it",
        )
    ]


def opens_mode(mode: str) -> bool:
    """Whether a chmod mode gives the group or others any permission."""
    if re.fullmatch(r"[0-7]{1,4}", mode):
        return int(mode, 8) & 0o077 != 0
    for clause in mode.split(","):
        parts = re.fullmatch(r"([ugoa]*)([-+=])([rwxXst]*|[ugo])", clause)
        if not parts:
            return True  # a mode this reader does not know (--reference=...): not owner-only
        who, operator, permissions = parts.groups()
        if operator != "-" and re.search("[goa]", who or "a") and permissions.strip("st"):
            return True
    return False


def secret_mode_problems(command: Command) -> list[str]:
    """No secret readable beyond its owner: no chmod that gives group or others a bit on a
    secret (or recursively on the home), no secret written without `umask 077` first."""
    text, problems = command.text, []
    chmod = rf"\bchmod\s+((?:-\w+\s+|--[\w-]+\s+)*)({WORD})((?:\s+(?:{WORD}))+)"
    for found in re.finditer(chmod, text):
        flags, mode, targets = found.group(1), unquote(found.group(2)), found.group(3).split()
        recursive = re.search(r"-\w*R|--recursive", flags)
        for target in map(unquote, targets):
            home = recursive and re.fullmatch(rf"{HOME}/?", target)
            if (SECRET_PLACE.match(target) or home) and opens_mode(mode):
                problems.append(
                    command.problem(
                        found.span(),
                        f"makes {target} readable beyond its owner (chmod {mode})",
                        OWNER_ONLY,
                    )
                )
    for write in re.finditer(rf"(?:>>?|\btee\s+(?:-a\s+)?)\s*['\"]?({SECRET_FILE})", text):
        umasks = re.findall(r"\bumask\s+([0-7]+)", text[: write.start()])
        if not umasks or int(umasks[-1], 8) & 0o077 != 0o077:
            problems.append(
                command.problem(
                    write.span(),
                    f"writes {write.group(1)} without `umask 077` first",
                    "`umask 077 && ...` before the write (readable by its owner only)",
                )
            )
    return problems
