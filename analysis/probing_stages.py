"""efimov2023 Fig. 2 from one adjustment sweep: the related / unrelated word-pair distance
histograms of the five model states side by side, on shared bins.

The states come from three trials of the same seed: the baseline (adaptation `none`:
`original`, then `finetuned`), the adjusted trial (`adjusted`, `adjusted_finetuned`) and
the continual one (`adjusted_continual`). Every trial probes the same held-out pairs with
the same unrelated partners, so the panels differ only by the encoder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from xlt_schema import PROBING_STATES

PROBING_PLOT = "probing_stages.png"

# Which trial, by adaptation, holds each state.
STATE_ADAPTATION = {
    "original": "none",
    "finetuned": "none",
    "adjusted": "adjusted",
    "adjusted_finetuned": "adjusted",
    "adjusted_continual": "adjusted_continual",
}


@dataclass(frozen=True)
class ProbingStages:
    """One seed's probing distances per model state, as read by
    :func:`analysis.sweep_records.read_probing_stages`."""

    seed: int
    distances: dict[str, dict]  # state -> {"related": [...], "unrelated": [...]}


def stage_runs(trials: pd.DataFrame, baseline_method: str = "finetune") -> tuple[int, dict]:
    """(seed, {state: run_id}) for the lowest seed that has a run of every adaptation the
    sweep ran with the baseline method; states whose adaptation the sweep did not run are
    left out. Raises ValueError when no seed has them all."""
    runs = trials[trials["method"] == baseline_method]
    adaptations = sorted(set(runs["adaptation"]))
    complete = [
        seed for seed, group in runs.groupby("seed") if set(group["adaptation"]) == set(adaptations)
    ]
    if not complete:
        raise ValueError(f"no seed has a {baseline_method} run of every adaptation {adaptations}")
    seed = min(complete)
    by_adaptation = runs[runs["seed"] == seed].groupby("adaptation")["run_id"].first()
    return seed, {
        state: by_adaptation[adaptation]
        for state, adaptation in STATE_ADAPTATION.items()
        if adaptation in by_adaptation
    }


def shared_bins(distances: dict[str, dict], count: int = 40) -> np.ndarray:
    """Bin edges from 0 to the largest distance of every state and both pair kinds."""
    largest = max(max(d["related"] + d["unrelated"]) for d in distances.values())
    return np.linspace(0.0, float(largest), count + 1)


def plot_probing_stages(distances: dict[str, dict], path: Path, title: str) -> str:
    """One panel per state, in efimov2023's order, on shared bins and a shared y axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    states = [state for state in PROBING_STATES if state in distances]
    bins = shared_bins(distances)
    figure, axes = plt.subplots(
        1, len(states), figsize=(3.2 * len(states), 3.0), sharex=True, sharey=True, squeeze=False
    )
    for panel, state in zip(axes[0], states):
        related, unrelated = distances[state]["related"], distances[state]["unrelated"]
        for kind, values in (("related", related), ("unrelated", unrelated)):
            panel.hist(values, bins=bins, alpha=0.6, label=f"{kind}, mean {np.mean(values):.2f}")
        panel.set_title(state.replace("_", " + "), fontsize=9)
        panel.set_xlabel("L2 distance")
        panel.legend(fontsize=6)
    axes[0][0].set_ylabel("word pairs")
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return str(path)


def probing_stages_figure(stages: ProbingStages | None, out: Path) -> list[str]:
    """The side-by-side figure of an adjustment sweep whose trials logged their probing
    distances (`PROBING_PLOT` in `out`); no figure (an empty list) without them."""
    if stages is None:
        return []
    title = f"Related / unrelated word-pair L2 distances by model state (seed {stages.seed})"
    return [plot_probing_stages(stages.distances, out / PROBING_PLOT, title)]
