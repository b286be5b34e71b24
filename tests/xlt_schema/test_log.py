"""xlt_schema/log.py: the project's log messages as bare lines on the current stdout, at the
level of -q / (default) / -v."""

import argparse
import io
import logging
import os
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
    for package in ("xlt_core.trial", "analysis.report", "sweeps.running.runner"):
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


@pytest.fixture
def fresh_libraries(monkeypatch):
    """MLflow's and Ray's loggers as their imports leave them (INFO), no level variable set
    (as for a user who set none), and `configure` not called yet; all restored afterwards."""
    loggers = [logging.getLogger(name) for name in log.LIBRARY_LEVELS]
    before = [logger.level for logger in loggers]
    for variable in log.LIBRARY_LEVELS.values():
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(log, "_LIBRARY_LEVELS", {})
    for logger in loggers:
        logger.setLevel(logging.INFO)
    yield
    for logger, level in zip(loggers, before):
        logger.setLevel(level)


@pytest.mark.parametrize("verbosity", [log.QUIET, log.DEFAULT])
def test_only_verbose_shows_the_libraries_own_notes(verbosity, fresh_libraries):
    mlflow_logger = logging.getLogger("mlflow")
    log.configure(verbosity)
    assert mlflow_logger.level == logging.WARNING
    assert mlflow_logger.isEnabledFor(logging.WARNING)  # its warnings still show
    log.configure(log.VERBOSE)
    assert mlflow_logger.level == logging.INFO


def test_a_library_level_the_user_set_is_kept(fresh_libraries, monkeypatch):
    monkeypatch.setenv("MLFLOW_LOGGING_LEVEL", "DEBUG")
    log.configure(log.DEFAULT)
    assert logging.getLogger("mlflow").level == logging.DEBUG
    assert os.environ["MLFLOW_LOGGING_LEVEL"] == "DEBUG"


def test_a_library_not_imported_yet_reads_its_level_from_its_variable(fresh_libraries, monkeypatch):
    monkeypatch.delitem(sys.modules, "ray", raising=False)  # Ray reads it when imported
    logging.getLogger("ray").setLevel(logging.NOTSET)
    log.configure(log.DEFAULT)
    assert os.environ["RAY_LOGGER_LEVEL"] == "warning"
    log.configure(log.VERBOSE)
    assert "RAY_LOGGER_LEVEL" not in os.environ
    assert logging.getLogger("ray").level == logging.INFO  # not NOTSET: the root's WARNING


def test_flags():
    parser = argparse.ArgumentParser()
    log.add_verbosity_flags(parser)
    assert parser.parse_args([]).verbosity == log.DEFAULT
    assert parser.parse_args(["-v"]).verbosity == log.VERBOSE
    assert parser.parse_args(["--quiet"]).verbosity == log.QUIET
    with pytest.raises(SystemExit):
        parser.parse_args(["-v", "-q"])


def test_flags_before_or_after_a_subcommand():
    parser = argparse.ArgumentParser()
    log.add_verbosity_flags(parser)
    command = parser.add_subparsers(dest="command").add_parser("report")
    log.add_verbosity_flags(command, default=argparse.SUPPRESS)
    assert parser.parse_args(["report"]).verbosity == log.DEFAULT
    assert parser.parse_args(["-v", "report"]).verbosity == log.VERBOSE
    assert parser.parse_args(["report", "-v"]).verbosity == log.VERBOSE
    assert parser.parse_args(["-q", "report"]).verbosity == log.QUIET
    assert parser.parse_args(["-q", "report", "-v"]).verbosity == log.VERBOSE  # the later


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
