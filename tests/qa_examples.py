"""Hand-written QA examples, shared by the extractive QA and QA scoring tests."""

from xlt_core.data.examples import QAExample


def qa_example(question, context, answer, id_="q1", more=()) -> QAExample:
    """An example whose gold answers are `answer` and `more`, `answer` starting where it
    first stands in `context`."""
    return QAExample(id_, question, context, (answer, *more), context.index(answer))
