"""Command line: ``python -m analysis report --experiment NAME [...]``."""

import argparse
import os
import sys

from mlflow.exceptions import MlflowException

from analysis.report import format_summary, report_sweep

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m analysis``."""
    parser = argparse.ArgumentParser(prog="python -m analysis",
                                     description="Statistics and reports for finished sweeps.")
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="select the best configuration and write a report")
    report.add_argument("--experiment", required=True, help="MLflow experiment (sweep) name")
    report.add_argument("--tracking-uri",
                        default=os.environ.get("MLFLOW_TRACKING_URI", DEFAULT_TRACKING_URI),
                        help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else "
                             f"{DEFAULT_TRACKING_URI})")
    report.add_argument("--parent-run", help="parent run id (default: newest with finished trials)")
    report.add_argument("--out", help="directory for the report files (default: a new temp dir)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        report = report_sweep(args.tracking_uri, args.experiment, args.parent_run, args.out)
    except (ValueError, MlflowException) as error:
        print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
        return USAGE_ERROR
    print(format_summary(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
