"""A small deterministic NLI data set generated in code, so the offline demo needs no data.

English premise/hypothesis pairs come from templates over a vocabulary of about 130 words,
and the label follows from the text:

- entailment: the hypothesis restates the premise with synonyms and/or drops modifiers;
- neutral: the hypothesis adds a modifier the premise does not mention;
- contradiction: the hypothesis negates the verb ("never") or swaps a modifier for an
  incompatible one (an antonym, another colour, another place).

"es", "de" and "ru" are NOT real languages: they are synthetic stand-ins derived from
English word by word through fixed pseudo-word lexicons whose overlap with English
shrinks with "distance": "es" keeps English word prefixes and about 30% identical words
(cognates); "de" shares about 10% of words (and first letters) and moves the verb to the end
of the sentence; "ru" writes every word as Cyrillic pseudo-syllables and shares nothing.
Dev and test are parallel across languages (the same underlying examples in the same
order), like XNLI; the training set, English by default, can be rendered in a
pseudo-language too (a "translated" training set, ding2022 Table 5). A tiny BERT (4
layers, hidden 64, a WordPiece vocabulary over all four languages) trained from scratch on
the English train split for a minute on CPU scores about 0.73 on English test, 0.55-0.65
on "es" and 0.46-0.57 on "de" and "ru": cues that need no shared vocabulary (which
hypothesis words also occur in the premise, relative length) keep even "ru" above chance.

The synthetic PAWS-X, NER, QA and retrieval sets (synthetic_pawsx.py, synthetic_ner.py,
synthetic_qa.py, synthetic_xsr.py) draw from this grammar and translate with these lexicons,
through its public names (the word groups and scales, `Meaning`, `rendered_sentences`,
`balanced_split`, `realised_pairs`, `word_order`, `translated`, `realise`); the
underscored names are this module's own.

Everything is drawn from random.Random with fixed seeds over sorted word lists, so the
output is identical across processes and Python runs (no salted hash() is involved).
"""

import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from xlt_core.data.examples import PairExample
from xlt_core.errors import ConfigError, DataError

SYNTHETIC_LANGUAGES = ("en", "es", "de", "ru")
TRAIN_SIZE = 2000
DEV_SIZE = 300
TEST_SIZE = 500
SPLIT_SIZES = {"train": TRAIN_SIZE, "dev": DEV_SIZE, "test": TEST_SIZE}

# Distinct seeds per split keep train, dev and test independent draws.
_SPLIT_SEEDS = {"train": 1001, "dev": 2002, "test": 3003}
_LEXICON_SEEDS = {"es": 11, "de": 12, "ru": 13}

# A group is a tuple of interchangeable synonyms; its first word is its name.
SUBJECTS = (
    ("man", "guy"),
    ("woman", "lady"),
    ("boy", "lad"),
    ("girl",),
    ("child", "kid"),
    ("doctor", "physician"),
    ("teacher", "instructor"),
    ("student", "pupil"),
    ("farmer",),
    ("singer", "vocalist"),
    ("worker", "labourer"),
    ("cook", "chef"),
    ("lawyer", "attorney"),
    ("driver",),
)
_VERBS = (
    ("buys", "purchases"),
    ("fixes", "repairs"),
    ("cleans", "washes"),
    ("likes", "enjoys"),
    ("finds", "discovers"),
    ("sells",),
    ("paints",),
    ("builds", "constructs"),
    ("inspects", "examines"),
    ("wants", "desires"),
)
OBJECTS = (
    ("car", "automobile"),
    ("house", "home"),
    ("book", "novel"),
    ("box", "crate"),
    ("chair", "seat"),
    ("picture", "photo", "photograph"),
    ("ball",),
    ("boat", "ship"),
    ("door",),
    ("bike", "bicycle"),
    ("cup", "mug"),
    ("bag", "sack"),
    ("lamp",),
    ("table",),
)
# A scale is a tuple of mutually exclusive groups: swapping one for another contradicts.
SUBJECT_ADJECTIVE_SCALES = (
    (("tall",), ("short",)),
    (("young", "youthful"), ("elderly", "aged")),
    (("happy", "glad", "cheerful"), ("sad", "unhappy")),
    (("rich", "wealthy"), ("poor",)),
    (("strong", "powerful"), ("weak",)),
    (("calm", "relaxed"), ("angry", "furious")),
)
OBJECT_ADJECTIVE_SCALES = (
    (("big", "large"), ("small", "little")),
    (("new",), ("old",)),
    (("clean", "spotless"), ("dirty", "filthy")),
    (("cheap", "inexpensive"), ("expensive", "costly")),
    (("heavy",), ("light",)),
    (("red",), ("blue",), ("green",), ("white",), ("black",)),
)
_MANNER_SCALES = (
    (("quickly", "rapidly"), ("slowly",)),
    (("carefully", "cautiously"), ("carelessly",)),
    (("quietly", "silently"), ("loudly", "noisily")),
)
# One event happens in one place, so every place excludes every other.
PLACE_SCALES = (
    (
        ("park",),
        ("kitchen",),
        ("garden", "yard"),
        ("street", "road"),
        ("school",),
        ("store", "shop"),
        ("office",),
        ("station",),
        ("city", "town"),
        ("village",),
    ),
)
_FUNCTION_WORDS = ("the", "never", "in")

