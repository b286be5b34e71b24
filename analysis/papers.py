"""The three papers' published results (``published_results.tsv``) and the cells a sweep's
configuration is to be compared with.

The TSV holds one printed table cell a line (columns ``PUBLISHED_COLUMNS``; see
``published_results.md``). A cell keeps its printed text (``printed``) beside its float
(``value``): accuracy and F1 in percent, MRR as a fraction, as the papers print them.

A configuration of ours matches a published row when the task, the model, the split and the
metric are the paper's, its method (with its adaptation) is the row's method, and its
hyperparameters are those the row's ``setting`` names (e.g. ``alpha=1 beta=0.1 layer=6``).
A row without hyperparameters in its setting is the paper's chosen configuration of the
method: where the paper states that choice (``_CHOSEN``: ding2022's EAR point, RS-DA's m and
variant, huang2021's perturbation site) only a configuration with it matches, so an ablated
EAR (``alpha=0``) meets its ablation row alone; where several configurations match one row
(huang2021's epsilon, searched on English dev; ding2022's NT sigma, which its NT+APT row
does not name), the reproduction view lets only the configuration our English dev selects
among them meet the row (``analysis.reproduction``).

A row is met only by a configuration trained on the row's budget (``budget_difference``:
the paper's epochs over the whole English training set): ear_xnli's one-epoch baseline
does not meet huang2021's five-epoch rows; the reproduction view names the rows a budget
kept apart; huang2021's RS-DA rows (and ding2022's copies of them) trained Robust-XLT's
released budget. Our ``f1_squad`` on MLQA is read against the papers' ``f1`` beside our
``f1`` (``_PAPER_METRICS``). Significance is read as each paper read it
(``PAPER_SIGNIFICANCE``).
"""

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.frames import AnalysisError, param_value
from xlt_schema import NO_ADAPTATION

