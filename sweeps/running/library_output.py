"""What a sweep's trial workers and Ray Tune print, set at the source: the libraries' own
level variables and Tune's output engine. By default and with `-q` the trials and the
libraries print their warnings and errors only (the driver's progress lines say how the trials
go); `-v` shows everything. The driver's own MLflow and Ray loggers: xlt_schema/log.py; what
Ray and Tune log in the driver while a sweep runs goes to a log file (`ray_log_to_file`)."""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import sys
import tempfile
from pathlib import Path

from xlt_schema.log import LEVEL_VARIABLE, LIBRARY_LEVELS, current_level

# Read by each library as a trial worker imports it. A value the user set is passed instead.
QUIET_WORKER_VARIABLES = {
    # transformers' notes and warnings about loading a model (e.g. a new classifier head).
    "TRANSFORMERS_VERBOSITY": "error",
    # The tqdm bars of transformers and the hub ("Loading weights", "Writing model shards"),
    # and of `datasets` (hub data sets): their lines fill a log, not a terminal.
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
}
# Tune's output engine: its new one prints a configuration box and the results' folder even
# with `RunConfig(verbose=0)`; the old one prints nothing at verbose 0 (the driver's progress
# lines replace both).
TUNE_NEW_OUTPUT_VARIABLE = "RAY_AIR_NEW_OUTPUT"


def verbose() -> bool:
    """Whether the command runs with `-v` (its level DEBUG)."""
    return current_level() <= logging.DEBUG


def worker_variables() -> dict[str, str]:
    """The environment every trial worker starts with (a cluster's nodes do not inherit the
    driver's): the trials' log level (WARNING unless -v: their steps are details; a warning
    or a failure still shows) and, unless -v, the libraries' quiet settings: MLflow's and
    Ray's loggers at WARNING (Ray Train's "Checkpoint successfully created at: ..." after every
    evaluation), transformers' at ERROR, no progress bars."""
    if verbose():
        return {LEVEL_VARIABLE: logging.getLevelName(logging.DEBUG)}
    variables = {
        **{variable: "warning" for variable in LIBRARY_LEVELS.values()},
        **QUIET_WORKER_VARIABLES,
    }
    return {
        LEVEL_VARIABLE: logging.getLevelName(logging.WARNING),
        **{name: os.environ.get(name, value) for name, value in variables.items()},
    }


def quiet_tune() -> None:
    """Unless -v, Tune's old output engine (silent at verbose 0), in this process, where Tune
    reads it as a phase starts; a value the user set is kept."""
    if not verbose():
        os.environ.setdefault(TUNE_NEW_OUTPUT_VARIABLE, "0")


# The driver's file of Ray's and Tune's own records, in the Ray session's log folder beside
# Ray's (`<session>/logs/`; before Ray starts or after it stops, the temporary folder).
RAY_LOG_FILE = "xlt-driver.log"
# The one record of Ray's the terminal keeps: a trial's failure (Tune's, with its traceback),
# which the progress line "failed (its error is above)" points at.
TRIAL_FAILED = "Trial task failed for trial"


@contextlib.contextmanager
def ray_log_to_file():
    """Unless -v, while the block runs (a sweep's life in the driver): Ray's and Tune's records
    go to RAY_LOG_FILE, not the terminal. They are Tune's notes as a phase stops (its stop
    signal, "Experiment has been interrupted" with `Tuner.restore(...)` advice that the
    `--resume` line replaces, "Failed to fetch metrics" of the unfinished trials) and Ray's
    errors on a full disk (unhandled task errors with their tracebacks); the terminal keeps the
    project's lines, and a trial's failure in one line (`TrialFailureLine`). Entered after
    Ray's import, which puts its terminal handler on its logger."""
    ray_logger = logging.getLogger("ray")
    if verbose():
        yield
        return
    terminal = list(ray_logger.handlers)
    ours = [RayLogFile(), TrialFailureLine(terminal)]
    for handler in terminal:
        ray_logger.removeHandler(handler)
    for handler in ours:
        ray_logger.addHandler(handler)
    try:
        yield
    finally:
        for handler in ours:
            ray_logger.removeHandler(handler)
            handler.close()
        for handler in terminal:
            ray_logger.addHandler(handler)


class RayLogFile(logging.FileHandler):
    """Writes each record, traceback included, to RAY_LOG_FILE, opened at the first record
    (`ray_log_path` then: Ray has started). A record it cannot write (a full disk) is dropped:
    logging's own report of that would be a traceback on the terminal."""

    def __init__(self) -> None:
        super().__init__(ray_log_path(), delay=True)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if self.stream is None:
            self.baseFilename = str(ray_log_path())
        try:
            super().emit(record)
        except OSError:  # the file could not be opened
            pass

    def handleError(self, record: logging.LogRecord) -> None:
        pass  # see the class's docstring


def ray_log_path() -> Path:
    """Where RAY_LOG_FILE is written: the running Ray session's log folder, else the
    temporary folder."""
    folder = Path(tempfile.gettempdir())
    ray = sys.modules.get("ray")
    node = getattr(getattr(ray, "_private", None), "worker", None)
    node = getattr(node, "_global_node", None)
    if node is not None:
        folder = Path(node.get_logs_dir_path())
    return folder / RAY_LOG_FILE


class TrialFailureLine(logging.Handler):
    """Passes Tune's record of a trial's failure to Ray's own terminal handlers in one line:
    its message and the trial's error's first line (the traceback is in the log file)."""

    def __init__(self, terminal: list[logging.Handler]) -> None:
        super().__init__()
        self._terminal = terminal

    def emit(self, record: logging.LogRecord) -> None:
        if not str(record.msg).startswith(TRIAL_FAILED):
            return
        line = copy.copy(record)
        if record.exc_info and record.exc_info[1] is not None:
            line.msg, line.args = f"{record.getMessage()}: {error_line(record.exc_info[1])}", ()
        line.exc_info, line.exc_text = None, None
        for handler in self._terminal:
            handler.handle(line)


def error_line(error: BaseException) -> str:
    """`Type: first line` of a trial's error: of its own exception when Ray wrapped it (a
    RayTaskError's `cause`), else of Ray's (a dead worker's RayActorError)."""
    cause = getattr(error, "cause", None)
    error = cause if isinstance(cause, BaseException) else error
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")
