"""The first line of a local XNLI / PAWS-X file is a header only when its columns are exactly
the task's column names; any other first line is a row, so a misspelled label on line 1 of
a header-less file is refused naming file:1 and the allowed labels, not dropped."""

import pytest

from xlt_core.data import pawsx, xnli
from xlt_core.data.examples import PairExample
from xlt_core.data.pawsx import load_pawsx
from xlt_core.data.xnli import load_xnli
from xlt_core.errors import DataError


@pytest.fixture(autouse=True)
def fresh_cache():
    xnli._XNLI.load_cached.cache_clear()
    pawsx._PAWSX.load_cached.cache_clear()
    yield
    xnli._XNLI.load_cached.cache_clear()
    pawsx._PAWSX.load_cached.cache_clear()


def write(data_dir, folder, name, text):
    path = data_dir / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_misspelled_label_on_line_1_is_refused_naming_the_line(tmp_path):
    path = write(tmp_path, "xnli", "dev-en.tsv", "A\tB\tentailmnet\nC\tD\tneutral\n")
    with pytest.raises(DataError) as refused:
        load_xnli("local", "dev", "en", str(tmp_path))
    message = str(refused.value)
    assert message.startswith(f"{path}:1: unknown label 'entailmnet'; allowed: entailment, ")
    assert "contradiction" in message and "premise<TAB>hypo<TAB>label" in message


def test_a_pawsx_first_row_with_a_bad_label_is_refused(tmp_path):
    path = write(tmp_path, "pawsx", "test-de.tsv", "a\tb\tyes\nc\td\t0\n")
    with pytest.raises(DataError, match=rf"^{path}:1: unknown label 'yes'; allowed: 0, 1"):
        load_pawsx("local", "test", "de", str(tmp_path))


@pytest.mark.parametrize(
    "header", ["premise\thypo\tlabel", "premise\thypothesis\tlabel", "\ufeffpremise\thypo\tlabel"]
)
def test_exact_headers_are_skipped(tmp_path, header):
    write(tmp_path, "xnli", "train-en.tsv", f"{header}\r\nA\tB\tneutral\n")
    assert load_xnli("local", "train", "en", str(tmp_path)) == [PairExample("A", "B", 1)]


def test_a_header_with_other_names_is_not_a_header(tmp_path):
    path = write(tmp_path, "pawsx", "train-en.tsv", "s1\ts2\tlabel\na\tb\t1\n")
    with pytest.raises(DataError, match=rf"^{path}:1: unknown label 'label'"):
        load_pawsx("local", "train", "en", str(tmp_path))
    write(tmp_path, "pawsx", "train-fr.tsv", "sentence1\tsentence2\tlabel\na\tb\t1\n")
    assert load_pawsx("local", "train", "fr", str(tmp_path)) == [PairExample("a", "b", 1)]
