"""What a sweep's trial workers and Ray Tune print, set at the source: the libraries' own
level variables and Tune's output engine. By default and with `-q` the trials and the
libraries print their warnings and errors only (the driver's progress lines say how the trials
go); `-v` shows everything. The driver's own MLflow and Ray loggers: xlt_schema/log.py."""

from __future__ import annotations

import logging
import os

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
