"""PAWS-X from one of three sources: the synthetic set, a local XTREME download, or the hub.

Zero-shot protocol: the model trains on English (PAWS-X's English train split); the other
languages' train splits are its machine translations (a translated source language). Dev
and test exist per language and are parallel across languages (example i is the same
pair, human-translated). Labels: 1 = paraphrase, 0 = not.
"""

from xlt_core.data.examples import PAWSX_LABELS, PairExample
from xlt_core.data.pair_sources import PairTask, load_hub_pairs, require_hub_language
from xlt_core.data.synthetic_pawsx import synthetic_pawsx
from xlt_core.data.tsv import LocalPairFiles

PAWSX_LANGUAGES = ("de", "en", "es", "fr", "ja", "ko", "zh")
HUB_ID = "google-research-datasets/paws-x"

_LABEL_IDS = {str(label_id): label_id for label_id in range(len(PAWSX_LABELS))}
_HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}
LOCAL_LAYOUT = (
    "<data_dir>/pawsx/train-<lang>.tsv, <data_dir>/pawsx/dev-<lang>.tsv and "
    "<data_dir>/pawsx/test-<lang>.tsv, "
    "each row sentence1<TAB>sentence2<TAB>label with label 0 or 1 "
    "(an optional header line sentence1<TAB>sentence2<TAB>label)"
)


def load_pawsx(
    source: str, split: str, lang: str, data_dir: str | None = None
) -> list[PairExample]:
    """The PAWS-X examples of one split in one language, read once per process."""
    return _PAWSX.load(source, split, lang, data_dir)


def available_pawsx_languages(source: str, split: str, data_dir: str | None = None) -> list[str]:
    """The languages that a split has in a source, cheaply (local: a directory listing only)."""
    return _PAWSX.languages(source, split, data_dir)


def _load_hub(split: str, lang: str) -> list[PairExample]:
    require_hub_language(HUB_ID, lang, PAWSX_LANGUAGES)
    return load_hub_pairs(HUB_ID, lang, _HUB_SPLITS[split], ("sentence1", "sentence2"))


_PAWSX = PairTask(
    synthetic=synthetic_pawsx,
    local=LocalPairFiles(
        "pawsx",
        "PAWS-X",
        "sentence1, sentence2, label",
        _LABEL_IDS,
        LOCAL_LAYOUT,
        (("sentence1", "sentence2", "label"),),
    ),
    hub=_load_hub,
    hub_languages=PAWSX_LANGUAGES,
)