_MODIFIER_SCALES = {
    "subject_adjective": SUBJECT_ADJECTIVE_SCALES,
    "object_adjective": OBJECT_ADJECTIVE_SCALES,
    "manner": _MANNER_SCALES,
    "place": PLACE_SCALES,
}
_SCALE_OF_GROUP = {
    group: scale for scales in _MODIFIER_SCALES.values() for scale in scales for group in scale
}
_ALL_GROUPS = (
    SUBJECTS + _VERBS + OBJECTS + tuple(_SCALE_OF_GROUP) + tuple((w,) for w in _FUNCTION_WORDS)
)
_ENGLISH_VOCABULARY = tuple(sorted(word for group in _ALL_GROUPS for word in group))
# Words only the synthetic QA set uses (xlt_core/data/synthetic_qa.py), in the lexicons too.
_QUESTION_WORDS = ("who", "what", "where")

_MODIFIER_PROBABILITY = 0.5  # how often a premise carries each optional modifier
_RESTATE_PROBABILITY = 0.4  # how often an entailment only rewords the premise with synonyms
_EXTRA_DROP_PROBABILITY = 0.3  # neutral/contradiction hypotheses also drop a modifier this often
_NEGATION_PROBABILITY = 0.2  # how often a sentence of the NER, QA and retrieval sets is negated


@dataclass(frozen=True)
class Meaning:
    """What a sentence says, as synonym groups; None marks an absent modifier."""

    subject: tuple
    verb: tuple
    direct_object: tuple
    subject_adjective: tuple | None = None
    object_adjective: tuple | None = None
    manner: tuple | None = None
    place: tuple | None = None
    negated: bool = False

    def modifiers(self, present: bool) -> list[str]:
        """The modifier slot names that are present (or absent) in this meaning."""
        return [slot for slot in _MODIFIER_SCALES if (getattr(self, slot) is not None) == present]


def synthetic_xnli(split: str, lang: str) -> list[PairExample]:
    """The synthetic NLI examples of one split in one (pseudo-)language.

    Sizes are SPLIT_SIZES[split]; every split exists in every language. Deterministic.
    """
    return realised_pairs(_english_split, split, lang)


def realised_pairs(
    english_split: Callable[[str], tuple], split: str, lang: str
) -> list[PairExample]:
    """The (first, second, label) triples of `english_split(split)` realised in `lang`, as
    PairExamples; shared with the synthetic PAWS-X set, which differs only in its triples."""
    if split not in SPLIT_SIZES:
        raise ConfigError("split", split, f"one of {', '.join(SPLIT_SIZES)}")
    if lang not in SYNTHETIC_LANGUAGES:
        raise DataError(
            f"synthetic data has no language {lang!r}; available: {', '.join(SYNTHETIC_LANGUAGES)}"
        )
    return [
        PairExample(realise(first, lang), realise(second, lang), label)
        for first, second, label in english_split(split)
    ]


def synthetic_synonyms(lang: str = "en") -> dict[str, list[str]]:
    """The synonym table over the synthetic vocabulary, in `lang` (the lexicons map words one
    to one, so a pseudo-language's synonyms are its words for the English synonyms).

    Same format as counterfitted_neighbors.json: every lower-case word maps to its
    neighbours (other words of its synonym group), an empty list where it has none.
    """
    return {
        word: [other for other in group if other != word]
        for english_group in _ALL_GROUPS
        for group in [translated(english_group, lang)]
        for word in group
    }


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _english_split(split: str) -> tuple:
    """(premise, hypothesis, label) triples of rendered English sentences, labels balanced."""
    return balanced_split(_SPLIT_SEEDS[split], split, len(_HYPOTHESIS_BUILDERS), _hypothesis)


