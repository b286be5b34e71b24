"""Run one trial alone, without Ray or MLflow: `python -m xlt_core --set method=ear --set seed=1`.

Exit status 2 (within seconds, nothing trained) for a bad setting or data file.
"""

from __future__ import annotations

import argparse
import json
import sys

from xlt_core.config import TrialConfig, parse_assignments
from xlt_core.errors import ConfigError, DataError
from xlt_core.reporting import ListReporter
from xlt_core.trial import check_resources, run_trial


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xlt_core", description=__doc__)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a TrialConfig setting (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        config = TrialConfig.from_dict(parse_assignments(args.set))
        check_resources(config)
    except (ConfigError, DataError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    result = run_trial(config, ListReporter(verbose=True))
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


if __name__ == "__main__":
    sys.exit(main())
