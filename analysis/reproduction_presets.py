"""The ours-vs-paper table across an experiment's presets: each published row beside the
configuration that meets it under each preset that ran, so that the paper's text (the
`paper` preset, as its card reads it) and the authors' released code (`released`) stand side
by side. A preset whose sweep matched the row with a configuration kept from it (another
training budget, or not the one English dev selects) gives the reason; one that ran nothing
matching says so.

Built from each sweep's ``analysis.reproduction.reproduction_frames`` (the first frame, the
comparisons; the second, the rows not compared), keyed by the preset its parent run's
`preset` param names.
"""

import math
from collections.abc import Mapping

import pandas as pd

from analysis.reproduction import ROW_KEYS
from analysis.tables import markdown_table

# A published row on one of our splits and metrics: one table of the section.
TABLE_KEYS = [*ROW_KEYS, "split", "metric"]
# The presets that reproduce a paper, whose sweeps of one experiment the report sets side by
# side (sweeps/spec/paper_cards.py: the paper text, and the authors' released scripts).
COMPARED_PRESETS = ("paper", "released")
PRESET_COLUMNS = [
    *TABLE_KEYS,
    "preset",
    "config_label",
    "paper_lang",  # "" on a row that says why the preset has no comparison
    "ours_mean",
    "ours_std",
    "paper_printed",
    "difference",
    "verdict",
    "reason",  # why this preset's configuration does not meet the row; "" when it does
]
NO_MATCH = "no configuration of this preset's sweep matches the row"
NOTE = (
    "Each published row against the configuration that meets it under each preset that ran "
    "(`paper`: the paper's text as its card reads it; `released`: the authors' released "
    "code, setting for setting), with the reproduction section's verdicts; a preset whose "
    "configuration does not meet the row says why."
)


def preset_comparison(runs: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """``PRESET_COLUMNS``: per published row any preset's sweep met (in the order they were
    met), each preset's comparisons of it, or the reason it has none. ``runs``: preset ->
    (comparisons, not compared) of that preset's sweep (``reproduction_frames``)."""
    keys = list(
        dict.fromkeys(
            key
            for frame, _ in runs.values()
            for key in zip(*(frame[column] for column in TABLE_KEYS))
        )
    )
    rows = []
    for key in keys:
        row = dict(zip(TABLE_KEYS, key))
        for preset, (frame, not_compared) in runs.items():
            met = frame[_is(frame, TABLE_KEYS, key)]
            if met.empty:
                rows += _reasons(row, preset, not_compared)
                continue
            rows += [
                {**row, "preset": preset, "reason": "", **_numbers(compared)}
                for compared in met.to_dict("records")
            ]
    return pd.DataFrame(rows, columns=PRESET_COLUMNS)


def _is(frame: pd.DataFrame, columns: list[str], key: tuple) -> pd.Series:
    return (frame[columns] == pd.Series(key, index=columns)).all(axis=1)


def _numbers(compared: dict) -> dict:
    names = ("config_label", "ours_mean", "ours_std", "paper_printed", "difference", "verdict")
    return {"paper_lang": compared["paper_lang"], **{name: compared[name] for name in names}}


def _reasons(row: dict, preset: str, not_compared: pd.DataFrame) -> list[dict]:
    """A preset's rows for a published row it does not meet: each configuration kept from
    it and why, else that none matches."""
    empty = {"paper_lang": "", "ours_mean": math.nan, "ours_std": math.nan}
    empty.update({"paper_printed": "", "difference": math.nan, "verdict": ""})
    kept = not_compared[_is(not_compared, ROW_KEYS, tuple(row[k] for k in ROW_KEYS))]
    if kept.empty:
        return [{**row, **empty, "preset": preset, "config_label": "", "reason": NO_MATCH}]
    return [
        {**row, **empty, "preset": preset, "config_label": label, "reason": f"{why}: {detail}"}
        for label, why, detail in zip(kept["config_label"], kept["reason"], kept["detail"])
    ]


def preset_comparison_section(comparison: pd.DataFrame) -> list[str]:
    """The report's Markdown section: one table per published row (split and metric), each
    language's comparison under each preset, then each preset's reason where it has none."""
    if comparison.empty:
        return []
    lines = ["## Reproduction by preset", "", NOTE]
    for key, rows in comparison.groupby(TABLE_KEYS, sort=False):
        paper, table, method, setting, split, metric = key
        lines += [
            "",
            f"### {paper} {table} (`{method}`{f', {setting}' if setting else ''}), "
            f"{split} {metric}",
            "",
            *markdown_table(
                ["Language", "Preset", "Configuration", "Ours", "Paper", "Δ", "Verdict"],
                [_cells(row) for row in _ordered(rows).itertuples(index=False)],
            ),
        ]
    return lines


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    """Language by language (the paper's order), the presets side by side; reasons last."""
    languages = list(dict.fromkeys(lang for lang in rows["paper_lang"] if lang))
    order = {lang: index for index, lang in enumerate(languages)}
    position = rows["paper_lang"].map(lambda lang: order.get(lang, len(order)))
    return rows.assign(_position=position).sort_values("_position", kind="stable")


def _cells(row) -> list[str]:
    label = f"`{row.config_label}`" if row.config_label else "–"
    if row.reason:
        return ["–", row.preset, label, "–", "–", "–", f"not compared: {row.reason}"]
    decimals = len(str(row.paper_printed).partition(".")[2]) + 1
    ours = f"{row.ours_mean:.{decimals}f}"
    if math.isfinite(row.ours_std):
        ours += f" ± {row.ours_std:.{decimals}f}"
    return [
        row.paper_lang,
        row.preset,
        label,
        ours,
        row.paper_printed,
        f"{row.difference:+.{decimals}f}",
        row.verdict,
    ]
