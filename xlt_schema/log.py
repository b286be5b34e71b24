"""Logging for every command: the project's messages as bare lines on stdout, `-v` / `-q`.

Each module logs to `logging.getLogger(__name__)`; a command calls `configure(verbosity)`
once, after reading its flags (`add_verbosity_flags`). Levels: `-q` WARNING (warnings and
errors only; a command's result, such as a report's verdict and paths, is printed apart),
default INFO (progress and notes), `-v` DEBUG. The libraries' own notes (LIBRARY_LEVELS) only
`-v` shows: by default and with `-q` they print their warnings and errors. A Ray trial worker
calls `configure_from_environment()`: the driver passes its level in LEVEL_VARIABLE.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

# The packages whose loggers `configure` sets up (module loggers are their children).
PROJECT_LOGGERS = ("xlt_core", "sweeps", "analysis", "xlt_schema", "benchmarks")
# Libraries whose own INFO lines (MLflow's "Creating initial MLflow database tables...",
# Ray's "Started a local Ray instance") only `-v` shows, each with the environment variable it
# reads its level from when imported: a command imports them after `configure`, and MLflow's
# and Ray's imports set their loggers' levels. A level the user set there is kept.
LIBRARY_LEVELS = {"mlflow": "MLFLOW_LOGGING_LEVEL", "ray": "RAY_LOGGER_LEVEL"}
# The level a sweep's trials log at (a level name such as WARNING), set by the driver.
LEVEL_VARIABLE = "XLT_LOG_LEVEL"
QUIET, DEFAULT, VERBOSE = -1, 0, 1
# Each library's logger level and level variable as they were before `configure` changed them.
_LIBRARY_LEVELS: dict[str, tuple[int, str | None]] = {}


class CurrentStdoutHandler(logging.StreamHandler):
    """Writes each message to whatever `sys.stdout` is when it is emitted, not when the
    handler was made: pytest's capture, a redirect, or a Ray worker's replaced stream."""

    def __init__(self) -> None:
        super().__init__(sys.stdout)
        self.setFormatter(logging.Formatter("%(message)s"))

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, _value) -> None:
        pass  # StreamHandler.__init__ sets it; the current sys.stdout is always used


def level_for(verbosity: int) -> int:
    """The logging level of a verbosity: < 0 (-q) WARNING, 0 INFO, > 0 (-v) DEBUG."""
    if verbosity < 0:
        return logging.WARNING
    return logging.INFO if verbosity == 0 else logging.DEBUG


def configure(verbosity: int) -> int:
    """Send the project's log messages to stdout at the level of `verbosity`; returns the
    level. Calling it again replaces the earlier set-up (tests run several commands)."""
    level = level_for(verbosity)
    for name in PROJECT_LOGGERS:
        logger = logging.getLogger(name)
        for handler in [h for h in logger.handlers if isinstance(h, CurrentStdoutHandler)]:
            logger.removeHandler(handler)
        logger.addHandler(CurrentStdoutHandler())
        _set_level(logger, level)
        # Bare lines once: not again through a handler that a library put on the root.
        logger.propagate = False
    for name, variable in LIBRARY_LEVELS.items():
        _set_library_level(name, variable, quiet=verbosity <= DEFAULT)
    return level


def _set_library_level(name: str, variable: str, quiet: bool) -> None:
    """The library's logger at WARNING (and its level variable, for an import to come) when
    `quiet`, else as the library and the user had them."""
    library = logging.getLogger(name)
    own, value = _LIBRARY_LEVELS.setdefault(name, (library.level, os.environ.get(variable)))
    if quiet and value is None:
        _set_level(library, logging.WARNING)
        if name not in sys.modules:  # (only then: the variable passes to child processes)
            os.environ[variable] = "warning"  # read as WARNING by both
        return
    chosen = logging.getLevelName(value.upper()) if value else None
    # Not NOTSET: the root logger's WARNING would then apply.
    _set_level(library, chosen if isinstance(chosen, int) else own or logging.INFO)
    if value is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = value


def _set_level(logger: logging.Logger, level: int) -> None:
    # Only a change: each setLevel clears the cache of every logger in the process
    # (thousands once MLflow, Ray and transformers are loaded), and the tests reconfigure
    # before each test.
    if logger.level != level:
        logger.setLevel(level)


def configure_from_environment() -> int:
    """`configure` at the level the driver named in LEVEL_VARIABLE (default INFO): what a
    Ray trial worker calls at trial start."""
    name = os.environ.get(LEVEL_VARIABLE, "INFO").upper()
    level = logging.getLevelName(name)
    verbosity = DEFAULT if not isinstance(level, int) else _verbosity_of(level)
    return configure(verbosity)


def current_level() -> int:
    """The level `configure` last set (INFO before any call)."""
    return logging.getLogger(PROJECT_LOGGERS[0]).level or logging.INFO


def _verbosity_of(level: int) -> int:
    if level >= logging.WARNING:
        return QUIET
    return DEFAULT if level >= logging.INFO else VERBOSE


def add_verbosity_flags(parser: argparse.ArgumentParser, default=DEFAULT) -> None:
    """`-v/--verbose` and `-q/--quiet` (exclusive), read as `args.verbosity` (-1, 0, 1).
    A subcommand's flags take `default=argparse.SUPPRESS`: unless given after the subcommand,
    the value of the flags before it (its command's) stands."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-v",
        "--verbose",
        dest="verbosity",
        action="store_const",
        const=VERBOSE,
        default=default,
        help="also print debugging details",
    )
    group.add_argument(
        "-q",
        "--quiet",
        dest="verbosity",
        action="store_const",
        const=QUIET,
        default=default,
        help="print only the result, warnings and errors (no progress or notes)",
    )


def progress_due(done: int, total: int, steps: int = 10) -> bool:
    """Whether item `done` of `total` (counted from 1) gets a progress line: the last one,
    and over more than `steps` items the first of each of `steps` equal parts (a long step
    logs "i/N" about every 10 %, not once per item)."""
    crossed = done * steps // total != (done - 1) * steps // total
    return done == total or (total > steps and crossed)
