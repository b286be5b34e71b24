"""The verdict after a selection, under the null: how often each flow says "beats the
baseline" when no candidate is better (docs/statistics.md#selection).

``python -m analysis.selection_calibration`` prints the table. Each repeat simulates a sweep
of ``candidates`` configurations and the baseline, all equally good, ``seeds`` seeds each, in
:mod:`analysis.calibration_model`'s probit model: per example a difficulty shared by every method,
each method's own example effects (omega), a whole run's seed shift and each prediction's own
noise. A run's seed shift on dev and on test are correlated (``correlation``: 1, the same
luck on both splits; 0.5, half of it): the candidate with the best dev mean over its seeds is
selected, and three flows decide the verdict on test, by the crossed test, one-sided
("beats": p < 0.05 and a positive difference, 2.5% nominal):

- ``same runs``: the selected configuration's own runs against the baseline's (0.5.0's flow);
- ``confirmed``: both re-run on fresh seeds (new shifts and noise; the methods' own example
  effects stay, they belong to the method), the default flow;
- ``bonferroni``: the same runs, the p-value multiplied by the candidates (confirm_seeds=0).
"""

import argparse
import itertools
import time
from dataclasses import dataclass

import numpy as np

from analysis.calibration_model import ALPHA, NOISE_SD, Cell
from analysis.stats import crossed_test_batch
from analysis.tables import markdown_table
from analysis.verdict_runs import adjusted_average

FLOWS = ("same runs", "confirmed", "bonferroni")
_CHUNK_ENTRIES = 20_000_000


@dataclass(frozen=True)
class SelectionCell:
    """One setting: a null sweep of ``candidates`` and the baseline."""

    candidates: int
    correlation: float  # of a run's seed shift on dev and on test
    seeds: int = 5
    seed_sd: float = 0.6  # points
    dev_examples: int = 2490  # XNLI's dev
    test_examples: int = 5010  # XNLI's test
    accuracy: float = 0.7

    @property
    def model(self) -> Cell:
        return Cell(self.test_examples, self.seeds, self.seed_sd, self.accuracy, disagree=True)


def _scores(rng, model: Cell, difficulty, own, shifts) -> np.ndarray:
    """0/1 scores (..., seeds, examples) of runs with these per-run ``shifts`` (..., seeds)."""
    noise = NOISE_SD * rng.standard_normal((*shifts.shape, difficulty.shape[-1]))
    return (difficulty + own + model.tau * shifts[..., None] + noise > 0).astype(float)


def _sweep(rng, cell: SelectionCell, repeats: int):
    """(selected, baseline) test scores on the selecting runs and on fresh ones, each
    (repeats, seeds, test examples)."""
    model, methods, batch = cell.model, cell.candidates + 1, np.arange(repeats)
    dev_shift = rng.standard_normal((repeats, methods, cell.seeds))
    dev = rng.standard_normal((repeats, 1, 1, cell.dev_examples)) + model.mu
    dev_own = model.omega * rng.standard_normal((repeats, methods, 1, cell.dev_examples))
    dev_means = _scores(rng, model, dev, dev_own, dev_shift).mean(axis=(-2, -1))
    chosen = 1 + np.argmax(dev_means[:, 1:], axis=1)  # method 0 is the baseline
    pair = np.stack([chosen, np.zeros_like(chosen)], axis=1)  # (repeats, 2)
    rho = cell.correlation
    independent = rng.standard_normal((repeats, 2, cell.seeds))
    test_shift = rho * dev_shift[batch[:, None], pair] + np.sqrt(1 - rho**2) * independent
    test = rng.standard_normal((repeats, 1, 1, cell.test_examples)) + model.mu
    test_own = model.omega * rng.standard_normal((repeats, 2, 1, cell.test_examples))
    same = _scores(rng, model, test, test_own, test_shift)
    fresh = _scores(rng, model, test, test_own, rng.standard_normal((repeats, 2, cell.seeds)))
    return same, fresh


def beats_rates(cell: SelectionCell, repeats: int, seed: int = 0) -> dict[str, float]:
    """Per flow, the share of ``repeats`` null sweeps whose verdict says "beats"."""
    rng = np.random.default_rng(seed)
    per_repeat = cell.seeds * ((cell.candidates + 1) * cell.dev_examples + 4 * cell.test_examples)
    chunk = max(1, _CHUNK_ENTRIES // per_repeat)
    beats = dict.fromkeys(FLOWS, 0)
    for start in range(0, repeats, chunk):
        same, fresh = _sweep(rng, cell, min(chunk, repeats - start))
        for flow, (runs, factor) in {
            "same runs": (same, 1),
            "confirmed": (fresh, 1),
            "bonferroni": (same, cell.candidates),
        }.items():
            result = crossed_test_batch(runs[:, 0], runs[:, 1])
            for difference, p in zip(result.mean_difference, result.p_value):
                adjusted = adjusted_average({"p_value": float(p)}, factor)["p_value"]
                beats[flow] += int(difference > 0 and adjusted < ALPHA)
    return {flow: count / repeats for flow, count in beats.items()}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.selection_calibration", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--candidates", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--correlation", type=float, nargs="+", default=[0.5, 1.0])
    parser.add_argument("--seed-sd", type=float, nargs="+", default=[0.6, 1.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[5])
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    rows, start = [], time.monotonic()
    cells = itertools.product(args.candidates, args.correlation, args.seed_sd, args.seeds)
    for index, (candidates, correlation, seed_sd, seeds) in enumerate(cells):
        cell = SelectionCell(candidates, correlation, seeds, seed_sd)
        rates = beats_rates(cell, args.repeats, args.seed + index)
        rows.append(
            [
                str(candidates),
                f"{correlation:g}",
                f"{seed_sd:g}",
                str(seeds),
                *(f"{100 * rates[flow]:.2f}%" for flow in FLOWS),
            ]
        )
    header = ["candidates", "dev/test shift correlation", "seed sd (points)", "seeds"]
    print("\n".join(markdown_table([*header, *(f"'beats': {flow}" for flow in FLOWS)], rows)))
    print(
        f"\n{args.repeats} null sweeps per cell (XNLI-like: dev {SelectionCell.dev_examples}, "
        f"test {SelectionCell.test_examples} examples, accuracy 0.7, methods with their own "
        f"example effects); one-sided, 2.5% nominal; {time.monotonic() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
