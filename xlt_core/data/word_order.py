"""Syntactic perturbation of RS-syntax (Huang et al. 2021, Sec. 5): random swaps of adjacent
words, "randomly swapping adjacent words with a probability p = 0.1".

The paper gives no more than that sentence and released no code for it; our reading:
words (split on single spaces, as the synonym copies are) are visited left to right, and
each word still in its place is swapped with its right neighbour with probability p; a
swapped pair is skipped over, so a word moves at most one position and every swap is
visible in the copy. Each decision is a coin with probability p, so swaps / decisions
estimates p.
"""

from __future__ import annotations

import random

from xlt_core.data.examples import PairExample, perturbed_copies


def swap_adjacent(sentence: str, p: float, rng: random.Random) -> str:
    """The sentence with adjacent words swapped, each decision with probability p."""
    words = sentence.split(" ")
    i = 0
    while i < len(words) - 1:
        if rng.random() < p:
            words[i], words[i + 1] = words[i + 1], words[i]
            i += 2
        else:
            i += 1
    return " ".join(words)


def swapped_pairs(example: PairExample, p: float, m: int, rng: random.Random) -> list[PairExample]:
    """m copies of a sentence pair, both sentences perturbed, the label kept."""
    return perturbed_copies(example, m, lambda sentence: swap_adjacent(sentence, p, rng))