PUBLISHED_RESULTS = Path(__file__).with_name("published_results.tsv")
PUBLISHED_COLUMNS = (
    "paper",
    "table",
    "task",
    "model",
    "method",
    "setting",
    "split",
    "metric",
    "lang",
    "value",
    "note",
)
CITATIONS = {
    "huang2021": "Kuan-Hao Huang, Wasi Uddin Ahmad, Nanyun Peng, Kai-Wei Chang. 2021. Improving "
    "Zero-Shot Cross-Lingual Transfer Learning via Robust Training. In Proceedings of EMNLP "
    "2021, pages 1684-1697. https://aclanthology.org/2021.emnlp-main.126",
    "ding2022": "Kunbo Ding, Weijie Liu, Yuejian Fang, Weiquan Mao, Zhe Zhao, Tao Zhu, Haoyan "
    "Liu, Rong Tian, Yiren Chen. 2022. A Simple and Effective Method to Improve Zero-Shot "
    "Cross-Lingual Transfer Learning. In Proceedings of COLING 2022. "
    "https://arxiv.org/abs/2210.09934",
    "efimov2023": "Pavel Efimov, Leonid Boytsov, Elena Arslanova, Pavel Braslavski. 2023. The "
    "Impact of Cross-Lingual Adjustment of Contextual Word Representations on Zero-Shot "
    "Transfer. In Proceedings of ECIR 2023. https://arxiv.org/abs/2204.06457",
}
# How the papers name the encoders we load from the hub; any other model matches nothing.
PAPER_MODELS = {"bert-base-multilingual-cased": "mbert", "xlm-roberta-base": "xlmr-base"}
# Fine-tuning of an adapted encoder is a method of its own in efimov2023.
_ADAPTED_FINETUNING = {"adjusted": "adjust", "adjusted_continual": "adjust_continual"}
# Our (task, metric-key split) -> the paper's task; QA and mixed XNLI name the set in the split.
PAPER_TASKS = {
    ("xnli", "test"): "xnli",
    ("xnli", "mixed"): "mixed-xnli",
    ("pawsx", "test"): "pawsx",
    ("ner", "test"): "ner",
    ("qa", "xquad"): "xquad",
    ("qa", "mlqa"): "mlqa",
    ("qa", "tydiqa"): "tydiqa",
    ("xsr", "test"): "tatoeba",
}
PAPER_SPLIT = "test"
# Our metrics read as another of the papers' on one split: MLQA's F1 under SQuAD v1.1's
# normalisation (`f1_squad`, what efimov2023's released evaluation computes) against the
# papers' `f1`, beside our MLQA-normalised `f1` (the efimov2023 card's QA departure).
_PAPER_METRICS = {("mlqa", "f1_squad"): "f1"}
# Papers print accuracy and F1 in percent and MRR as a fraction (ours are all fractions).
_FRACTION_METRICS = ("mrr",)
AVERAGE = "avg"
# Settings that name a row's source or a protocol our sweeps follow, not a hyperparameter:
# huang2021's two baselines (Hu et al. 2020's numbers, its own rerun), its two-language grids,
# efimov2023's XSR layer (ours is chosen on dev).
GENERALIZED = "generalized"  # huang2021's two-language grids (Tables 4-9)
_PROTOCOL_SETTINGS = ("", "hu2020", "reproduce", GENERALIZED, "layer=best")
# efimov2023's cross-lingual QA: our XQuAD keys `<question lang>-<context lang>`.
_QA_DIRECTIONS = {
    "question=target paragraph=en": "{lang}-en",
    "question=en paragraph=target": "en-{lang}",
}
# ding2022's chosen EAR configuration; its ablation, target, source and dictionary rows
# change one thing of it (App. B; our sweeps run them so: sweeps/ear_ablation.py, ...).
_EAR_POINT = "alpha=1 beta=0.1 layer=6"
_NAMED_SETTINGS = {
    "EPT+APT": _EAR_POINT,
    "-EPT": "alpha=0 beta=0.1 layer=6",
    "-APT": "alpha=1 beta=0 layer=6",
    "-EPT -APT": "alpha=0 beta=0 layer=6",
    "NT+APT": "beta=0.1 layer=6",  # the Noise Target replaces EPT and its alpha
    "EPT+SRPT": _EAR_POINT,
}
# Rows that are another objective of ours than the row's method (ding2022 Tables 4, A.4).
_VARIANT_OBJECTIVES = {"NT+APT": "ear_nt", "EPT+SRPT": "ear_srpt"}
# `name=value` in a setting -> our setting's name; None: derived from another (the size of
# a scaled dictionary). Settings with a source or a dictionary scale are at the EAR point.
_SETTING_NAMES = {
    "alpha": "alpha",
    "beta": "beta",
    "layer": "layer",
    "m": "m",
    "perturbation_site": "perturbation_site",
    "source": "source_lang",
    "dictionary_scale": "dictionary_scale",
    "dictionary_size": None,
    "rs_da_variant": "rs_da_variant",
}
_AT_EAR_POINT = ("source", "dictionary_scale")
# What a row does not name is the papers' protocol and our defaults: English source, the
# whole synonym dictionary (also for runs that did not log these settings).
_DEFAULTS = {"source_lang": "en", "dictionary_scale": "1"}
# The configuration a paper chose for a method, for its rows that name no hyperparameters,
# by (method, paper task) or (method, None) for every task: ding2022's EAR (App. B; its
# Table 1 row is Tables 3-5's full method), RS-DA's m (huang2021.txt L166: 3 on XNLI, 10 on
# PAWS-X; ding2022 copies those rows and draws its XLM-R copies alike, L1725) on the m copies
# only (uclanlp/Robust-XLT perturb.py writes only the copies; `keep_originals` meets none),
# and ADV and RS-RP at Enc(x) (huang2021.txt L84, L102; a run that did not log its site
# matches none).
_RELEASED_RS_DA = "rs_da_variant=released"
_CHOSEN = {
    ("ear", None): _EAR_POINT,
    ("rs_da", "xnli"): f"m=3 {_RELEASED_RS_DA}",
    ("rs_da", "pawsx"): f"m=10 {_RELEASED_RS_DA}",
    ("adv", None): "perturbation_site=encoder_output",
    ("rs_rp", None): "perturbation_site=encoder_output",
}

