"""A small deterministic SQuAD-like extractive QA set generated in code (the offline default
of task=qa).

A context is a few sentences of the synthetic NLI grammar ("the tall man buys the red car in
the park . ..."); a question restates one of them with one entity of the synthetic NER set
(`synthetic_ner.py`) replaced by a question word: who (the subject, PER), what (the object,
ORG) or where (the place, LOC), its article or preposition dropped:

    context:  ... the tall man buys the red car in the park . ...
    question: the tall man buys the red car where ?          answer: park

So the answer is the phrase of the asked type in the sentence the question repeats, a signal
a tiny model learns. Every text is translated word by word into the pseudo-languages es, de,
ru as in the NLI set (question words included). The sets the QA task reads, each in the
languages of the real set among en, es, de, ru:

- `train` and `dev` (selection): English only, as SQuAD;
- `xquad` (en, es, de, ru) and `mlqa` (en, es, de: MLQA has no Russian): parallel across
  languages (the same questions under the same ids, so XQuAD's cross-lingual directions pair
  them, as in the real XQuAD);
- `tydiqa` (en, ru: TyDiQA has neither Spanish nor German): drawn independently per
  language, as TyDiQA's questions are written per language.
"""

import random
from functools import lru_cache

from xlt_core.data.examples import QAExample
from xlt_core.data.synthetic import (  # the grammar, lexicons and drawing are shared, not copied
    DEV_SIZE,
    SYNTHETIC_LANGUAGES,
    TRAIN_SIZE,
    rendered_sentences,
    translated,
    word_order,
)
from xlt_core.data.synthetic_ner import entity_spans
from xlt_core.errors import DataError

CONTEXT_SENTENCES = 3
QUESTIONS_PER_CONTEXT = 2
_QUESTION_WORD = {"PER": "who", "ORG": "what", "LOC": "where"}
# The article and preposition a question drops with the answer ("in the park" -> "where").
_LEADING_WORDS = ("the", "in")

# Per set: its seed and question count; whether it is parallel across languages.
_TRAINING_SETS = {"train": (1101, TRAIN_SIZE), "dev": (2202, DEV_SIZE)}
_EVAL_SETS = {
    "xquad": (3303, DEV_SIZE, True),
    "mlqa": (4404, DEV_SIZE, True),
    "tydiqa": (5505, DEV_SIZE, False),
}
# The languages of each set: those of the real set among the synthetic ones (MLQA has no
# Russian, TyDiQA neither Spanish nor German).
SYNTHETIC_QA_LANGUAGES = {
    "xquad": ("en", "es", "de", "ru"),
    "mlqa": ("en", "es", "de"),
    "tydiqa": ("en", "ru"),
}


def synthetic_qa_training(split: str) -> list[QAExample]:
    """English training (`train`) or model-selection (`dev`) questions."""
    seed, count = _TRAINING_SETS[split]
    return list(_questions(split, seed, count, "en"))


def synthetic_qa_eval(name: str, lang: str) -> list[QAExample]:
    """The questions of an evaluation set (xquad, mlqa, tydiqa) in one (pseudo-)language."""
    if lang not in SYNTHETIC_QA_LANGUAGES[name]:
        raise DataError(
            f"synthetic {name} has no language {lang!r}; available: "
            f"{', '.join(SYNTHETIC_QA_LANGUAGES[name])}"
        )
    seed, count, parallel = _EVAL_SETS[name]
    if not parallel:
        seed += 10 * SYNTHETIC_LANGUAGES.index(lang)  # its own questions in every language
    return list(_questions(name if parallel else f"{name}-{lang}", seed, count, lang))


@lru_cache(maxsize=32)  # bounded: a Ray worker runs many trials
def _questions(prefix: str, seed: int, count: int, lang: str) -> tuple[QAExample, ...]:
    """`count` questions with ids `<prefix>-<i>`, QUESTIONS_PER_CONTEXT per context of
    CONTEXT_SENTENCES sentences, all drawn from `seed`; `lang` only translates (and orders)
    them."""
    contexts = -(-count // QUESTIONS_PER_CONTEXT)
    sentences = rendered_sentences(seed, contexts * CONTEXT_SENTENCES)
    rng = random.Random(seed)
    examples = []
    for first in range(0, len(sentences), CONTEXT_SENTENCES):
        ordered = [word_order(s, lang) for s in sentences[first : first + CONTEXT_SENTENCES]]
        context, word_starts = _context(ordered, lang)
        # (sentence, entity) pairs to ask about; entity k is the same in every word order.
        candidates = [
            (i, k) for i, words in enumerate(ordered) for k in range(len(entity_spans(words)))
        ]
        for sentence, entity in rng.sample(candidates, QUESTIONS_PER_CONTEXT):
            words = ordered[sentence]
            start, stop, kind = entity_spans(words)[entity]
            answer = " ".join(translated(words[start:stop], lang))
            examples.append(
                QAExample(
                    f"{prefix}-{len(examples)}",
                    _question(words, start, stop, kind, lang),
                    context,
                    (answer,),
                    word_starts[sentence][start],
                )
            )
    return tuple(examples[:count])


def _context(ordered: list, lang: str) -> tuple[str, list[list[int]]]:
    """The context text (sentences ended by " .") and each word's character offset."""
    text, word_starts = "", []
    for words in ordered:
        starts = []
        for word in translated(words, lang):
            text += " " if text else ""
            starts.append(len(text))
            text += word
        text += " ."
        word_starts.append(starts)
    return text, word_starts


def _question(words: tuple, start: int, stop: int, kind: str, lang: str) -> str:
    """The sentence with the entity and its leading article or preposition replaced by the
    question word of its type."""
    while start > 0 and words[start - 1] in _LEADING_WORDS:
        start -= 1
    asked = (*words[:start], _QUESTION_WORD[kind], *words[stop:])
    return " ".join(translated(asked, lang)) + " ?"
