"""Did we reproduce the papers? Our mean ± std over seeds against each matching published cell.

Every configuration of the sweep against every published row it matches
(``analysis.papers.matching_cells``: a row that fixes hyperparameters meets the configuration
with them, e.g. an ablation meets its ablation row only; a paper's chosen configuration meets
the configurations with that choice) on the row's training budget, per language and for the
average over the languages both have: ours, the paper's number, the difference and a
verdict. Where several configurations match one published row (each ADV epsilon meets
huang2021's ADV row; each NT sigma meets ding2022's one NT+APT row, which names beta and the
layer but no sigma), only the one our selection metric (English dev) ranks first meets it, as
the paper printed one row and chose on English dev (huang2021 L144). The rows a budget or
that choice kept from a configuration are listed, not dropped silently
(``reproduction_frames``' second frame). A row that prints its average alone (ding2022 Table
6) is compared with our average over the paper's languages we have. The verdict reads the
paper's number against our mean ± 2 std over seeds: ``reproduced`` inside, ``above`` when the
paper scored higher than that range, ``below`` when lower. Each language's difference from
the baseline is marked significant as the paper marks it (``PAPER_SIGNIFICANCE``: an
uncorrected p <= 0.05), not by the report's corrected rule.
"""

import math

import numpy as np
import pandas as pd

from analysis.frames import AnalysisError, hyperparameter_columns, metric_splits, param_value
from analysis.papers import (
    AVERAGE,
    CITATIONS,
    GENERALIZED,
    PAPER_SIGNIFICANCE,
    is_average,
    matching_cells,
    paper_languages,
    paper_scale,
)
from analysis.select import default_selection_metric, select_best
from analysis.tables import markdown_table
from xlt_schema import parse_metric_key

REPRODUCED, ABOVE, BELOW, ONE_SEED = "reproduced", "above", "below", "one seed"
BASELINE_ROLE, SELECTED_ROLE, POINT_ROLE = "baseline", "selected", "published point"
# How many of our seed standard deviations around our mean count as reproduced.
TOLERANCE_STDS = 2.0
ROW_KEYS = ["paper", "table", "method", "setting"]
REPRODUCTION_COLUMNS = [
    "config_key",
    "config_label",
    "role",
    "preset",  # the sweep's preset (its parent run's `preset` param); "" when not given
    *ROW_KEYS,
    "also_in",  # other tables that print the same cells (ding2022's repeated full-method rows)
    "split",
    "metric",
    "lang",  # our metric key's language part; "avg" for the average row
    "paper_lang",
    "ours_mean",
    "ours_std",
    "n_seeds",
    "paper_printed",
    "paper_value",
    "difference",  # ours - paper, in the paper's units
    "verdict",
    "paper_average",  # avg rows: "printed", or how the paper's cells were averaged
    "p_value",  # vs the baseline, uncorrected, by the report's test (NaN: none)
    "paper_significance",  # SIGNIFICANT / NOT_SIGNIFICANT by the paper's rule, or ""
]
SIGNIFICANT, NOT_SIGNIFICANT = "significant", "not significant"
# A published row a configuration matched but was not compared with, and why.
OTHER_BUDGET = "another training budget"
NOT_DEV_SELECTED = "not the configuration English dev selects"
NOT_COMPARED_COLUMNS = [
    "config_key",
    "config_label",
    "role",
    "preset",
    *ROW_KEYS,
    "reason",
    "detail",
]
NOTE = (
    "Ours: mean ± std over this sweep's seeds, in the paper's units (accuracy and F1 in "
    "percent, MRR as a fraction); Paper: the published number as printed; Δ = ours - paper. "
    f"Verdict: `{REPRODUCED}` when the paper's number lies within our mean ± "
    f"{TOLERANCE_STDS:g} std, `{ABOVE}` when it lies above (the paper scored higher than "
    f"we did), `{BELOW}` when it lies below (we scored higher), `{ONE_SEED}` when we have "
    "no std. The `avg` row compares the averages over the languages both have: the paper's "
    "printed average when we have all of its languages, else the mean of its cells over ours; "
    "for a row that prints only its average, ours over the paper's languages we have. "
    "Seeds and tests differ: efimov2023 averages 5 seeds, huang2021 10 (significance by a "
    "bootstrapped paired t-test), ding2022 does not state its seeds; ours are this sweep's "
    "seeds and its significance test. In a two-language grid (huang2021 Tables 4-9) the "
    "paper's row language is read as our first sentence's language (the paper does not say "
    "which sentence is which). Sig.: this configuration against the baseline in that "
    "language, read as the paper reads significance, not by the report's corrected rule: "
    "efimov2023 marks a difference with an uncorrected p <= 0.05 (L143), huang2021 an "
    "improvement with an uncorrected p <= 0.05 (Tables 1-3's captions), ding2022 tests none "
    "(–); p is the uncorrected p-value of this report's test. A row is compared only with "
    "configurations trained on its budget (epochs over the whole English training set)."
)