def _hypothesis(premise: Meaning, label: int, rng: random.Random) -> Meaning | None:
    return _HYPOTHESIS_BUILDERS[label](premise, rng)


# (meaning, label, rng) -> the meaning to pair it with, or None where it admits none.
_Counterpart = Callable[[Meaning, int, random.Random], Meaning | None]


def balanced_split(seed: int, split: str, label_count: int, counterpart: _Counterpart) -> tuple:
    """SPLIT_SIZES[split] (first, second, label) triples of rendered English sentences, the
    labels 0 .. label_count - 1 balanced and shuffled, all drawn from random.Random(seed)."""
    rng = random.Random(seed)
    labels = [index % label_count for index in range(SPLIT_SIZES[split])]
    rng.shuffle(labels)
    return tuple(_english_pair(label, rng, counterpart) for label in labels)


def _english_pair(label: int, rng: random.Random, counterpart: _Counterpart) -> tuple:
    """Draw meanings until one admits a counterpart with the label and a different wording."""
    while True:
        meaning = _random_meaning(rng)
        other = counterpart(meaning, label, rng)
        if other is None:
            continue
        first, second = _render(meaning, rng), _render(other, rng)
        if first != second:
            return first, second, label


def _random_meaning(rng: random.Random) -> Meaning:
    modifiers = {
        slot: rng.choice(_groups_of(slot)) if rng.random() < _MODIFIER_PROBABILITY else None
        for slot in _MODIFIER_SCALES
    }
    return Meaning(rng.choice(SUBJECTS), rng.choice(_VERBS), rng.choice(OBJECTS), **modifiers)


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def rendered_sentences(seed: int, count: int) -> tuple:
    """`count` rendered English sentences drawn from random.Random(seed), a fifth of them
    negated: the text of the synthetic NER, QA and retrieval sets."""
    rng = random.Random(seed)
    sentences = []
    for _ in range(count):
        meaning = _random_meaning(rng)
        if rng.random() < _NEGATION_PROBABILITY:
            meaning = replace(meaning, negated=True)
        sentences.append(_render(meaning, rng))
    return tuple(sentences)


def _groups_of(slot: str) -> tuple:
    return tuple(group for scale in _MODIFIER_SCALES[slot] for group in scale)


def _entailed(premise: Meaning, rng: random.Random) -> Meaning:
    """Drop some modifiers, or keep the meaning (rendering then restates it with synonyms)."""
    present = premise.modifiers(present=True)
    if not present or rng.random() < _RESTATE_PROBABILITY:
        return premise
    dropped = rng.sample(present, rng.randint(1, len(present)))
    return replace(premise, **{slot: None for slot in dropped})


def _neutral(premise: Meaning, rng: random.Random) -> Meaning | None:
    """Add a modifier the premise does not mention (None if it mentions all)."""
    absent = premise.modifiers(present=False)
    if not absent:
        return None
    added = rng.choice(absent)
    hypothesis = replace(premise, **{added: rng.choice(_groups_of(added))})
    return _maybe_drop_another(hypothesis, added, rng)


def _contradicted(premise: Meaning, rng: random.Random) -> Meaning:
    """Negate the verb or swap a present modifier for an incompatible one."""
    changed = rng.choice(["negated"] + premise.modifiers(present=True))
    if changed == "negated":
        # "never fixes it carefully" would only deny the manner, so negation drops it.
        hypothesis = replace(premise, negated=True, manner=None)
    else:
        current = getattr(premise, changed)
        alternatives = [group for group in _SCALE_OF_GROUP[current] if group != current]
        hypothesis = replace(premise, **{changed: rng.choice(alternatives)})
    return _maybe_drop_another(hypothesis, changed, rng)


def _maybe_drop_another(hypothesis: Meaning, changed_slot: str, rng: random.Random) -> Meaning:
    """Sometimes also drop an untouched modifier, so length alone does not give the label away."""
    others = [slot for slot in hypothesis.modifiers(present=True) if slot != changed_slot]
    if others and rng.random() < _EXTRA_DROP_PROBABILITY:
        return replace(hypothesis, **{rng.choice(others): None})
    return hypothesis


_HYPOTHESIS_BUILDERS = (_entailed, _neutral, _contradicted)  # indexed by XNLI label id


