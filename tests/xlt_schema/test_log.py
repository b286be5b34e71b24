"""xlt_schema/log.py: the project's log messages as bare lines on the current stdout, at the
level of -q / (default) / -v."""

import argparse
import io
import logging
import sys

import pytest

from xlt_schema import log


def _say_each_level(name: str = "sweeps.some_module") -> None:
    logger = logging.getLogger(name)
    logger.debug("a detail")
    logger.info("a note")
    logger.warning("a warning")


@pytest.mark.parametrize(
    "verbosity, shown",
    [
        (log.QUIET, ["a warning"]),
        (log.DEFAULT, ["a note", "a warning"]),
        (log.VERBOSE, ["a detail", "a note", "a warning"]),
    ],
)
def test_each_verbosity_shows_its_levels_as_bare_lines(verbosity, shown, capsys):
    log.configure(verbosity)
    for package in ("xlt_core.trial", "analysis.report", "sweeps.runner"):
        _say_each_level(package)
    out, err = capsys.readouterr()
    assert out.splitlines() == shown * 3
    assert err == ""


def test_the_handler_writes_to_the_stdout_of_the_moment(monkeypatch):
    log.configure(log.DEFAULT)
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", first)
    logging.getLogger("analysis.collect").info("one")
    monkeypatch.setattr(sys, "stdout", second)  # as pytest's capture or a redirect does
    logging.getLogger("analysis.collect").info("two")
    assert (first.getvalue(), second.getvalue()) == ("one\n", "two\n")


def test_configuring_again_replaces_the_handler(capsys):
    log.configure(log.VERBOSE)
    log.configure(log.DEFAULT)
    logging.getLogger("xlt_core").info("once")
    assert capsys.readouterr().out == "once\n"


def test_quiet_also_silences_mlflows_own_notes_and_gives_them_back():
    mlflow_logger = logging.getLogger("mlflow")
    own = mlflow_logger.level
    log.configure(log.QUIET)
    assert mlflow_logger.level == logging.WARNING
    log.configure(log.DEFAULT)
    assert mlflow_logger.level == own


def test_flags():
    parser = argparse.ArgumentParser()
    log.add_verbosity_flags(parser)
    assert parser.parse_args([]).verbosity == log.DEFAULT
    assert parser.parse_args(["-v"]).verbosity == log.VERBOSE
    assert parser.parse_args(["--quiet"]).verbosity == log.QUIET
    with pytest.raises(SystemExit):
        parser.parse_args(["-v", "-q"])


@pytest.mark.parametrize(
    "value, level",
    [("WARNING", logging.WARNING), ("debug", logging.DEBUG), ("", logging.INFO), ("x", 20)],
)
def test_a_trial_worker_takes_the_level_the_driver_passed(value, level, monkeypatch):
    monkeypatch.setenv(log.LEVEL_VARIABLE, value)
    assert log.configure_from_environment() == level
    assert log.current_level() == level


def test_progress_lines_come_about_every_tenth_and_once_for_a_few_items():
    assert [done for done in range(1, 101) if log.progress_due(done, 100)] == list(
        range(10, 101, 10)
    )
    assert [done for done in range(1, 7) if log.progress_due(done, 6)] == [6]
    assert log.progress_due(1, 1)