def verdict(ours_mean: float, ours_std: float, paper: float) -> str:
    """Where the paper's number lies against our mean ± 2 std over seeds."""
    if not math.isfinite(ours_std):
        return ONE_SEED
    if paper > ours_mean + TOLERANCE_STDS * ours_std:
        return ABOVE
    if paper < ours_mean - TOLERANCE_STDS * ours_std:
        return BELOW
    return REPRODUCED


def config_params(trials: pd.DataFrame, config_key: str) -> dict:
    """The settings of one configuration as numbers where numeric (its runs share them)."""
    first_run = trials[trials["config_key"] == config_key].iloc[0]
    return {
        column: param_value(str(first_run[column]))
        for column in hyperparameter_columns(trials)
        if pd.notna(first_run[column])
    }


def sweep_task_and_model(trials: pd.DataFrame, sweep_params: dict) -> tuple[str | None, str | None]:
    """The sweep's task and model: the trials' params, else the parent's ``base.*`` params."""

    def one(name: str) -> str | None:
        if name in trials.columns and trials[name].nunique() == 1:
            return str(trials[name].iloc[0])
        return sweep_params.get(f"base.{name}")

    return one("task"), one("model")


def config_cells(
    trials: pd.DataFrame,
    published: pd.DataFrame,
    task: str | None,
    model: str | None,
    split: str,
    metric: str,
    config_key: str,
) -> pd.DataFrame:
    """The published cells one configuration of the sweep matches on ``split``/``metric``."""
    first = trials[trials["config_key"] == config_key].iloc[0]
    params = config_params(trials, config_key)
    method, adaptation = first["method"], first["adaptation"]
    return matching_cells(published, task, model, split, metric, method, adaptation, params)


def sweep_cells(
    trials: pd.DataFrame,
    published: pd.DataFrame,
    task: str | None,
    model: str | None,
    split: str,
    metric: str,
) -> pd.DataFrame:
    """The published cells on ``split``/``metric`` that some configuration of the sweep
    matches on the row's budget, each once, in file order."""
    matched = [
        cells[cells["budget"] == ""]
        for cells in (
            config_cells(trials, published, task, model, split, metric, config_key)
            for config_key in trials["config_key"].unique()
        )
    ]
    cells = pd.concat([published.iloc[0:0].assign(our_lang=[], budget=[]), *matched])
    return cells.drop_duplicates("line").sort_values("line")


def _our_column(trials: pd.DataFrame, split: str, lang: str, metric: str) -> str | None:
    """Our metric key for a paper column; a grid's diagonal (es-es) falls back to the
    ordinary evaluation (test/es) when the pair itself was not logged."""
    first, _, second = lang.partition("-")
    for key_lang in (lang, first) if first == second else (lang,):
        key = f"{split}/{key_lang}/{metric}"
        if key in trials.columns:
            return key
    return None


def _summary(values: pd.Series) -> tuple[float, float, int]:
    values = values.dropna()
    std = float(values.std()) if len(values) > 1 else math.nan
    return float(values.mean()), std, len(values)


def _decimals(printed: pd.Series) -> int:
    return max(len(text.partition(".")[2]) for text in printed)


def _comparison(
    identity: dict, lang: str, paper_lang: str, ours: pd.Series, paper: float, printed: str
) -> dict:
    mean, std, n_seeds = _summary(ours)
    return {
        **identity,
        "lang": lang,
        "paper_lang": paper_lang,
        "ours_mean": mean,
        "ours_std": std,
        "n_seeds": n_seeds,
        "paper_printed": printed,
        "paper_value": paper,
        "difference": mean - paper,
        "verdict": verdict(mean, std, paper),
        "paper_average": "",
        "p_value": math.nan,
        "paper_significance": "",
    }


