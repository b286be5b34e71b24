"""Tatoeba sentence retrieval (XTREME's XSR): line-aligned target-language / English pairs,
local, from the hub, or synthetic (`synthetic_xsr.py`, the offline default).

Local layout (LASER's `data/tatoeba/v1`, as in XTREME downloads):
`<data_dir>/tatoeba/tatoeba.<xxx>-eng.<xxx>` and `tatoeba.<xxx>-eng.eng`, one sentence a
line, three-letter codes. On the hub: `google/xtreme`, configs `tatoeba.<xxx>` (split
`validation`, columns `source_sentence` = the other language, `target_sentence` = English).
The project names languages by two-letter codes; `TATOEBA_CODES` maps them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from xlt_core.data.examples import RetrievalPairs
from xlt_core.data.synthetic_xsr import SYNTHETIC_XSR_LANGUAGES, synthetic_tatoeba
from xlt_core.errors import DataError

# Two-letter project codes -> Tatoeba's three-letter codes (XTREME's XSR languages we use).
HUB_ID = "google/xtreme"  # its tatoeba.<code> configurations
TATOEBA_CODES = {
    "ar": "ara",
    "bg": "bul",
    "de": "deu",
    "el": "ell",
    "es": "spa",
    "fr": "fra",
    "hi": "hin",
    "ru": "rus",
    "sw": "swh",
    "th": "tha",
    "tr": "tur",
    "ur": "urd",
    "vi": "vie",
    "zh": "cmn",
    "ja": "jpn",
    "ko": "kor",
}
_TWO_LETTER = {three: two for two, three in TATOEBA_CODES.items()}


def load_tatoeba(source: str, lang: str, data_dir: str | None = None) -> RetrievalPairs:
    if source == "synthetic":
        return synthetic_tatoeba(lang)
    code = _three_letter(lang)
    if source == "local":
        return _read_local(Path(data_dir) / "tatoeba", lang, code)
    return _load_hub(lang, code)


def available_tatoeba_languages(source: str, data_dir: str | None) -> list[str] | None:
    """Two-letter codes of the local pairs (a directory listing) or the synthetic ones; None
    for the hub."""
    if source == "hub":
        return None
    if source == "synthetic":
        return list(SYNTHETIC_XSR_LANGUAGES)
    codes = (
        path.name.split(".")[1].split("-")[0]
        for path in (Path(data_dir) / "tatoeba").glob("tatoeba.*-eng.eng")
    )
    return sorted(_TWO_LETTER[code] for code in codes if code in _TWO_LETTER)


def _three_letter(lang: str) -> str:
    if lang not in TATOEBA_CODES:
        raise DataError(
            f"no Tatoeba code known for language {lang!r}; known: "
            f"{', '.join(sorted(TATOEBA_CODES))}"
        )
    return TATOEBA_CODES[lang]


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _read_local(directory: Path, lang: str, code: str) -> RetrievalPairs:
    paths = [directory / f"tatoeba.{code}-eng.{code}", directory / f"tatoeba.{code}-eng.eng"]
    sides = []
    for path in paths:
        if not path.is_file():
            raise DataError(
                f"Tatoeba file not found: {path}; the local layout expects "
                "<data_dir>/tatoeba/tatoeba.<xxx>-eng.<xxx|eng>"
            )
        sides.append(
            tuple(
                line.rstrip("\r")
                for line in path.read_text(encoding="utf-8-sig").rstrip("\n").split("\n")
            )
        )
    if len(sides[0]) != len(sides[1]):
        raise DataError(
            f"{paths[0]} has {len(sides[0])} lines but {paths[1]} has {len(sides[1])}: the files "
            "must be line-aligned"
        )
    return RetrievalPairs(lang, *sides)


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _load_hub(lang: str, code: str) -> RetrievalPairs:
    from datasets import load_dataset

    rows = load_dataset(HUB_ID, f"tatoeba.{code}", split="validation")
    return RetrievalPairs(lang, tuple(rows["source_sentence"]), tuple(rows["target_sentence"]))
