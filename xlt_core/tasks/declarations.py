"""The built-in tasks, one declaration each (fields: `xlt_core/registry.py`).

Data sizes (`TaskData`, the cost model's): the hub data sets the paper presets read. Words:
measured 2026-11-30 on the shared sample (../shared/data) with str.split.
"""

from xlt_core.data.examples import NER_LABELS, PAWSX_LABELS, XNLI_LABELS
from xlt_core.registry import ALL, TaskData, TaskDeclaration, register_task

_PAIR_TASK = "xlt_core.tasks.pair_classification_task:PairClassificationTask"
# The objectives that work on any head's loss: EAR and RS-DA copy sentence pairs and are
# not defined for tagged sentences or QA windows.
_ANY_HEAD_OBJECTIVES = ("finetune", "adv", "rs_rp")

# XNLI (Conneau et al. 2018): three-way natural language inference on sentence pairs; a
# machine-translated training set exists for every language, and its translated test sets
# keep every label.
register_task(
    TaskDeclaration(
        name="xnli",
        implementation=_PAIR_TASK,
        head="sequence_classification",
        metric="accuracy",
        selection_set="{dev_lang}",
        # MultiNLI train (Williams et al. 2018); XNLI dev / test per language (Conneau et
        # al. 2018). Words: premise + hypothesis, xnli/train-en.tsv (999 pairs).
        data=TaskData(392_702, 2_490, 5_010, 33.85),
        objectives=ALL,
        labels=XNLI_LABELS,
        loader="xlt_core.data.xnli:load_xnli",
        lister="xlt_core.data.xnli:available_xnli_languages",
        translated_training=True,
        translations_keep_labels=True,
        # Dev and test are human translations of one item set, line i the same pair in
        # every language (the synthetic set's pseudo-languages too).
        parallel_sets=("dev", "test"),
    )
)
# PAWS-X (Yang et al. 2019): paraphrase identification on sentence pairs; translated
# training sets as XNLI's. Its translations relabel about 1% of pairs, whose generalized
# pairs are left out.
register_task(
    TaskDeclaration(
        name="pawsx",
        implementation=_PAIR_TASK,
        head="sequence_classification",
        metric="accuracy",
        selection_set="{dev_lang}",
        # PAWS-X (Yang et al. 2019). Words: both sentences, pawsx/dev-en.tsv (2,000 pairs).
        data=TaskData(49_401, 2_000, 2_000, 42.62),
        objectives=ALL,
        labels=PAWSX_LABELS,
        loader="xlt_core.data.pawsx:load_pawsx",
        lister="xlt_core.data.pawsx:available_pawsx_languages",
        translated_training=True,
        # Dev and test: example i is the same pair, human-translated, in every language.
        parallel_sets=("dev", "test"),
    )
)
# WikiANN NER (Pan et al. 2017) as token classification (tasks/ner.py).
register_task(
    TaskDeclaration(
        name="ner",
        implementation="xlt_core.tasks.ner:NERTask",
        head="token_classification",
        metric="f1",
        selection_set="{source_lang}",
        # WikiANN English, Rahimi et al. 2019's splits (XTREME); other languages' test sets
        # hold 1,000-10,000 sentences (10,000 here: an upper bound). Words: panx/train-en.tsv.
        data=TaskData(20_000, 10_000, 10_000, 8.02),
        objectives=_ANY_HEAD_OBJECTIVES,
        labels=NER_LABELS,
        # WikiANN's sentences are each language's own Wikipedia text: independent sets. The
        # synthetic set translates one set of sentences word by word (synthetic_ner.py).
        synthetic_parallel_sets=("dev", "test"),
    )
)
# Extractive QA: SQuAD v1.1 into XQuAD, MLQA and TyDiQA-GoldP (tasks/qa.py).
register_task(
    TaskDeclaration(
        name="qa",
        implementation="xlt_core.tasks.qa:QATask",
        head="question_answering",
        metric="f1",
        selection_set="{source_lang}",
        # SQuAD v1.1 train / dev; per language XQuAD's 1,190 questions (MLQA and XQuAD's
        # cross-lingual directions are not counted). Words: context + question,
        # xquad.en.json.
        data=TaskData(87_599, 10_570, 1_190, 137.43),
        objectives=_ANY_HEAD_OBJECTIVES,
        # XQuAD translates 1,190 SQuAD questions in the same order into every language.
        # TyDiQA's questions are written per language; MLQA's are parallel across 4
        # languages on average, but each language's file holds its own subset in its own
        # order, so no position pairs them. The synthetic MLQA is XQuAD-like (synthetic_qa.py).
        parallel_sets=("xquad",),
        synthetic_parallel_sets=("xquad", "mlqa"),
    )
)
# Tatoeba sentence retrieval with an encoder fine-tuned on QA (tasks/xsr.py): the dev
# queries of every language, pooled, select.
register_task(
    TaskDeclaration(
        name="xsr",
        implementation="xlt_core.tasks.xsr:RetrievalTask",
        head="question_answering",
        metric="mrr",
        selection_set="pooled",
        # Fine-tuned as QA (SQuAD v1.1 train / dev, the QA row's words), then Tatoeba,
        # 1,000 pairs per target language (XTREME), dev and test parts together. Test words:
        # both sides, twice tatoeba/tatoeba.fra-eng.eng's mean of 6.89.
        data=TaskData(87_599, 10_570, 1_000, 13.78, source_tested=False, train_words=137.43),
        objectives=("finetune",),
        # Tatoeba's pairs are each language's own sentences: independent. The synthetic set
        # renders one set of sentences in every pseudo-language, line for line.
        synthetic_parallel_sets=("dev", "test"),
    )
)