def compare_average_only(
    runs: pd.DataFrame, cells: pd.DataFrame, identity: dict, languages: list[str]
) -> list[dict]:
    """A row that prints only its average (over the paper's ``languages``) against our
    average over those of them we have: one ``avg`` dict, none when we have none."""
    split, metric = identity["split"], identity["metric"]
    columns = [_our_column(runs, split, lang, metric) for lang in languages]
    shared = [column for column in columns if column is not None and runs[column].notna().any()]
    if not shared:
        return []
    ours = paper_scale(metric) * runs[shared].dropna().mean(axis=1)
    paper_cell = cells.iloc[0]
    record = _comparison(
        identity, AVERAGE, AVERAGE, ours, paper_cell["value"], paper_cell["printed"]
    )
    how = f"printed (the paper prints only its average, over {len(languages)} languages)"
    if len(shared) < len(languages):
        how += f"; ours over the {len(shared)} of them we have"
    return [{**record, "paper_average": how}]


def compare_row(runs: pd.DataFrame, cells: pd.DataFrame, identity: dict) -> list[dict]:
    """One published row against one configuration's runs: a dict per language both have,
    then the average over them."""
    split, metric = identity["split"], identity["metric"]
    scale = paper_scale(metric)
    languages = cells[~cells["lang"].map(is_average)]
    shared = []
    records = []
    for cell in languages.itertuples(index=False):
        column = _our_column(runs, split, cell.our_lang, metric)
        if column is None or runs[column].isna().all():
            continue
        shared.append((column, cell))
        ours = scale * runs[column]
        records.append(
            _comparison(identity, cell.our_lang, cell.lang, ours, cell.value, cell.printed)
        )
    if not shared:
        return []
    columns = [column for column, _ in shared]
    ours_average = scale * runs[columns].dropna().mean(axis=1)
    averages = cells[cells["lang"].isin([AVERAGE, f"{AVERAGE}-{AVERAGE}"])]
    if len(shared) == len(languages) and not averages.empty:
        paper_cell = averages.iloc[0]
        paper, printed, how = paper_cell["value"], paper_cell["printed"], "printed"
    else:
        shared_cells = pd.DataFrame([cell for _, cell in shared])
        paper = float(np.mean(shared_cells["value"]))
        printed = f"{paper:.{_decimals(shared_cells['printed'])}f}"
        how = (
            "mean of the paper's cells in the languages we have "
            f"({len(shared)} of {len(languages)})"
        )
    record = _comparison(identity, AVERAGE, AVERAGE, ours_average, paper, printed)
    return [*records, {**record, "paper_average": how}]


def _published_rows(cells: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame, list[str]]]:
    """The cells grouped by published row, the earlier paper's first (then in file order); a
    row that repeats an earlier row's cells exactly is folded into it (named in the third
    element), so a copy is shown under the paper that published it first: ding2022's
    copies of huang2021's rows under huang2021, its repeated full-method rows under Table 1."""
    if cells.empty:  # a model or task no paper printed: most configurations of most sweeps
        return []
    year = cells["paper"].str[-4:].astype(int)
    ordered = cells.assign(_year=year).sort_values(["_year", "line"]).drop(columns="_year")
    rows: dict[tuple, tuple[tuple, pd.DataFrame, list[str]]] = {}
    for key, row in ordered.groupby(ROW_KEYS, sort=False):
        content = tuple(sorted(zip(row["lang"], row["printed"])))
        if content in rows:
            paper, table, _, setting = key
            rows[content][2].append(f"{paper} {table}" + (f" [{setting}]" if setting else ""))
        else:
            rows[content] = (key, row, [])
    return list(rows.values())


def _roles(trials: pd.DataFrame, baseline_key: str, selected_key: str) -> list[tuple[str, str]]:
    """(config_key, role): the baseline, the selection, then every other configuration."""
    others = sorted(
        set(trials["config_key"]) - {baseline_key, selected_key},
        key=lambda key: trials.loc[trials["config_key"] == key, "config_label"].iloc[0],
    )
    roles = [(baseline_key, BASELINE_ROLE)]
    if selected_key != baseline_key:
        roles.append((selected_key, SELECTED_ROLE))
    return roles + [(key, POINT_ROLE) for key in others]


