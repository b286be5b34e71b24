"""A null check on trained models: one configuration, its seeds split into two groups.

Plain fine-tuning with the smoke settings of `sweeps/ear_xnli.py --preset smoke` (the tiny
model on offline synthetic XNLI) is trained in this process for seeds F .. F+S-1 (F 0 unless
`--first-seed`), one after another (no Ray, no MLflow). Every split of those seeds into two
disjoint groups of S/2 (each split once: the first seed always in group A, so S = 8 gives 35
splits) is then compared as if the groups were two configurations, per test language, with
the report's tests; group A's i-th seed is paired with group B's i-th seed, as the report
pairs seeds. The null holds by construction, so a test that keeps its level rejects about 5%
of the splits; the splits share their seeds, so the share is a rough check, not a
calibration (docs/statistics.md).

    python -m benchmarks.seed_null --seeds 8 [--first-seed 0] [--tests crossed,ttest,bootstrap]
                                   [--set epochs=1]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np

from analysis.calibration import ALPHA, p_values
from analysis.stats import SIGNIFICANCE_TESTS

DEFAULT_TESTS = ("crossed", "ttest", "bootstrap")
RESAMPLES = 1000  # bootstrap resamples per split (the report's default)


def seed_splits(seeds: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every split of the seeds' positions 0 .. seeds-1 into two groups of seeds/2, each once:
    group A is the one holding position 0; both groups in increasing order (their i-th seeds
    are paired)."""
    if seeds < 4 or seeds % 2:
        raise ValueError(f"--seeds {seeds}: an even number >= 4 (2 or more seeds per group)")
    rest = range(1, seeds)
    splits = []
    for others in itertools.combinations(rest, seeds // 2 - 1):
        group_a = (0, *others)
        splits.append((group_a, tuple(s for s in range(seeds) if s not in group_a)))
    return splits


def split_rejections(
    scores: np.ndarray, tests: tuple[str, ...], resamples: int = RESAMPLES
) -> dict[str, int]:
    """Per test, how many of the seed splits of `scores` (seeds, examples) it rejects at ALPHA,
    comparing group A (system) with group B (baseline), every split in one batch."""
    scores = np.asarray(scores, dtype=float)
    splits = seed_splits(scores.shape[0])
    group_a = scores[[list(a) for a, _ in splits]]
    group_b = scores[[list(b) for _, b in splits]]
    return {
        test: int(np.count_nonzero(p_values(test, group_a, group_b, "accuracy", resamples) < ALPHA))
        for test in tests
    }


def train_seeds(settings: dict, seeds: range) -> dict[str, np.ndarray]:
    """Train `settings` for each of `seeds`; per test language, the per-example test scores
    shaped (seeds, examples). Prints a line per trained seed."""
    import torch

    from xlt_core.config import TrialConfig
    from xlt_core.cpus import torch_threads
    from xlt_core.reporting import ListReporter
    from xlt_core.trial import run_trial
    from xlt_schema import example_scores_key

    torch.set_num_threads(torch_threads())
    rows: dict[str, list] = {}
    for index, seed in enumerate(seeds, 1):
        started = time.perf_counter()
        config = TrialConfig.from_dict({**settings, "seed": seed})
        with ListReporter() as reporter:
            result = run_trial(config, reporter)
        accuracies = []
        for lang in config.test_langs:
            scores = result.example_scores[example_scores_key("test", lang)]["scores"]
            rows.setdefault(lang, []).append(scores)
            accuracies.append(f"{lang} {np.mean(scores):.3f}")
        elapsed = time.perf_counter() - started
        print(f"seed {seed} ({index}/{len(seeds)}) trained in {elapsed:.0f} s: test accuracy "
              + ", ".join(accuracies), flush=True)  # fmt: skip
    return {lang: np.asarray(values, dtype=float) for lang, values in rows.items()}


def null_table(scores: dict[str, np.ndarray], tests: tuple[str, ...]) -> list[str]:
    """The table's lines: per test, each language's rejected splits, their share and their
    total; then each language's examples and its seeds' accuracy spread."""
    langs = list(scores)
    seeds, _ = next(iter(scores.values())).shape
    splits = len(seed_splits(seeds))
    rejected = {lang: split_rejections(scores[lang], tests) for lang in langs}
    lines = [
        f"Splits of {seeds} seeds into two groups of {seeds // 2}: {splits} "
        f"(each once); rejected at alpha {ALPHA}",
        "test       " + "".join(f" {lang:>15}" for lang in langs),
    ]
    for test in tests:
        cells = [f"{rejected[lang][test]}/{splits} ({100 * rejected[lang][test] / splits:.1f}%)"
                 for lang in langs]  # fmt: skip
        lines.append(f"{test:<11}" + "".join(f" {cell:>15}" for cell in cells))
    for lang in langs:
        per_seed = scores[lang].mean(axis=1)
        lines.append(
            f"{lang}: {scores[lang].shape[1]} examples; seeds' accuracy {per_seed.mean():.3f}"
            f" (sd {per_seed.std(ddof=1):.3f}, range {per_seed.min():.3f}-{per_seed.max():.3f})"
        )
    return lines


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.seed_null",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seeds", type=int, default=8, help="S, even, >= 4 (default 8)")
    parser.add_argument(
        "--first-seed", type=int, default=0, help="the first seed trained (default 0)"
    )
    parser.add_argument(
        "--tests",
        default=",".join(DEFAULT_TESTS),
        help=f"comma-separated, of {', '.join(SIGNIFICANCE_TESTS)} "
        f"(default {','.join(DEFAULT_TESTS)})",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a TrialConfig setting over the smoke settings (repeatable), e.g. epochs=1",
    )
    args = parser.parse_args(argv)
    args.tests = tuple(t.strip() for t in args.tests.split(",") if t.strip())
    unknown = [t for t in args.tests if t not in SIGNIFICANCE_TESTS]
    if unknown or not args.tests:
        parser.error(f"--tests {','.join(unknown)}: allowed {', '.join(SIGNIFICANCE_TESTS)}")
    try:
        seed_splits(args.seeds)
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv: list[str] | None = None) -> int:
    from sweeps.ear_xnli import trial_settings
    from sweeps.spec.spaces import BASELINE
    from xlt_core.config import TrialConfig, parse_assignments
    from xlt_core.errors import ConfigError

    args = parse_args(argv)
    settings = {**trial_settings("smoke", None), **BASELINE}
    try:
        settings.update(parse_assignments(args.set))
        config = TrialConfig.from_dict(settings)  # a bad setting stops here, before training
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not config.selection_metric().endswith("/accuracy"):
        print(f"error: --set task={config.task}: the check compares 0/1 accuracy scores "
              "(task xnli or pawsx)", file=sys.stderr)  # fmt: skip
        return 2
    shown = ", ".join(f"{key}={value}" for key, value in settings.items())
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"Training seeds {seeds.start}-{seeds.stop - 1} of one configuration: {shown}",
          flush=True)  # fmt: skip
    for line in null_table(train_seeds(settings, seeds), args.tests):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
