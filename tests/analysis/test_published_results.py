"""The papers' published results as the project's data: the shipped TSV against the shared
copy cell by cell, the main tables' printed cells, the loader's refusals, and the matching of
our sweeps' vocabulary (models, methods, settings, metric keys) to the papers'."""

import pytest
from conftest import SHARED_DATA

from analysis.frames import AnalysisError
from analysis.papers import (
    PUBLISHED_COLUMNS,
    PUBLISHED_RESULTS,
    load_published_results,
    matching_cells,
    names_hyperparameters,
    paper_method,
    setting_constraints,
    setting_matches,
)

SHARED_PAPERS = SHARED_DATA.parent / "papers"
MBERT, XLMR = "bert-base-multilingual-cased", "xlm-roberta-base"
# Cells per main table, as ../shared/papers/README.md counts them ("-" cells not printed).
MAIN_TABLE_CELLS = {
    ("ding2022", "Table 1"): 141,
    ("ding2022", "Table A.2"): 96,
    ("huang2021", "Table 1"): 40,
    ("huang2021", "Table 2"): 80,
    ("efimov2023", "Table 2"): 24,
    ("efimov2023", "Table 3"): 12,
    ("efimov2023", "Table 5"): 12,
}
# Cells read off the paper texts: (paper, table, task, model, method, setting, lang) -> printed.
PRINTED_CELLS = {
    ("ding2022", "Table 1", "xnli", "mbert", "ear", "", "hi"): "64.0",
    ("ding2022", "Table 1", "xnli", "mbert", "finetune", "", "avg"): "65.4",
    ("ding2022", "Table 1", "xnli", "xlmr-base", "finetune", "", "en"): "84.0",
    ("ding2022", "Table A.2", "xnli", "mbert", "ear", "alpha=1 beta=0.1 layer=6", "avg"): "68.42",
    ("ding2022", "Table A.2", "xnli", "mbert", "ear", "alpha=1 beta=0.2 layer=6", "sw"): "50",
    ("huang2021", "Table 1", "pawsx", "mbert", "rs_da", "", "ja"): "79.3",
    ("huang2021", "Table 1", "pawsx", "mbert", "rs_da", "", "avg"): "85.4",
    ("huang2021", "Table 1", "pawsx", "mbert", "finetune", "hu2020", "en"): "94.0",
    ("huang2021", "Table 2", "xnli", "mbert", "rs_da", "", "avg"): "67.6",
    ("huang2021", "Table 2", "xnli", "mbert", "finetune", "reproduce", "en"): "82.3",
    ("efimov2023", "Table 2", "xnli", "mbert", "finetune", "", "hi"): "59.03",
    ("efimov2023", "Table 2", "xnli", "mbert", "adjust_continual", "", "hi"): "63.90",
    ("efimov2023", "Table 2", "mixed-xnli", "mbert", "adjust", "", "hi"): "57.31",
    ("efimov2023", "Table 3", "ner", "mbert", "finetune", "", "hi"): "65.24",
    ("efimov2023", "Table 5", "tatoeba", "mbert", "finetune", "layer=best", "hi"): "0.49",
}
CELL_KEY = ["paper", "table", "task", "model", "method", "setting", "lang"]


@pytest.fixture(scope="module")
def published():
    return load_published_results()


def test_shipped_file_equals_the_shared_table_cell_by_cell():
    shared = SHARED_PAPERS / "published_results.tsv"
    if not shared.is_file():
        pytest.skip(f"the shared published results {shared} are missing")
    ours = PUBLISHED_RESULTS.read_text(encoding="utf-8").splitlines()
    theirs = shared.read_text(encoding="utf-8").splitlines()
    assert len(ours) == len(theirs) == 1924
    for number, (line, expected) in enumerate(zip(ours, theirs), start=1):
        assert line.split("\t") == expected.split("\t"), f"line {number}"


def test_every_cell_loads_with_its_printed_text_and_provenance(published):
    assert len(published) == 1923
    assert published.groupby("paper").size().to_dict() == {
        "ding2022": 697,
        "efimov2023": 114,
        "huang2021": 1112,
    }
    assert (published["value"] == published["printed"].astype(float)).all()
    assert published["note"].str.len().gt(0).all()
    assert published["line"].tolist() == list(range(2, 1925))


def test_main_tables_hold_every_printed_cell(published):
    sizes = published.groupby(["paper", "table"]).size()
    for table, cells in MAIN_TABLE_CELLS.items():
        assert sizes[table] == cells, table
    indexed = published.set_index(CELL_KEY)
    for key, printed in PRINTED_CELLS.items():
        assert indexed.loc[key, "printed"] == printed, key


