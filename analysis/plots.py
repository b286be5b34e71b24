"""PNG plots of a sweep: per-language gains with intervals, the generalized-transfer heat
map, the hyperparameter response (also per language, ding2022 Fig. 6), and the gain against
language distance (huang2021 Fig. 2).
Matplotlib's Agg backend: no display needed."""

import csv
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from scipy.stats import linregress  # noqa: E402

from analysis.verdict import GAIN, LOSS, NO_DIFFERENCE, NO_VERDICT, outcomes  # noqa: E402

DPI = 150


def _save(figure, path: Path) -> str:
    figure.tight_layout()
    figure.savefig(path, dpi=DPI, bbox_inches="tight")  # legends placed outside the axes too
    plt.close(figure)
    return str(path)


# A significant gain, a significant loss, neither, and no verdict (one seed), each in its own
# colour (colour-blind safe blue/orange rather than green/red), named in every gains plot's
# legend.
OUTCOME_COLOURS = {
    GAIN: "tab:blue",
    LOSS: "tab:orange",
    NO_DIFFERENCE: "tab:gray",
    NO_VERDICT: "lightgray",
}
OUTCOME_LEGEND = {
    GAIN: "significant gain",
    LOSS: "significant loss",
    NO_DIFFERENCE: "not significant",
    NO_VERDICT: "no verdict (one seed)",
}


def outcome_colours(comparison: pd.DataFrame) -> list[str]:
    """The bar colour of every language of a comparison: its outcome's colour."""
    return [OUTCOME_COLOURS[result] for result in outcomes(comparison)]


def plot_gains(comparison: pd.DataFrame, path: Path, title: str) -> str:
    """Bars of the mean difference (points) per language with its confidence interval,
    coloured by outcome (significant gain, significant loss, neither; after correction).

    ``comparison`` has the columns of :func:`analysis.select.compare_configs`.
    """
    differences = 100 * comparison["mean_difference"].to_numpy()
    errors = 100 * np.vstack(
        [
            comparison["mean_difference"] - comparison["ci_low"],
            comparison["ci_high"] - comparison["mean_difference"],
        ]
    )
    figure, axes = plt.subplots(figsize=(max(4.0, 0.8 * len(comparison) + 2), 3.6))
    positions = np.arange(len(comparison))
    axes.bar(positions, differences, color=outcome_colours(comparison), yerr=errors, capsize=4)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(positions, comparison["lang"])
    axes.set_ylabel("difference to baseline (points)")
    axes.set_title(title, fontsize=10)
    axes.legend(
        handles=[
            Patch(color=colour, label=OUTCOME_LEGEND[result])
            for result, colour in OUTCOME_COLOURS.items()
        ],
        title="after correction; bars: CI",
        fontsize=7,
        title_fontsize=7,
        loc="best",
    )
    return _save(figure, path)


def plot_transfer_heatmap(differences: pd.DataFrame, path: Path, title: str) -> str:
    """Heat map of system - baseline (points) per language pair.

    ``differences`` has columns lang (``en-es``: first sentence's language first) and
    difference (a fraction).
    """
    grid, firsts, seconds = _pair_grid(list(differences["lang"]), 100 * differences["difference"])
    limit = max(np.nanmax(np.abs(grid)), 1e-9)
    figure, axes = plt.subplots(
        figsize=(max(5.0, 2.5 + 0.6 * len(seconds)), max(4.0, 1.8 + 0.5 * len(firsts)))
    )
    image = axes.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit)
    for row in range(len(firsts)):
        for column in range(len(seconds)):
            if not np.isnan(grid[row, column]):
                value = grid[row, column]
                axes.text(
                    column,
                    row,
                    f"{value:+.1f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if abs(value) > 0.6 * limit else "black",
                )
    axes.set_xticks(range(len(seconds)), seconds)
    axes.set_yticks(range(len(firsts)), firsts)
    axes.set_xlabel("second sentence language")
    axes.set_ylabel("first sentence language")
    axes.set_title(title, fontsize=9, wrap=True)
    figure.colorbar(image, ax=axes, label="difference (points)", shrink=0.8)
    return _save(figure, path)