# The training budget behind a paper's rows: epochs over the whole English training set.
# huang2021 follows XTREME's scripts (L166; google-research/xtreme scripts/train_xnli.sh and
# train_pawsx.sh: "EPOCH=5"), which are also Hu et al. 2020's (the `hu2020` rows), except for
# RS-DA, whose rows trained Robust-XLT's released budget: one epoch (XNLI) and three (PAWS-X)
# over the m-fold augmented set (uclanlp/Robust-XLT@0bb3c34 scripts/train_xnli.sh:27,
# train_pawsx.sh:27; the one reading of that budget, on huang2021's card and ding2022's).
# ding2022 trains EAR one epoch and "other models are trained following Hu et al. 2020 and
# Huang et al. 2021" (L1740): its RS-DA rows (the mBERT copy and XLM-R's +RS-DA*) on that same
# released budget. efimov2023's released scripts (L127): "--num_train_epochs 2.0" for XNLI, 3
# for NER, 2 for QA (XSR scores the SQuAD model). Keys: (paper, method, paper task), (paper,
# method) or (paper, paper task); None: any.
XTREME_EPOCHS = 5.0
_RELEASED_RS_DA_EPOCHS = {"xnli": 1.0, "pawsx": 3.0}
_PUBLISHED_EPOCHS = {
    **{
        (paper, "rs_da", task): epochs
        for paper in ("huang2021", "ding2022")
        for task, epochs in _RELEASED_RS_DA_EPOCHS.items()
    },
    ("huang2021", None): XTREME_EPOCHS,
    ("ding2022", "ear"): 1.0,
    ("ding2022", None): XTREME_EPOCHS,
    ("efimov2023", "xnli"): 2.0,
    ("efimov2023", "mixed-xnli"): 2.0,
    ("efimov2023", "ner"): 3.0,
    ("efimov2023", "mlqa"): 2.0,
    ("efimov2023", "xquad"): 2.0,
    ("efimov2023", "tydiqa"): 2.0,
    ("efimov2023", "tatoeba"): 2.0,
}


@dataclass(frozen=True)
class SignificanceRule:
    """How a paper marks a result as significantly different from its baseline: an
    uncorrected p-value at most ``threshold``; ``improvements_only``: only a gain is marked."""

    threshold: float
    improvements_only: bool
    source: str


# ding2022 tests no significance.
PAPER_SIGNIFICANCE = {
    "efimov2023": SignificanceRule(
        0.05,
        False,
        'L143: "Statistically significant differences from an original and adjusted mBERT '
        'are marked with * and **, respectively (p-value threshold 0.05)."; a paired t-test '
        "(L129), no correction for the several languages",
    ),
    "huang2021": SignificanceRule(
        0.05,
        True,
        'L134: "Underlines denote that the improvement is significant with p<=0.05 for the '
        'bootstrapped paired t-test"; no correction for the several languages',
    ),
}

# The papers' figures the reports do not draw, and why (docs/papers.md); the report's
# "Departures from the paper" section lists them for a sweep of that paper's card.
UNDRAWN_FIGURES = {
    "ding2022": (
        "Figs. 3-5 (t-SNE of word embeddings and outputs): the trials log no per-word "
        "representations to project, and one seed's projection carries no verdict",
    ),
    "efimov2023": (
        "Fig. 1 (Hindi-English distance histograms): probing_stages.png pools the target "
        "languages, since the original and fine-tuned states are probed once per trial on "
        "every language's held-out pairs together (xlt_core/probing.py); each adjusted "
        "state's per-language histogram is logged under probing/<lang>/",
    ),
}


def published_epochs(paper: str, task: str, method: str) -> float | None:
    """The epochs a paper's row of ``method`` on ``task`` (the paper's names) trained for;
    None where this module does not know them (then no configuration meets the row)."""
    for key in ((paper, method, task), (paper, method), (paper, task), (paper, None)):
        if key in _PUBLISHED_EPOCHS:
            return _PUBLISHED_EPOCHS[key]
    return None


def budget_difference(paper: str, task: str, method: str, params: dict) -> str:
    """ "" when a configuration with these params (as ``param_value`` reads them) trained on
    the row's budget; else how it differs, e.g. ``epochs 1 (the paper's 5)``. A run that
    did not log its epochs, or trained on a sample (``max_train_examples``), differs."""
    epochs = published_epochs(paper, task, method)
    if epochs is None:
        return f"a budget this project does not know ({paper} {task} {method})"
    ours = params.get("epochs")
    differences = []
    if not isinstance(ours, (int, float)) or not math.isclose(ours, epochs):
        ours_text = f"{ours:g}" if isinstance(ours, (int, float)) else str(ours or "not logged")
        differences.append(f"epochs {ours_text} (the paper's {epochs:g})")
    if params.get("max_train_examples") is not None:
        differences.append(
            f"max_train_examples {params['max_train_examples']} (the paper's whole training set)"
        )
    return "; ".join(differences)