def test_spot_checked_cells_are_printed_in_the_paper_texts():
    if not SHARED_PAPERS.is_dir():
        pytest.skip(f"the shared paper texts {SHARED_PAPERS} are missing")
    for (paper, *_), printed in PRINTED_CELLS.items():
        assert printed in (SHARED_PAPERS / f"{paper}.txt").read_text(encoding="utf-8")


def _write(tmp_path, *lines):
    path = tmp_path / "results.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


HEADER = "\t".join(PUBLISHED_COLUMNS)
GOOD = "ding2022\tTable 1\txnli\tmbert\tear\t\ttest\taccuracy\ten\t83.2\tpaper row 'Ours'"


def test_bad_files_are_refused_naming_file_and_line(tmp_path):
    assert load_published_results(_write(tmp_path, HEADER, GOOD))["printed"].tolist() == ["83.2"]
    with pytest.raises(AnalysisError, match=r"results.tsv:1: header .* is not the tab-separated"):
        load_published_results(_write(tmp_path, "paper,table", GOOD))
    with pytest.raises(AnalysisError, match=r"results.tsv:3: value '8x' is not a number"):
        load_published_results(_write(tmp_path, HEADER, GOOD, GOOD.replace("83.2", "8x")))
    with pytest.raises(AnalysisError, match=r"results.tsv:2: 10 tab-separated fields, expected 11"):
        load_published_results(_write(tmp_path, HEADER, GOOD.rsplit("\t", 1)[0]))
    with pytest.raises(AnalysisError, match=r"results.tsv:2: paper 'ding2023' is not one of"):
        load_published_results(_write(tmp_path, HEADER, GOOD.replace("ding2022", "ding2023")))
    with pytest.raises(AnalysisError, match="cannot read published results"):
        load_published_results(tmp_path / "missing.tsv")


def test_a_changed_file_is_read_again_and_no_caller_changes_another_s_cells(tmp_path):
    """The parsed cells are cached per content: a file rewritten at once, with the same size,
    is parsed again."""
    path = _write(tmp_path, HEADER, GOOD)
    first = load_published_results(path)
    first.loc[0, "printed"] = "changed by a caller"
    assert load_published_results(path)["printed"].tolist() == ["83.2"]
    _write(tmp_path, HEADER, GOOD.replace("83.2", "84.1"))
    assert load_published_results(path)["printed"].tolist() == ["84.1"]


def test_methods_and_adaptations_take_the_papers_names():
    assert paper_method("finetune", "none") == "finetune"
    assert paper_method("finetune", "adjusted") == "adjust"
    assert paper_method("finetune", "adjusted_continual") == "adjust_continual"
    assert paper_method("rs_da", "none") == "rs_da"
    assert paper_method("ear", "adjusted") is None  # no paper adjusts before EAR


def test_settings_name_the_hyperparameters_of_ours_they_fix():
    defaults = {"source_lang": "en", "dictionary_scale": "1"}
    point = {"alpha": "1", "beta": "0.1", "layer": "6"}
    assert setting_constraints("alpha=1 beta=0.1 layer=6") == {**defaults, **point}
    assert setting_constraints("generalized") == defaults
    assert setting_constraints("-EPT -APT") == {**defaults, **point, "alpha": "0", "beta": "0"}
    assert setting_constraints("source=de") == {**defaults, **point, "source_lang": "de"}
    assert setting_constraints("dictionary_scale=0.25 dictionary_size=12493") == {
        **defaults,
        **point,
        "dictionary_scale": "0.25",
    }
    assert setting_constraints("mystery=1") is None
    assert names_hyperparameters("layer=3 alpha=1 beta=1") and names_hyperparameters("-APT")
    assert not names_hyperparameters("") and not names_hyperparameters("hu2020")
    ours = {"alpha": 1.0, "beta": 0.1, "layer": 6, "m": 1}
    assert setting_matches("alpha=1 beta=0.1 layer=6", ours)
    assert not setting_matches("alpha=1 beta=0.2 layer=6", ours)
    assert setting_matches("", ours) and setting_matches("source=en", ours)
    assert not setting_matches("source=de", ours)
    assert setting_matches("source=de", {**ours, "source_lang": "de"})
    assert not setting_matches("", {**ours, "dictionary_scale": 0.5})
    assert setting_matches(
        "dictionary_scale=0.5 dictionary_size=24987", {**ours, "dictionary_scale": "0.5"}
    )
    assert not setting_matches("layer=3 alpha=1 beta=1", {"alpha": 1, "beta": 1})


