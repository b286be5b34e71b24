"""Command line: ``python -m analysis report --experiment NAME [...]`` and
``python -m analysis compare --experiments A,B,... [...]``."""

import argparse
import gc
import math
import os
import sys
from pathlib import Path

from mlflow.exceptions import MlflowException

from analysis.collect import PROGRESS_BAR_VARIABLE, connect, find_parent_run, sweep_parent
from analysis.compare import compare_sweeps, experiment_names
from analysis.completeness import is_complete
from analysis.report import print_summary, report_sweep
from analysis.select import DEFAULT_BASELINE_METHOD, DEFAULT_CORRECTION
from analysis.server_wait import DEFAULT_WAIT_S, wait_for_server
from analysis.stats import CORRECTIONS, DEFAULT_TEST, SIGNIFICANCE_TESTS
from xlt_schema.log import add_verbosity_flags, configure
from xlt_schema.tracking_store import sqlite_write_problem, take_credentials

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m analysis``."""
    parser = argparse.ArgumentParser(
        prog="python -m analysis", description="Statistics and reports for finished sweeps."
    )
    add_verbosity_flags(parser)  # before the command (-v report ...) or after it
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="select the best configuration and write a report")
    report.add_argument("--experiment", required=True, help="MLflow experiment (sweep) name")
    _add_common(report, "report")
    report.add_argument("--parent-run", help="parent run id (default: newest with finished trials)")
    report.add_argument(
        "--reference",
        help="second reference for ** marks: a method or an adaptation with one "
        "configuration (e.g. adjusted, for the adjusted model), a config label or a config key",
    )
    report.add_argument(
        "--metric",
        help="selection metric on a dev split (default: the parent run's selection_metric "
        "param, else dev/en/accuracy, else the sweep's dev/en metric)",
    )
    report.add_argument("--model-name", help="registered model name (default: the experiment)")
    report.add_argument(
        "--no-register", action="store_true", help="do not register the selected model"
    )
    report.add_argument(
        "--register-anyway",
        action="store_true",
        help="register the selected model even when the sweep has sanity warnings "
        "(a configuration that predicts one class, is at chance or diverged; a loss that "
        "blew up), and move @champion to it even when it is worse on dev than the holder's",
    )
    report.add_argument(
        "--target-difference",
        type=float,
        metavar="POINTS",
        help="also say how many seeds each comparison would need to detect this difference "
        "(in points, e.g. 0.5) with 80%% power (docs/statistics.md)",
    )
    compare = commands.add_parser(
        "compare", help="the baseline and each method's selected configuration of several sweeps"
    )
    compare.add_argument(
        "--experiments", required=True, help="comma-separated MLflow experiment (sweep) names"
    )
    _add_common(compare, "comparison")
    compare.add_argument(
        "--include-incomplete",
        action="store_true",
        help="compare an experiment's newest sweep even while it runs or after it was "
        "interrupted (default: its newest complete sweep)",
    )
    return parser


def _add_common(command: argparse.ArgumentParser, what: str) -> None:
    """The options ``report`` and ``compare`` share."""
    add_verbosity_flags(command, default=argparse.SUPPRESS)
    command.add_argument(
        "--tracking-uri",
        default=os.environ.get("MLFLOW_TRACKING_URI", DEFAULT_TRACKING_URI),
        help=f"MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else {DEFAULT_TRACKING_URI})",
    )
    command.add_argument(
        "--server-wait",
        type=_seconds,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="how long to wait for a tracking server that does not answer, saying so at "
        f"once (default {DEFAULT_WAIT_S:g})",
    )
    command.add_argument("--out", help=f"directory for the {what} files (default: a new temp dir)")
    command.add_argument(
        "--test",
        choices=SIGNIFICANCE_TESTS,
        help="significance test (default: crossed, the seed-aware test; the others average "
        "or pool the seeds and ignore the run-level seed variance, docs/statistics.md)",
    )
    command.add_argument(
        "--correction",
        choices=(*CORRECTIONS, "none"),
        default=DEFAULT_CORRECTION,
        help=f"correction of p-values over languages for the marks (default {DEFAULT_CORRECTION})",
    )
    command.add_argument(
        "--baseline",
        default=DEFAULT_BASELINE_METHOD,
        help=f"baseline method, on the unadapted encoder (adaptation none; "
        f"default {DEFAULT_BASELINE_METHOD})",
    )


def _seconds(value: str) -> float:
    """An argparse type: a finite number of seconds >= 0."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise argparse.ArgumentTypeError(f"{value!r}: a number of seconds >= 0")
    return seconds


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = build_parser().parse_args(argv)
    configure(args.verbosity)
    # MLflow draws a progress bar per artifact download (one per run); the report says
    # how its reading goes itself (analysis.collect).
    os.environ.setdefault(PROGRESS_BAR_VARIABLE, "false")
    try:
        # A server's password leaves the URI first: the waiting line never shows it.
        args.tracking_uri = take_credentials(args.tracking_uri)
        wait_for_server(args.tracking_uri, args.server_wait)
        if args.command == "compare":
            return _compare(args)
        _check_writable(args)
        report = report_sweep(
            args.tracking_uri,
            args.experiment,
            args.parent_run,
            args.out,
            reference=args.reference,
            significance_test=args.test,
            correction=args.correction,
            baseline_method=args.baseline,
            register=not args.no_register,
            model_name=args.model_name,
            selection_metric=args.metric,
            register_anyway=args.register_anyway,
            target_difference=args.target_difference,
        )
    except (ValueError, MlflowException) as error:
        print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
        return USAGE_ERROR
    print_summary(report)
    return 0


def _check_writable(args) -> None:
    """A report of a complete sweep logs itself to the parent run and registers its model: a
    SQLite store this user cannot write (a read-only folder, say) is then refused before any
    work, in one line, rather than by MLflow's logged traceback at the first write. (A sweep
    still running or interrupted is only read: its report needs no write.)"""
    path = Path(args.tracking_uri.removeprefix("sqlite:///"))
    if not args.tracking_uri.startswith("sqlite:///") or not path.is_file():
        return  # a server checks its own writes; a missing file is named by the report
    client = connect(args.tracking_uri)  # first, a file that is no MLflow store is refused
    problem = sqlite_write_problem(path)
    if problem is None:
        return
    parent = sweep_parent(find_parent_run(client, args.experiment, args.parent_run))
    if is_complete(parent):
        raise ValueError(
            f"the MLflow database {path} cannot be written ({problem}): the report of a "
            "complete sweep logs itself to its parent run; run it where the store can be written"
        )


def _compare(args) -> int:
    comparison = compare_sweeps(
        args.tracking_uri,
        experiment_names(args.experiments),
        args.out,
        baseline_method=args.baseline,
        correction=args.correction,
        include_incomplete=args.include_incomplete,
        test=args.test or DEFAULT_TEST,
    )
    print(Path(comparison.markdown_path).read_text(encoding="utf-8"))
    print(
        "\n".join(
            ["Files:", comparison.markdown_path, comparison.latex_path, *comparison.plot_paths]
        )
    )
    return 0


if __name__ == "__main__":
    code = main()
    # As sweeps/cli.py: the exit's last garbage collection would walk every object the
    # libraries made, for nothing (1.0-1.7 s of a report's exit here, 0.1 s without).
    gc.freeze()
    sys.exit(code)
