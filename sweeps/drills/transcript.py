"""A drill's transcript: each step, its time and its outcome, printed as it ends and written
as a Markdown table (`make cluster-check` puts it in docs/cluster.md)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from sweeps.drills.lab_nodes import CommandFailed


class Transcript:
    def __init__(self, path: Path):
        self.path = path
        self.rows: list[tuple[str, float, str]] = []
        self.started = time.monotonic()

    def step(self, name: str, action: Callable[[], str]) -> str:
        """`action`'s outcome, recorded with its time; a CommandFailed is recorded, then raised."""
        start = time.monotonic()
        try:
            outcome = action()
        except CommandFailed as error:
            self.record(name, start, f"FAILED: {error}")
            raise
        self.record(name, start, outcome)
        return outcome

    def record(self, name: str, start: float, outcome: str) -> None:
        seconds = time.monotonic() - start
        self.rows.append((name, seconds, outcome))
        print(f"{name:<18} {seconds:6.1f} s  {outcome}", flush=True)

    def write(self) -> None:
        total = time.monotonic() - self.started
        lines = ["| step | time | outcome |", "|---|---:|---|"]
        lines += [
            # A | in an outcome would end its cell.
            f"| {name} | {seconds:.1f} s | {outcome.replace('|', chr(92) + '|')} |"
            for name, seconds, outcome in self.rows
        ]
        lines.append(f"| all | {total:.1f} s | |")
        self.path.write_text("\n".join(lines) + "\n")
        print(f"all {total:.1f} s; transcript: {self.path}", flush=True)