def _matches(
    trials: pd.DataFrame, published: pd.DataFrame, task, model, roles: list[tuple[str, str]]
) -> list[tuple[str, str, str, str, pd.DataFrame]]:
    """(config_key, role, split, metric, cells): the cells each configuration matches
    (``matching_cells``, with ``budget``), for every split and metric it logged."""
    found = []
    for config_key, role in roles:
        runs = trials[trials["config_key"] == config_key]
        keys = {parse_metric_key(column) for column in runs.columns}
        for split in metric_splits(trials):
            for metric in sorted({key[2] for key in keys if key and key[0] == split}):
                cells = config_cells(trials, published, task, model, split, metric, config_key)
                if not cells.empty:
                    found.append((config_key, role, split, metric, cells))
    return found


def dev_selected_owners(
    trials: pd.DataFrame, matches: list, selection_metric: str | None
) -> dict[tuple, str]:
    """Per published row (``ROW_KEYS``) that more than one configuration meets on its budget,
    the one of them the selection metric (English dev unless the sweep names another) ranks
    first, as ``select_best`` ranks: the paper printed one row, chosen on English dev
    (huang2021 L144: "use the English validation set to search the best parameters"), so
    each ADV or RS-RP epsilon is not its published row, nor each NT sigma ding2022's one
    NT+APT row (its setting names beta and the layer, not the sigma)."""
    candidates: dict[tuple, set[str]] = {}
    for config_key, _, _, _, cells in matches:
        chosen = cells[cells["budget"] == ""]
        for key in set(zip(*(chosen[column] for column in ROW_KEYS))):
            candidates.setdefault(key, set()).add(config_key)
    contested = {key: frozenset(keys) for key, keys in candidates.items() if len(keys) > 1}
    if not contested:
        return {}
    metric = selection_metric or default_selection_metric(trials)
    best = {}
    for keys in set(contested.values()):
        try:
            best[keys] = select_best(trials[trials["config_key"].isin(keys)], metric).config_key
        except AnalysisError:  # none of them logged the metric: nothing to choose by
            continue
    return {key: best[keys] for key, keys in contested.items() if keys in best}


def _not_compared(row: pd.DataFrame, owner: str | None, config_key: str, labels: dict):
    """(reason, detail) when this configuration does not meet the published row, else None."""
    budget = row["budget"].iloc[0]
    if budget:
        return OTHER_BUDGET, budget
    if owner is not None and owner != config_key:
        return NOT_DEV_SELECTED, f"`{labels[owner]}` meets it (best on the selection metric)"
    return None


def _row_records(published: pd.DataFrame, runs: pd.DataFrame, row, identity: dict) -> list:
    """The comparisons of one published row with one configuration's runs."""
    if row["lang"].map(is_average).all():
        first = row.iloc[0]
        languages = paper_languages(published, first["paper"], first["task"], first["model"])
        return compare_average_only(runs, row, identity, languages)
    return compare_row(runs, row, identity)


