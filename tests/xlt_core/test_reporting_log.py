"""`python -m xlt_core`'s step lines (ListReporter, verbose) are log messages: shown by
default, hidden by -q."""

from xlt_core import __main__ as xlt_main
from xlt_core.reporting import ListReporter
from xlt_schema.log import QUIET, VERBOSE, configure


def test_a_verbose_reporter_logs_each_step(capsys):
    with ListReporter(verbose=True) as reporter:
        reporter.report(3, {"train/loss": 0.5, "train/dev_accuracy": 0.25})
        configure(QUIET)
        reporter.report(4, {"train/loss": 0.4})
    assert capsys.readouterr().out == "step 3: train/dev_accuracy=0.2500, train/loss=0.5000\n"


def test_a_quiet_reporter_keeps_its_reports(capsys):
    with ListReporter() as reporter:
        reporter.report(1, {"train/loss": 1.0})
        assert reporter.reports == [(1, {"train/loss": 1.0})]
    assert capsys.readouterr().out == ""


def test_the_command_takes_v_and_q():
    assert xlt_main.parse_arguments(["-q"]).verbosity == QUIET
    assert xlt_main.parse_arguments(["--verbose", "--set", "seed=1"]).verbosity == VERBOSE
