"""Synonym tables and the random synonym substitution of RS-DA and EAR.

A table maps a lower-case word to its neighbours (counterfitted_neighbors.json format,
some words with an empty list). The counter-fitted table of the papers ships with the
package (`COUNTERFITTED_TABLE`, MIT licence beside it).
"""

import json
import random
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from xlt_core.data.examples import PairExample, perturbed_copies
from xlt_core.errors import DataError

SynonymTable = Mapping[str, Sequence[str]]
# How a word is looked up (the setting `synonym_lookup`): as written, then lower-cased (the
# project's default: the tables' keys are lower-case, so "The" finds the neighbours of
# "the"), or as written only, as the released RS-DA and EAR code does (uclanlp/Robust-XLT
# perturb.py, KB-Ding/EAR utils/perturb.py: `if word not in neighbors`), which never
# replaces a capitalised word such as a sentence's first.
LOWERCASE_FALLBACK, EXACT = "lowercase_fallback", "exact"
SYNONYM_LOOKUPS = (LOWERCASE_FALLBACK, EXACT)

# The counter-fitted neighbour set (Alzantot et al. 2018) that RS-DA and EAR used.
COUNTERFITTED_TABLE = Path(__file__).parent / "resources" / "counterfitted_neighbors.json"


def load_synonym_table(path) -> dict[str, list[str]]:
    """The neighbour table in a JSON file, read once per path per process.

    The returned dict is shared between callers: treat it as read-only.
    """
    return _load_cached(str(Path(path).resolve()))


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _load_cached(path: str) -> dict[str, list[str]]:
    try:
        with open(path, encoding="utf-8") as file:
            table = json.load(file)
    except OSError as error:
        raise DataError(f"cannot read synonym table {path}: {error.strerror or error}") from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"synonym table {path} is not valid JSON: {error}") from error
    _check_shape(table, path)
    return table


def _check_shape(table, path: str) -> None:
    expected = "expected a JSON object mapping each word to a list of neighbour strings"
    if not isinstance(table, dict):
        raise DataError(f"synonym table {path}: {expected}, found a {type(table).__name__}")
    for word, neighbours in table.items():
        if not isinstance(neighbours, list) or not all(isinstance(n, str) for n in neighbours):
            raise DataError(
                f"synonym table {path}: key {word!r} does not map to a list of strings; {expected}"
            )


class LowercaseFallback(Mapping):
    """A neighbour table read as written, then lower-cased: "The" has the neighbours of "the"."""

    def __init__(self, table: SynonymTable):
        self.table = table

    def __getitem__(self, word: str) -> Sequence[str]:
        return self.table[word] if word in self.table else self.table[word.lower()]

    def __iter__(self):
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


def with_lookup(table: SynonymTable, lookup: str) -> SynonymTable:
    """The table as `synonym_lookup` reads it (SYNONYM_LOOKUPS)."""
    return LowercaseFallback(table) if lookup == LOWERCASE_FALLBACK else table


def augment_sentence(sentence: str, table: SynonymTable, rng: random.Random) -> str:
    """Replace each word that has neighbours by a uniform draw from itself and its neighbours.

    As in the released RS-DA/EAR code, words are split on single spaces and looked up in
    `table` (as written; `with_lookup` gives the lower-case fallback). A drawn neighbour is
    inserted as the table spells it; words without neighbours are kept unchanged.
    """
    return " ".join(_draw_substitute(word, table, rng) for word in sentence.split(" "))


def augment_pair(
    example: PairExample, table: SynonymTable, m: int, rng: random.Random
) -> list[PairExample]:
    """m copies of a sentence pair with both sentences augmented and the label kept."""
    return perturbed_copies(example, m, lambda sentence: augment_sentence(sentence, table, rng))


def _draw_substitute(word: str, table: SynonymTable, rng: random.Random) -> str:
    neighbours = table.get(word)
    if not neighbours:
        return word
    return rng.choice([word, *neighbours])


def scaled_table(table: SynonymTable, scale: float) -> SynonymTable:
    """The table with floor(scale x entries) of its entries kept (ding2022 Table 6: 49,975
    entries at 1.0; 37,481, 24,987 and 12,493 at 0.75, 0.5 and 0.25). The kept entries are
    a prefix of one fixed shuffle of the words, so every seed of a configuration trains on
    the same dictionary and a smaller dictionary is a subset of a larger one (the curve
    over scales measures size, not a different draw)."""
    if scale >= 1.0:
        return table
    words = sorted(table)
    random.Random("dictionary_scale").shuffle(words)
    kept = words[: int(scale * len(words))]
    return {word: list(table[word]) for word in sorted(kept)}