def _parse_value(path: Path, number: int, printed: str) -> float:
    try:
        value = float(printed)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise AnalysisError(
            f"{path}:{number}: value {printed!r} is not a number (a printed cell, e.g. 68.42)"
        )
    return value


def load_published_results(path: str | Path = PUBLISHED_RESULTS) -> pd.DataFrame:
    """Every cell of a results TSV: its columns, ``printed`` (the value as printed), ``value``
    (float) and ``line`` (in the file). A malformed line is refused naming file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AnalysisError(f"cannot read published results from {path}: {error}") from error
    # Parsed once per content (every report and comparison reads the file); a copy, so that
    # no caller changes the cached cells.
    return _parsed_results(path, text).copy()


@functools.lru_cache(maxsize=4)
def _parsed_results(path: Path, text: str) -> pd.DataFrame:
    lines = text.splitlines()
    header = tuple(lines[0].split("\t")) if lines else ()
    if header != PUBLISHED_COLUMNS:
        raise AnalysisError(
            f"{path}:1: header {header} is not the tab-separated {', '.join(PUBLISHED_COLUMNS)}"
        )
    cells = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(PUBLISHED_COLUMNS):
            raise AnalysisError(
                f"{path}:{number}: {len(fields)} tab-separated fields, expected "
                f"{len(PUBLISHED_COLUMNS)} ({', '.join(PUBLISHED_COLUMNS)})"
            )
        cell = dict(zip(PUBLISHED_COLUMNS, fields))
        if cell["paper"] not in CITATIONS:
            raise AnalysisError(
                f"{path}:{number}: paper {cell['paper']!r} is not one of {', '.join(CITATIONS)}"
            )
        cell["printed"] = cell["value"]
        cell["value"] = _parse_value(path, number, cell["printed"])
        cells.append({**cell, "line": number})
    return pd.DataFrame(cells, columns=[*PUBLISHED_COLUMNS, "printed", "line"])


def paper_method(method: str, adaptation: str) -> str | None:
    """The papers' name of our method with this adaptation; None where no paper has it."""
    if adaptation != NO_ADAPTATION:
        return _ADAPTED_FINETUNING.get(adaptation) if method == "finetune" else None
    variants = {objective: "ear" for objective in _VARIANT_OBJECTIVES.values()}
    return variants.get(method, method)


def fits_objective(setting: str, method: str) -> bool:
    """A variant row (ding2022's NT+APT) is only its objective's (``ear_nt``), and a variant
    objective is compared with its row only."""
    variant = method if method in _VARIANT_OBJECTIVES.values() else None
    return _VARIANT_OBJECTIVES.get(setting) == variant


def paper_scale(metric: str) -> float:
    """Printed units per unit of ours: 100 for percent, 1 for a printed fraction (MRR)."""
    return 1.0 if metric in _FRACTION_METRICS else 100.0


def is_average(lang: str) -> bool:
    """True for the paper's average cells: ``avg``, and ``en-avg`` / ``avg-de`` in a grid."""
    return AVERAGE in lang.split("-")


def setting_constraints(setting: str) -> dict[str, str] | None:
    """The settings of ours a row requires (our names, printed values); None for a setting
    not read here (then no configuration matches the row)."""
    if setting in _PROTOCOL_SETTINGS or setting in _QA_DIRECTIONS:
        return dict(_DEFAULTS)
    tokens = _NAMED_SETTINGS.get(setting, setting).split()
    if any(token.partition("=")[0] in _AT_EAR_POINT for token in tokens):
        tokens = [*_EAR_POINT.split(), *tokens]
    constraints = dict(_DEFAULTS)
    for token in tokens:
        name, _, value = token.partition("=")
        if name not in _SETTING_NAMES or not value:
            return None
        if _SETTING_NAMES[name] is not None:
            constraints[_SETTING_NAMES[name]] = value
    return constraints


def names_hyperparameters(setting: str) -> bool:
    """True when a row fixes hyperparameters (a published point: the grids of Tables
    A.1-A.3, the ablations, the dictionary scales)."""
    constraints = setting_constraints(setting)
    return constraints is not None and constraints.keys() - _DEFAULTS.keys() != set()