def plot_hyperparameter_response(
    points: pd.DataFrame,
    axes_names: list[str],
    baseline: tuple[float, float] | None,
    metric: str,
    path: Path,
) -> str:
    """Metric against each hyperparameter: one dot per run, the mean over seeds per value
    with the seed standard deviation as error bars, and the baseline's mean as a line.

    ``points`` has one row per run with a float column per hyperparameter (NaN where the
    method has none) and ``value`` (the metric).
    """
    figure, grid = plt.subplots(
        1, len(axes_names), figsize=(3.4 * len(axes_names), 3.2), squeeze=False
    )
    for axes, name in zip(grid[0], axes_names):
        runs = points.dropna(subset=[name])
        axes.scatter(
            runs[name], 100 * runs["value"], s=12, color="tab:blue", alpha=0.5, label="runs"
        )
        summary = runs.groupby(name)["value"].agg(["mean", "std"]).reset_index()
        axes.errorbar(
            summary[name],
            100 * summary["mean"],
            yerr=100 * summary["std"].fillna(0),
            color="tab:blue",
            marker="o",
            capsize=3,
            label="mean ± std over seeds",
        )
        if baseline is not None:
            axes.axhline(100 * baseline[0], color="tab:red", linestyle="--", label="baseline")
        axes.set_xlabel(name)
        axes.set_ylabel(f"{metric} (%)")
    grid[0][0].legend(fontsize=7)
    figure.suptitle(
        f"Hyperparameter response on {metric} (other settings vary between points)", fontsize=9
    )
    return _save(figure, path)


