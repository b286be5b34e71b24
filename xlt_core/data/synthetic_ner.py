"""A small deterministic WikiANN-like NER set generated in code (the offline default of
task=ner).

Sentences come from the synthetic NLI set's grammar and lexicons ("the tall man never buys
the red car in the park"). Its noun phrases are the entities, typed by their role and tagged
in BIO with WikiANN's labels: the subject (a person noun and its adjective) PER, the direct
object (an object noun and its adjective) ORG, the place (one word, so no I-LOC) LOC:

    the/O tall/B-PER man/I-PER never/O buys/O the/O red/B-ORG car/I-ORG in/O the/O park/B-LOC

So a word's tag follows from its synonym group and its neighbour, a signal a tiny model
learns. The types are stand-ins for WikiANN's, as the pseudo-languages es, de, ru are for
languages: word-by-word translations ("de" moves the verb phrase last, which splits no
entity), so dev and test are parallel across languages; train exists only in English.
"""

from functools import lru_cache

from xlt_core.data.examples import NER_LABELS, TaggedSentence
from xlt_core.data.synthetic import (  # the grammar, lexicons and drawing are shared, not copied
    OBJECT_ADJECTIVE_SCALES,
    OBJECTS,
    PLACE_SCALES,
    SPLIT_SIZES,
    SUBJECT_ADJECTIVE_SCALES,
    SUBJECTS,
    SYNTHETIC_LANGUAGES,
    rendered_sentences,
    translated,
    word_order,
)
from xlt_core.errors import ConfigError, DataError

# Distinct from the other synthetic sets' seeds, so each task draws its own sentences.
_SPLIT_SEEDS = {"train": 7007, "dev": 8008, "test": 9009}


def _groups(scales: tuple) -> tuple:
    return tuple(group for scale in scales for group in scale)


_ROLE_GROUPS = {
    "PER": SUBJECTS + _groups(SUBJECT_ADJECTIVE_SCALES),
    "ORG": OBJECTS + _groups(OBJECT_ADJECTIVE_SCALES),
    "LOC": _groups(PLACE_SCALES),
}
# Each entity word's type (no word has two: the roles' groups are disjoint).
ENTITY_TYPE = {word: kind for kind, groups in _ROLE_GROUPS.items() for g in groups for word in g}


def entity_spans(words) -> list[tuple[int, int, str]]:
    """(start, stop, type) of each entity of English words: a run of words of one type."""
    spans = []
    for index, word in enumerate(words):
        kind = ENTITY_TYPE.get(word)
        if kind is None:
            continue
        if spans and spans[-1][1] == index and spans[-1][2] == kind:
            spans[-1] = (spans[-1][0], index + 1, kind)
        else:
            spans.append((index, index + 1, kind))
    return spans


def bio_tags(words) -> tuple[int, ...]:
    """The BIO tag ids (into NER_LABELS) of English words."""
    tags = ["O"] * len(words)
    for start, stop, kind in entity_spans(words):
        tags[start:stop] = [f"B-{kind}"] + [f"I-{kind}"] * (stop - start - 1)
    return tuple(NER_LABELS.index(tag) for tag in tags)


def synthetic_ner(split: str, lang: str) -> list[TaggedSentence]:
    """The tagged sentences of one split in one (pseudo-)language; sizes as the synthetic
    NLI set's (SPLIT_SIZES), output deterministic."""
    if split not in SPLIT_SIZES:
        raise ConfigError("split", split, f"one of {', '.join(SPLIT_SIZES)}")
    if lang not in synthetic_ner_languages(split):
        raise DataError(
            f"synthetic NER {split} data has no language {lang!r}; available: "
            f"{', '.join(synthetic_ner_languages(split))}"
        )
    return list(_tagged(split, lang))


def synthetic_ner_languages(split: str) -> list[str]:
    """English trains; dev and test exist in every synthetic language."""
    return ["en"] if split == "train" else list(SYNTHETIC_LANGUAGES)


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _tagged(split: str, lang: str) -> tuple[TaggedSentence, ...]:
    sentences = rendered_sentences(_SPLIT_SEEDS[split], SPLIT_SIZES[split])
    ordered = (word_order(sentence, lang) for sentence in sentences)
    return tuple(TaggedSentence(tuple(translated(w, lang)), bio_tags(w)) for w in ordered)
