"""A stop signal once every trial ended, while the report is being made, names the closed
parent run, so the driver prints the `--resume` line that writes the report (issue 53, item 4:
a SIGTERM to the group as "3 of 3 trials of the reported phase finished" was printed landed in
the report's import, before the report's `resumable` block, and the driver said "nothing was
tracked yet; run the same command again", which started a second sweep)."""

import signal
import sys
import types

import pytest

from sweeps.cli import _interrupted_exit
from sweeps.running import runner
from sweeps.safety.interruption import StopSignals, SweepInterrupted


class _ImportInterrupted(types.ModuleType):
    """`analysis.report` as a signal finds it mid-import: reading what the sweep imports of it
    raises the signal."""

    def __getattr__(self, name):
        if name in ("report_sweep", "print_summary"):
            raise SweepInterrupted(signal.SIGTERM)
        raise AttributeError(name)


def test_a_signal_while_the_report_is_imported_prints_the_resume_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "analysis.report", _ImportInterrupted("analysis.report"))
    options = runner.SweepOptions(tracking_uri="sqlite:///unused.db")
    with pytest.raises(SweepInterrupted) as caught:
        runner._report(None, options, None, "parent-1", 0, StopSignals())
    assert caught.value.parent_run_id == "parent-1"
    assert _interrupted_exit(caught.value, False, "python sweep.py --resume") == 143
    assert capsys.readouterr().err == (
        "interrupted (SIGTERM received): the state is saved; continue with:\n"
        "  python sweep.py --resume\n"
    )