def plot_response_per_language(
    means: pd.DataFrame, axes_names: list[str], metric: str, path: Path
) -> str:
    """Per hyperparameter, one line per language: the mean over seeds of each configuration
    at each value (ding2022 Fig. 6 draws XNLI languages against the dictionary's scale).

    ``means`` has a float column per hyperparameter (NaN where the method has none), lang
    and value (a fraction), one row per configuration and language.
    """
    figure, grid = plt.subplots(
        1, len(axes_names), figsize=(3.8 * len(axes_names), 3.4), squeeze=False
    )
    for axes, name in zip(grid[0], axes_names):
        for lang, own in means.dropna(subset=[name]).groupby("lang", sort=False):
            curve = own.groupby(name)["value"].mean()
            axes.plot(curve.index, 100 * curve.to_numpy(), marker="o", markersize=3, label=lang)
        axes.set_xlabel(name)
        axes.set_ylabel(f"{metric} (%)")
    grid[0][-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.suptitle(
        f"{metric} per language, mean over seeds (other settings vary between points)",
        fontsize=9,
    )
    return _save(figure, path)


def plot_compare(cells: pd.DataFrame, path: Path, title: str) -> str:
    """Grouped bars of one comparison table: per language, one bar per row (a sweep's
    baseline or a method's selected configuration), hatched where the difference to that
    sweep's baseline is significant.

    ``cells`` has the columns of :data:`analysis.compare.CELL_COLUMNS` for one table.
    """
    labels = list(cells["row"].drop_duplicates())
    languages = sorted(cells["lang"].unique(), key=lambda lang: (lang != "en", lang))
    width = 0.8 / len(labels)
    figure, axes = plt.subplots(figsize=(max(5.0, 1.2 * len(languages) + 3), 4.2))
    for index, label in enumerate(labels):
        own = cells[cells["row"] == label].set_index("lang").reindex(languages)
        positions = np.arange(len(languages)) + (index - (len(labels) - 1) / 2) * width
        bars = axes.bar(positions, 100 * own["mean"].to_numpy(dtype=float), width, label=label)
        for bar, significant in zip(bars, own["significant"].fillna(False)):
            if significant:
                bar.set_hatch("//")
    axes.set_xticks(np.arange(len(languages)), languages)
    axes.set_ylabel("mean over seeds (%)")
    axes.set_title(f"{title}\nhatched: significantly different from its sweep's baseline")
    axes.title.set_fontsize(9)
    axes.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(figure, path)


def _pair_grid(pairs: list[str], values) -> tuple[np.ndarray, list[str], list[str]]:
    """(grid, first-sentence languages, second-sentence languages), English first."""
    split = [pair.split("-", 1) for pair in pairs]
    firsts = sorted({first for first, _ in split}, key=lambda lang: (lang != "en", lang))
    seconds = sorted({second for _, second in split}, key=lambda lang: (lang != "en", lang))
    grid = np.full((len(firsts), len(seconds)), np.nan)
    for (first, second), value in zip(split, values):
        grid[firsts.index(first), seconds.index(second)] = value
    return grid, firsts, seconds


def plot_grid_beside_paper(cells: pd.DataFrame, path: Path, title: str) -> str:
    """Our two-language grid (mean over seeds) beside the paper's, on one colour scale.

    ``cells`` has columns lang (``en-de``: first sentence's language first), ours_mean and
    paper_value, both in the paper's units.
    """
    panels = [("ours (mean over seeds)", "ours_mean"), ("paper (as printed)", "paper_value")]
    grids = [_pair_grid(list(cells["lang"]), cells[column]) for _, column in panels]
    low = min(np.nanmin(grid) for grid, _, _ in grids)
    high = max(np.nanmax(grid) for grid, _, _ in grids)
    width = len(grids[0][2])
    figure, axes = plt.subplots(1, 2, figsize=(2 * max(4.5, 2.0 + 0.6 * width), 4.2))
    for panel, (name, _), (grid, firsts, seconds) in zip(axes, panels, grids):
        image = panel.imshow(grid, cmap="viridis", vmin=low, vmax=high)
        for row in range(len(firsts)):
            for column in range(len(seconds)):
                if not np.isnan(grid[row, column]):
                    panel.text(
                        column,
                        row,
                        f"{grid[row, column]:.1f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white",
                    )
        panel.set_xticks(range(len(seconds)), seconds)
        panel.set_yticks(range(len(firsts)), firsts)
        panel.set_xlabel("second sentence language")
        panel.set_ylabel("first sentence language")
        panel.set_title(name, fontsize=9)
        figure.colorbar(image, ax=panel, shrink=0.8)  # one scale: the bars are the same
    figure.suptitle(title, fontsize=9)
    return _save(figure, path)


# Each XNLI and PAWS-X language's distance from English (lang2vec 1.1.2, URIEL; source,
# licence and computation in language_distances.md beside it) and the column Fig. 2 uses.
LANGUAGE_DISTANCES = Path(__file__).parent / "resources" / "language_distances.tsv"
DEFAULT_DISTANCE = "featural"


def load_language_distances(
    path: Path = LANGUAGE_DISTANCES, column: str = DEFAULT_DISTANCE
) -> dict[str, float]:
    """Language code -> its distance from English in ``column`` of the packaged table."""
    with open(path, encoding="utf-8") as file:
        rows = list(csv.DictReader(file, delimiter="\t"))
    if column not in rows[0]:
        known = [name for name in rows[0] if name not in ("lang", "iso639_3")]
        raise ValueError(f"{path}: no distance column {column!r}; columns: {', '.join(known)}")
    return {row["lang"]: float(row[column]) for row in rows}


@dataclass(frozen=True)
class DistanceFit:
    """Per-language gains against distance from English, sorted by distance, and their
    least-squares line (huang2021 Fig. 2)."""

    languages: tuple[str, ...]
    distances: tuple[float, ...]
    gains: tuple[float, ...]
    slope: float
    intercept: float
    rvalue: float
    pvalue: float


def fit_gain_against_distance(
    gains: dict[str, float], distances: dict[str, float]
) -> DistanceFit | None:
    """The languages with both a gain and a distance, sorted by distance, and the
    least-squares line gain = slope x distance + intercept (scipy.stats.linregress). None
    with fewer than three such languages or a single distance (no line to speak of)."""
    languages = sorted((lang for lang in gains if lang in distances), key=distances.get)
    x = [distances[lang] for lang in languages]
    y = [gains[lang] for lang in languages]
    if len(languages) < 3 or len(set(x)) < 2:
        return None
    line = linregress(x, y)
    return DistanceFit(
        tuple(languages),
        tuple(x),
        tuple(y),
        float(line.slope),
        float(line.intercept),
        float(line.rvalue),
        float(line.pvalue),
    )


def plot_gain_against_distance(
    fit: DistanceFit, path: Path, title: str, distance: str = DEFAULT_DISTANCE
) -> str:
    """Each language's gain (points) at its distance from English (column ``distance`` of
    the table), labelled, with the least-squares line and its slope, r and p in the legend."""
    figure, axes = plt.subplots(figsize=(5.6, 3.8))
    axes.scatter(fit.distances, fit.gains, color="tab:blue", zorder=3)
    for lang, x, y in zip(fit.languages, fit.distances, fit.gains):
        axes.annotate(lang, (x, y), textcoords="offset points", xytext=(3, 3), fontsize=8)
    ends = np.array([min(fit.distances), max(fit.distances)])
    axes.plot(
        ends,
        fit.slope * ends + fit.intercept,
        color="tab:orange",
        label=f"least squares: slope {fit.slope:.2f}, r = {fit.rvalue:.2f}, p = {fit.pvalue:.2g}",
    )
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xlabel(f"distance from English ({distance}, lang2vec/URIEL)")
    axes.set_ylabel("gain over baseline (points)")
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=7)
    return _save(figure, path)