def _render(meaning: Meaning, rng: random.Random) -> tuple:
    """English words as (before verb, verb phrase, after verb); synonyms drawn at random.

    Keeping the verb phrase apart lets a derived language move it.
    """

    def word(group):
        return [rng.choice(group)] if group is not None else []

    before = ("the", *word(meaning.subject_adjective), *word(meaning.subject))
    verb_phrase = (*(["never"] if meaning.negated else []), *word(meaning.verb))
    after = (
        "the",
        *word(meaning.object_adjective),
        *word(meaning.direct_object),
        *word(meaning.manner),
    )
    if meaning.place is not None:
        after += ("in", "the", *word(meaning.place))
    return before, verb_phrase, after


def realise(sentence: tuple, lang: str) -> str:
    """The sentence text in a (pseudo-)language: word-by-word lexicon, "de" verb-final."""
    return " ".join(translated(word_order(sentence, lang), lang))


def word_order(sentence: tuple, lang: str) -> tuple:
    """A rendered sentence's English words in the order of `lang` ("de" moves the verb
    phrase last), so tasks that label words can carry the labels along."""
    before, verb_phrase, after = sentence
    return before + after + verb_phrase if lang == "de" else before + verb_phrase + after


def translated(words, lang: str) -> list[str]:
    """English words replaced word by word by their pseudo-words in `lang`."""
    if lang == "en":
        return list(words)
    lexicon = _lexicon(lang)
    return [lexicon[word] for word in words]


# Pseudo-word material per derived language: a share of identical words, and the
# suffixes ("es", appended to an English prefix) or syllables ("de", "ru") to draw from.
_IDENTICAL_SHARE = {"es": 0.3, "de": 0.1, "ru": 0.0}
_ES_SUFFIXES = ("o", "a", "ar", "er", "os", "ado", "ion", "ero", "ita", "ez")
_DE_SYLLABLES = (
    "ge",
    "sch",
    "ei",
    "en",
    "ung",
    "ber",
    "al",
    "ku",
    "tr",
    "au",
    "ch",
    "ke",
    "lo",
    "st",
)
_RU_SYLLABLES = (
    "ко",
    "ра",
    "ни",
    "ст",
    "ов",
    "ль",
    "де",
    "ма",
    "ть",
    "ус",
    "жи",
    "бы",
    "пр",
    "за",
    "ва",
    "щи",
)


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _lexicon(lang: str) -> dict[str, str]:
    """A fixed one-to-one English -> pseudo-word map; no pseudo-word is another English word."""
    rng = random.Random(_LEXICON_SEEDS[lang])
    taken = set(_ENGLISH_VOCABULARY + _QUESTION_WORDS)
    lexicon = {}
    # The question words come last, so the NLI words keep the pseudo-words drawn before.
    for word in _ENGLISH_VOCABULARY + _QUESTION_WORDS:
        if rng.random() < _IDENTICAL_SHARE[lang]:
            lexicon[word] = word
            continue
        pseudo_word = _pseudo_word(word, lang, rng)
        while pseudo_word in taken:
            pseudo_word = _pseudo_word(word, lang, rng)
        taken.add(pseudo_word)
        lexicon[word] = pseudo_word
    return lexicon


def _pseudo_word(word: str, lang: str, rng: random.Random) -> str:
    if lang == "es":
        prefix_length = min(len(word), max(3, round(len(word) * 0.6)))
        return word[:prefix_length] + rng.choice(_ES_SUFFIXES)
    if lang == "de":
        return word[0] + "".join(rng.choices(_DE_SYLLABLES, k=rng.randint(2, 3)))
    return "".join(rng.choices(_RU_SYLLABLES, k=rng.randint(2, 3)))


def synthetic_parallel(lang: str) -> list[tuple[str, str]]:
    """(English, translation) sentence pairs for the adjustment stage: the premises and
    hypotheses of the English training split with their word-by-word realisation in `lang`.

    Only the text is used (no labels), and the translations are exact by construction."""
    if lang not in SYNTHETIC_LANGUAGES or lang == "en":
        raise DataError(
            "synthetic parallel data pairs English with "
            f"{', '.join(other for other in SYNTHETIC_LANGUAGES if other != 'en')}, not {lang!r}"
        )
    return [
        (realise(sentence, "en"), realise(sentence, lang))
        for triple in _english_split("train")
        for sentence in triple[:2]
    ]
