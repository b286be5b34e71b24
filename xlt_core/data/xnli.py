"""XNLI from one of three sources: the synthetic set, a local XTREME download, or the hub.

English training data is MultiNLI (XNLI's zero-shot setting); another language's training
set is a translation of it: `train-<lang>.tsv` locally, XNLI's machine-translated train
split on the hub. Dev and test exist per language.
"""

from xlt_core.data.examples import XNLI_LABELS, PairExample
from xlt_core.data.pair_sources import PairTask, load_hub_pairs, require_hub_language
from xlt_core.data.synthetic import synthetic_xnli
from xlt_core.data.tsv import LocalPairFiles

XNLI_LANGUAGES = (
    "ar",
    "bg",
    "de",
    "el",
    "en",
    "es",
    "fr",
    "hi",
    "ru",
    "sw",
    "th",
    "tr",
    "ur",
    "vi",
    "zh",
)
HUB_ID = "facebook/xnli"  # dev, test and translated train
MULTINLI_HUB_ID = "nyu-mll/multi_nli"  # English train

# MultiNLI's own files spell the third label "contradictory" (XTREME renames it); accept both.
_LABEL_IDS = {name: label_id for label_id, name in enumerate(XNLI_LABELS)} | {"contradictory": 2}
_HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}
# XTREME's MultiNLI train file starts with premise<TAB>hypo<TAB>label; "hypothesis" is accepted.
_HEADERS = (("premise", "hypo", "label"), ("premise", "hypothesis", "label"))
_LOCAL_LAYOUT = (
    "<data_dir>/xnli/train-<lang>.tsv (a header line, then rows), <data_dir>/xnli/dev-<lang>.tsv "
    "and <data_dir>/xnli/test-<lang>.tsv (no header), each row premise<TAB>hypothesis<TAB>label "
    "with label one of entailment, neutral, contradiction"
)


def load_xnli(source: str, split: str, lang: str, data_dir: str | None = None) -> list[PairExample]:
    """The XNLI examples of one split in one language; labels are ids into XNLI_LABELS.

    source "local" reads the XTREME layout under data_dir; each (source, split, lang,
    data_dir) is read once per process and the result copied to the caller.
    """
    return _XNLI.load(source, split, lang, data_dir)


def available_xnli_languages(source: str, split: str, data_dir: str | None = None) -> list[str]:
    """The languages that a split has in a source, cheaply (local: a directory listing only).

    Meant to validate requested languages before any training starts.
    """
    return _XNLI.languages(source, split, data_dir)


def _load_hub(split: str, lang: str) -> list[PairExample]:
    """facebook/xnli for dev, test and translated train, nyu-mll/multi_nli for English train
    (parquet, no scripts)."""
    require_hub_language(HUB_ID, lang, XNLI_LANGUAGES)
    if split == "train" and lang == "en":
        dataset, config, hub_split = MULTINLI_HUB_ID, None, "train"
    else:
        dataset, config, hub_split = HUB_ID, lang, _HUB_SPLITS[split]
    # MultiNLI marks pairs without a gold label with -1.
    return load_hub_pairs(
        dataset, config, hub_split, ("premise", "hypothesis"), drop_unlabelled=True
    )


_XNLI = PairTask(
    synthetic=synthetic_xnli,
    local=LocalPairFiles(
        "xnli", "XNLI", "premise, hypothesis, label", _LABEL_IDS, _LOCAL_LAYOUT, _HEADERS
    ),
    hub=_load_hub,
    hub_languages=XNLI_LANGUAGES,
)