def reproduction_frames(
    trials: pd.DataFrame,
    published: pd.DataFrame,
    task: str | None,
    model: str | None,
    keys: tuple[str, str],
    selection_metric: str | None = None,
    marks: pd.DataFrame | None = None,
    preset: str = "",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every comparison of ours with a published cell (``REPRODUCTION_COLUMNS``): every
    configuration against every row it meets; the role says which is the baseline and which
    the selection (``keys``: baseline, selected config_key). Second, the rows a configuration
    matched but does not meet (``NOT_COMPARED_COLUMNS``): trained on another budget, or not
    the one of several the selection metric ranks first. ``marks``
    (``analysis.select.significance_marks``) give each language's p-value vs the baseline;
    ``preset`` (the parent run's `preset` param) names the preset each row came from."""
    matches = _matches(trials, published, task, model, _roles(trials, *keys))
    owners = dev_selected_owners(trials, matches, selection_metric)
    labels = dict(zip(trials["config_key"], trials["config_label"]))
    records, skipped = [], []
    for config_key, role, split, metric, cells in matches:
        runs = trials[trials["config_key"] == config_key]
        for key, row, also_in in _published_rows(cells):
            shared = {
                "config_key": config_key,
                "config_label": labels[config_key],
                "role": role,
                "preset": preset,
            }
            shared.update(zip(ROW_KEYS, key))
            reason = _not_compared(row, owners.get(key), config_key, labels)
            if reason:
                skipped.append({**shared, "reason": reason[0], "detail": reason[1]})
                continue
            identity = {**shared, "also_in": ", ".join(also_in), "split": split, "metric": metric}
            records += _row_records(published, runs, row, identity)
    frame = pd.DataFrame(records, columns=REPRODUCTION_COLUMNS)
    not_compared = pd.DataFrame(skipped, columns=NOT_COMPARED_COLUMNS)
    return with_paper_significance(frame, marks), not_compared.drop_duplicates(ignore_index=True)


def with_paper_significance(frame: pd.DataFrame, marks: pd.DataFrame | None) -> pd.DataFrame:
    """``p_value`` (vs the baseline, uncorrected) and ``paper_significance`` (the paper's rule,
    ``PAPER_SIGNIFICANCE``) for each language row whose metric ``marks`` tested; "" elsewhere
    (the baseline, averages, pairs, another metric, a paper that tests none)."""
    if marks is None or frame.empty or "p_value" not in marks.columns:
        return frame
    where_tested = ["config_key", "split", "lang", "metric"]  # the metric the test scored
    tested = marks[marks["against"] == "baseline"].set_index(where_tested)
    frame = frame.copy()
    for index, row in frame.iterrows():
        where = tuple(row[where_tested])
        if where not in tested.index:
            continue
        test = tested.loc[where]
        frame.at[index, "p_value"] = float(test["p_value"])
        rule = PAPER_SIGNIFICANCE.get(row["paper"])
        if rule is not None:
            gain = test["system_mean"] > test["reference_mean"]
            significant = test["p_value"] <= rule.threshold and (gain or not rule.improvements_only)
            frame.at[index, "paper_significance"] = SIGNIFICANT if significant else NOT_SIGNIFICANT
    return frame


def preset_text(preset: str) -> str:
    """` (preset released)` after a configuration's label; "" when the preset is not known."""
    return f" (preset {preset})" if preset else ""


def _format(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}" if math.isfinite(value) else "–"


def _row_table(rows: pd.DataFrame) -> list[str]:
    decimals = _decimals(rows["paper_printed"]) + 1
    lines = [
        [
            row.lang if row.paper_lang == row.lang else f"{row.lang} ({row.paper_lang})",
            _format(row.ours_mean, decimals)
            + (f" ± {_format(row.ours_std, decimals)}" if math.isfinite(row.ours_std) else ""),
            row.paper_printed,
            f"{row.difference:+.{decimals}f}",
            row.verdict,
            str(row.n_seeds),
            _significance_text(row),
        ]
        for row in rows.itertuples(index=False)
    ]
    return markdown_table(["Language", "Ours", "Paper", "Δ", "Verdict", "Seeds", "Sig."], lines)


def _significance_text(row) -> str:
    """The Sig. cell: the paper's reading of our p-value vs the baseline, or – (not tested,
    or the paper tests none)."""
    if not math.isfinite(row.p_value):
        return "–"
    if not row.paper_significance:
        return f"– (p = {row.p_value:.3g})"
    return f"{row.paper_significance} (p = {row.p_value:.3g})"


_GRID_MARKS = {REPRODUCED: " ✓", ABOVE: " ↑", BELOW: " ↓", ONE_SEED: ""}
GRID_LEGEND = (
    "Cells: Δ = ours - paper per pair (row: first sentence's language, column: second's); "
    "✓ reproduced, ↑ the paper's number above our mean + 2 std, ↓ below our mean - 2 std."
)


def _grid_table(rows: pd.DataFrame) -> list[str]:
    """A two-language grid as a matrix of differences with verdict marks, then its avg."""
    pairs = rows[rows["lang"] != AVERAGE]
    firsts = list(dict.fromkeys(lang.partition("-")[0] for lang in pairs["lang"]))
    seconds = list(dict.fromkeys(lang.partition("-")[2] for lang in pairs["lang"]))
    cells = {row.lang: row for row in pairs.itertuples(index=False)}

    def cell(pair: str) -> str:
        row = cells.get(pair)
        return f"{row.difference:+.1f}{_GRID_MARKS[row.verdict]}" if row else "–"

    matrix = [[first, *(cell(f"{first}-{second}") for second in seconds)] for first in firsts]
    return [
        *markdown_table(["", *seconds], matrix),
        "",
        GRID_LEGEND,
        "",
        *_row_table(rows[rows["lang"] == AVERAGE]),
    ]


def not_compared_lines(not_compared: pd.DataFrame | None) -> list[str]:
    """The rows a configuration matched but was not compared with, one bullet each."""
    if not_compared is None or not_compared.empty:
        return []
    lines = ["", "Not compared (a published row meets only a configuration like its own):"]
    for row in not_compared.itertuples(index=False):
        setting = f", {row.setting}" if row.setting else ""
        lines.append(
            f"- {row.role} `{row.config_label}`{preset_text(row.preset)} vs {row.paper} "
            f"{row.table} (`{row.method}`{setting}): {row.reason}: {row.detail}"
        )
    return lines


def reproduction_section(
    frame: pd.DataFrame,
    task: str | None,
    model: str | None,
    not_compared: pd.DataFrame | None = None,
) -> list[str]:
    """The report's Markdown section: one table per configuration and published row (a
    matrix for a two-language grid), then the rows left uncompared (``not_compared``)."""
    title = ["## Reproduction of published results", ""]
    skipped = not_compared_lines(not_compared)
    if frame.empty:
        return [
            *title,
            f"No published result matches this sweep (task `{task}`, model `{model}`); the "
            "papers report `bert-base-multilingual-cased` (mbert) and `xlm-roberta-base` "
            "(xlmr-base).",
            *skipped,
        ]
    cited = [CITATIONS[paper] for paper in CITATIONS if paper in set(frame["paper"])]
    lines = [*title, NOTE, "", *(f"- {citation}" for citation in cited)]
    groups = frame.groupby(["config_key", *ROW_KEYS, "split", "metric"], sort=False)
    for (_, paper, table, method, setting, split, metric), rows in groups:
        first = rows.iloc[0]
        also = f"; the same cells are printed in {first['also_in']}" if first["also_in"] else ""
        average = rows[rows["lang"] == AVERAGE]["paper_average"].iloc[0]
        lines += [
            "",
            f"### {first['role'].capitalize()} `{first['config_label']}`"
            f"{preset_text(first['preset'])} vs {paper} {table} "
            f"(`{method}`{f', {setting}' if setting else ''}), {split} {metric}",
            "",
            *(_grid_table(rows) if setting == GENERALIZED else _row_table(rows)),
            "",
            f"Paper avg: {average}{also}.",
        ]
    return lines + skipped


def paper_table_rows(cells: pd.DataFrame, languages: list[str]) -> list[tuple[str, list[str]]]:
    """Published rows for a paper-style table of ``languages`` + avg, in percent like ours:
    the printed cells (MRR, printed as a fraction, times 100), the average over the
    languages shown when the row has them all. Rows with none of the languages are left out.
    """
    rows = []
    for key, row, also_in in _published_rows(cells):
        printed = row.set_index("our_lang")
        shown = [lang for lang in languages if lang in printed.index]
        if not shown:
            continue
        scale = 100 / paper_scale(row["metric"].iloc[0])
        # A fraction printed with 2 decimals is a percentage with none.
        decimals = max(_decimals(printed.loc[shown, "printed"]) - (0 if scale == 1 else 2), 0)
        cells_shown = [
            printed.at[lang, "printed"]
            if scale == 1
            else _format(scale * printed.at[lang, "value"], decimals)
            for lang in shown
        ]
        average = (
            _format(scale * printed.loc[shown, "value"].mean(), max(decimals, 1))
            if len(shown) == len(languages)
            else "–"
        )
        by_lang = dict(zip(shown, cells_shown))
        paper, table, method, setting = key
        label = f"paper: {method}{f' [{setting}]' if setting else ''} ({paper}, {table}"
        label += f"; = {', '.join(also_in)})" if also_in else ")"
        rows.append((label, [by_lang.get(lang, "–") for lang in languages] + [average]))
    return rows
