"""MLQA's F1 as efimov2023's released evaluation computes it, by name: `<set>/<lang>/f1_squad`,
F1 under SQuAD v1.1's normalisation (the released run_qa.py loads SQuAD's metric script for
MLQA), beside MLQA's own `f1`; on the other sets the same as `f1` (the evaluator's keys:
tests/xlt_core/test_qa_scoring.py). Worked by hand: gold "Río Amazonas", prediction "el río
Amazonas" -> MLQA drops Spanish's article "el" (F1 1), SQuAD v1.1 keeps it (precision 2/3,
recall 1, F1 0.8)."""

import pytest
from qa_examples import qa_example

from xlt_core.tasks.qa_scoring import SQUAD_F1, normalizer_for, score_answers, with_squad_f1


def test_with_squad_f1_recomputes_only_mlqa():
    examples = [qa_example("¿Qué río?", "Río Amazonas es largo", "Río Amazonas")]
    scored = score_answers(["el río Amazonas"], examples, normalizer_for("mlqa", "es"))
    assert scored["value"] == 1.0
    assert with_squad_f1(scored, examples, "mlqa")[SQUAD_F1] == pytest.approx(0.8)
    # another set: its own F1 (its normalisation is already SQuAD v1.1's)
    assert with_squad_f1({**scored, "value": 0.5}, examples, "xquad")[SQUAD_F1] == 0.5
