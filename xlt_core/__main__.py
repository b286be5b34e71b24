"""Run one trial alone, without Ray or MLflow: `python -m xlt_core --set method=ear --set seed=1`.

Exit status 2 for a bad setting or data file: `run_trial` checks the settings, data files,
languages and model depth first, so these stop it within seconds, before anything trains.
`--threads N` sets torch's threads (default: OMP_NUM_THREADS when set, else the CPUs this
process may run on).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys

import torch

from xlt_core.config import TrialConfig, parse_assignments, setting_names
from xlt_core.cpus import torch_threads
from xlt_core.errors import ConfigError, DataError
from xlt_core.reporting import ListReporter
from xlt_core.settings_help import settings_epilog
from xlt_core.trial import run_trial
from xlt_schema.log import add_verbosity_flags, configure


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    configure(args.verbosity)
    # Torch's own default can exceed the CPUs this process may use (under taskset or a
    # cpuset), and threads beyond them slow every step down; an explicit OMP_NUM_THREADS
    # is the user sharing the machine.
    torch.set_num_threads(torch_threads(args.threads))
    try:
        config = TrialConfig.from_dict(parse_assignments(args.set))
        with ListReporter(verbose=True) as reporter:
            result = run_trial(config, reporter)
    except (ConfigError, DataError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        json.dumps(
            {
                "metrics": result.metrics,
                "best_step": result.best_step,
                "train_seconds": round(result.train_seconds, 1),
            },
            indent=2,
        )
    )
    return 0


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m xlt_core",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=settings_epilog(setting_names(), "settings (--set KEY=VALUE), with their defaults:"),
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a TrialConfig setting (repeatable)",
    )
    parser.add_argument(
        "--threads",
        type=_positive_int,
        metavar="N",
        help="torch's intra-op threads (default: OMP_NUM_THREADS when set, else the CPUs "
        "this process may run on)",
    )
    add_verbosity_flags(parser)
    return parser.parse_args(argv)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: a positive integer (1, 2, ...)")
    return value


if __name__ == "__main__":
    code = main()
    # As sweeps/cli.py: the exit's last garbage collection would walk every object the
    # libraries made, for nothing (0.9-1.3 s of a tiny trial's exit here, 0.2 s without).
    gc.freeze()
    sys.exit(code)
