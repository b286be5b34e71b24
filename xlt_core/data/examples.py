"""The example types that loaders produce and tasks consume."""

from dataclasses import dataclass
from typing import Callable

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


def perturbed_copies(
    example: PairExample, m: int, perturb: Callable[[str], str]
) -> list[PairExample]:
    """m copies of a sentence pair, each sentence passed through `perturb` (which draws its
    randomness: sentence 1 then sentence 2 of copy 1, then of copy 2, ...), the label kept."""
    return [
        PairExample(perturb(example.sentence1), perturb(example.sentence2), example.label)
        for _ in range(m)
    ]


# unimelb-nlp/wikiann's ClassLabel order.
NER_LABELS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC")


@dataclass(frozen=True)
class TaggedSentence:
    """A sentence of NER words and their tags (WikiANN)."""

    words: tuple[str, ...]
    tags: tuple[int, ...]  # ids into NER_LABELS


@dataclass(frozen=True)
class QAExample:
    """An extractive QA question (SQuAD v1.1 format: XQuAD, MLQA, TyDiQA-GoldP)."""

    id: str
    question: str
    context: str
    answers: tuple[str, ...]  # every gold answer text (evaluation takes the best match)
    answer_start: int  # character offset of the first answer in the context


@dataclass(frozen=True)
class RetrievalPairs:
    """Queries in the target language and their English translations, index for index
    (Tatoeba)."""

    lang: str
    queries: tuple[str, ...]
    english: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.queries)

    def select(self, start: int, stop: int | None = None) -> "RetrievalPairs":
        return RetrievalPairs(self.lang, self.queries[start:stop], self.english[start:stop])
