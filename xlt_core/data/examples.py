"""The example types that loaders produce and tasks consume."""

from dataclasses import dataclass

# Label ids follow facebook/xnli and nyu-mll/multi_nli on the hub.
XNLI_LABELS = ("entailment", "neutral", "contradiction")
# google-research-datasets/paws-x: 0 = not a paraphrase, 1 = paraphrase.
PAWSX_LABELS = ("different", "paraphrase")


@dataclass(frozen=True)
class PairExample:
    """A sentence-pair classification example (XNLI, PAWS-X)."""

    sentence1: str
    sentence2: str
    label: int