def test_variant_objectives_meet_their_rows_only(published):
    point = {"alpha": 1.0, "beta": 0.1, "layer": 6, "m": 1}
    full = _cells(published, "xnli", MBERT, "test", "accuracy", "ear", params=point)
    assert set(full["setting"]) == {
        "",
        "EPT+APT",
        "source=en",
        "dictionary_scale=1.0 dictionary_size=49975",
        "alpha=1 beta=0.1 layer=6",
    }
    no_ept = _cells(
        published, "xnli", MBERT, "test", "accuracy", "ear", params={**point, "alpha": 0}
    )
    assert set(no_ept["setting"]) == {"-EPT"}  # its ablation row, never the full method's
    noise = _cells(
        published, "xnli", MBERT, "test", "accuracy", "ear_nt", params={"beta": 0.1, "layer": 6}
    )
    assert set(zip(noise["table"], noise["setting"])) == {("Table 4", "NT+APT")}
    srpt = _cells(published, "xnli", XLMR, "test", "accuracy", "ear_srpt", params=point)
    assert set(zip(srpt["table"], srpt["setting"])) == {("Table A.4", "EPT+SRPT")}
    syntax = _cells(published, "pawsx", MBERT, "test", "accuracy", "rs_syntax", params={"m": 10})
    assert set(syntax["table"]) == {"Table 3"}
    assert paper_method("ear_nt", "none") == "ear"


def _cells(published, task, model, split, metric, method, adaptation="none", params=None):
    return matching_cells(published, task, model, split, metric, method, adaptation, params or {})


def test_a_sweep_matches_by_task_model_split_and_metric(published):
    xnli = _cells(published, "xnli", MBERT, "test", "accuracy", "finetune")
    assert set(zip(xnli["paper"], xnli["table"])) == {
        ("efimov2023", "Table 2"),
        ("ding2022", "Table 1"),
        ("huang2021", "Table 2"),
        ("huang2021", "Table 7"),
    }
    # each cell says how a run differs from the row's budget: this one logged no epochs
    assert set(zip(xnli["paper"], xnli["budget"])) == {
        ("efimov2023", "epochs not logged (the paper's 2)"),
        ("ding2022", "epochs not logged (the paper's 5)"),
        ("huang2021", "epochs not logged (the paper's 5)"),
    }
    assert _cells(published, "xnli", "tiny", "test", "accuracy", "finetune").empty
    assert _cells(published, "xnli", MBERT, "dev", "accuracy", "finetune").empty
    xlmr = _cells(published, "pawsx", XLMR, "test", "accuracy", "finetune")
    assert set(xlmr["table"]) == {"Table 2"} and set(xlmr["model"]) == {"xlmr-base"}
    mixed = _cells(published, "xnli", MBERT, "mixed", "accuracy", "finetune", "adjusted")
    assert set(mixed["task"]) == {"mixed-xnli"} and set(mixed["method"]) == {"adjust"}
    xsr = _cells(published, "xsr", MBERT, "test", "mrr", "finetune")
    assert xsr.set_index("lang").loc["hi", "printed"] == "0.49"


def test_grid_cells_and_two_language_keys_map_to_our_metric_keys(published):
    point = _cells(
        published,
        "xnli",
        MBERT,
        "test",
        "accuracy",
        "ear",
        params={"alpha": 1, "beta": 0.5, "layer": 6},
    )
    grid = point[point["table"] == "Table A.2"].set_index("lang")
    assert grid.loc["sw", "printed"] == "50.34" and set(grid["setting"]) == {
        "alpha=1 beta=0.5 layer=6"
    }
    assert "Table A.3" not in set(point["table"])
    released = {"m": 3, "rs_da_variant": "released"}
    pairs = _cells(published, "xnli", MBERT, "test", "accuracy", "rs_da", params=released)
    pairs = pairs[pairs["table"] == "Table 9"]
    assert len(pairs) == 256 and set(pairs["our_lang"]) == set(pairs["lang"])
    # the released RS-DA trains on the copies only; keeping the originals is another method
    kept = {"m": 3, "rs_da_variant": "keep_originals"}
    assert _cells(published, "xnli", MBERT, "test", "accuracy", "rs_da", params=kept).empty
    qa = _cells(published, "qa", MBERT, "xquad", "f1", "finetune", "adjusted_continual")
    directions = qa.set_index(["setting", "lang"])["our_lang"]
    assert directions[("question=target paragraph=en", "ru")] == "ru-en"
    assert directions[("question=en paragraph=target", "ru")] == "en-ru"
    assert directions[("", "ru")] == "ru"