def _same_value(ours, printed: str) -> bool:
    ours, theirs = param_value(ours) if isinstance(ours, str) else ours, param_value(printed)
    if isinstance(ours, (int, float)) and isinstance(theirs, (int, float)):
        return math.isclose(ours, theirs, rel_tol=1e-9)
    return str(ours) == str(theirs)


def row_constraints(setting: str, method: str | None, task: str | None) -> dict[str, str] | None:
    """The settings of ours a row of the paper's ``method`` on ``task`` requires: its
    setting's, and for a row that names no hyperparameters the paper's chosen configuration
    of the method where the paper states it (``_CHOSEN``)."""
    constraints = setting_constraints(setting)
    if constraints is None or names_hyperparameters(setting):
        return constraints
    chosen = _CHOSEN.get((method, task)) or _CHOSEN.get((method, None))
    return {**constraints, **setting_constraints(chosen)} if chosen else constraints


def setting_matches(
    setting: str, params: dict, method: str | None = None, task: str | None = None
) -> bool:
    """Whether a configuration with these params (as ``param_value`` reads them) is the
    row's (a row of the paper's ``method`` on ``task``: ``row_constraints``); a source
    language or dictionary scale not logged is the default."""
    constraints = row_constraints(setting, method, task)
    if constraints is None:
        return False
    values = {**_DEFAULTS, **{k: v for k, v in params.items() if v is not None}}
    return all(
        name in values and _same_value(values[name], printed)
        for name, printed in constraints.items()
    )


def paper_languages(published: pd.DataFrame, paper: str, task: str, model: str) -> list[str]:
    """The single languages a paper prints for a task and model in any of its tables, in
    file order: what its average-only cells (ding2022 Table 6) average over."""
    cells = published[
        (published["paper"] == paper) & (published["task"] == task) & (published["model"] == model)
    ]
    single = [lang for lang in cells["lang"] if "-" not in lang and not is_average(lang)]
    return list(dict.fromkeys(single))


def our_lang(paper_lang: str, setting: str) -> str:
    """The language part of our metric key for a paper's column: a language, a generalized
    pair as printed (row language first), or an XQuAD direction."""
    direction = _QA_DIRECTIONS.get(setting)
    return direction.format(lang=paper_lang) if direction else paper_lang


def published_for(
    published: pd.DataFrame, task: str | None, model: str | None, split: str, metric: str
) -> pd.DataFrame:
    """The published cells of our task, model, metric-key split and metric (ours, read in
    the papers' names: ``_PAPER_METRICS``)."""
    paper_task, paper_model = PAPER_TASKS.get((task, split)), PAPER_MODELS.get(model)
    if paper_task is None or paper_model is None:
        return published.iloc[0:0]
    return published[
        (published["task"] == paper_task)
        & (published["model"] == paper_model)
        & (published["split"] == PAPER_SPLIT)
        & (published["metric"] == _PAPER_METRICS.get((split, metric), metric))
    ]


def matching_cells(
    published: pd.DataFrame,
    task: str | None,
    model: str | None,
    split: str,
    metric: str,
    method: str,
    adaptation: str,
    params: dict,
) -> pd.DataFrame:
    """The published cells whose rows one configuration of ours matches on ``split``/
    ``metric``, with ``our_lang`` (the language part of our metric key; averages keep the
    paper's) and ``budget`` (``budget_difference``: "" where the configuration trained on the
    row's budget; only those are compared with it)."""
    cells = published_for(published, task, model, split, metric)
    cells = cells[cells["method"] == paper_method(method, adaptation)]
    if cells.empty:  # pandas' work on no rows still costs milliseconds, once per metric
        return cells.assign(our_lang=[], budget=[])
    # Decided once per (setting, method, task): a table row repeats them in every language cell.
    rows = list(zip(cells["setting"], cells["method"], cells["task"]))
    fits = {
        (setting, row_method, row_task): fits_objective(setting, method)
        and setting_matches(setting, params, row_method, row_task)
        for setting, row_method, row_task in set(rows)
    }
    cells = cells[pd.Series([fits[row] for row in rows], index=cells.index, dtype=bool)]
    budgets = {
        row: budget_difference(*row, params)
        for row in set(zip(cells["paper"], cells["task"], cells["method"]))
    }
    return cells.assign(
        our_lang=[
            our_lang(lang, setting) for lang, setting in zip(cells["lang"], cells["setting"])
        ],
        budget=[budgets[row] for row in zip(cells["paper"], cells["task"], cells["method"])],
    )
