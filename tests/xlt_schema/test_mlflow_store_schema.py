"""A store that SQLite's `quick_check` passes but the installed MLflow cannot use is refused in
one line, before a sweep or a report reads it (issue 53, item 2): a table dropped (before, the
sweep trained and every trial failed on `table metrics has no column named step`), a newer
MLflow's schema (before, MLflow's advice to run `mlflow db upgrade`), an older one's; and a
text file or a truncated store given to `python -m analysis report` (before, a
`sqlite3.DatabaseError` traceback)."""

import contextlib
import sqlite3

import mlflow
import pytest
from tracking_stores import STORE_FILE, tracking_store

# A revision no MLflow release has: a newer MLflow's, to this one.
NEWER_REVISION = "ffffffffffff"
# MLflow 1.0's migration that added the metrics' step: a store of that schema is older.
OLDER_REVISION = "451aebb31d03"


def _store(tmp_path, damage: str):
    """A store in `tmp_path` (MLflow's empty schema, as a sweep's starts) damaged as named."""
    path = tmp_path / STORE_FILE
    tracking_store(tmp_path)
    if damage in ("text", "truncated"):
        whole = path.read_bytes()
        path.write_bytes(b"runs: 12\n" * 50 if damage == "text" else whole[: len(whole) // 2])
        return path
    statement = {
        "dropped table": "drop table metrics",
        "newer schema": f"update alembic_version set version_num = '{NEWER_REVISION}'",
        "older schema": f"update alembic_version set version_num = '{OLDER_REVISION}'",
    }[damage]
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute(statement)
        connection.commit()
        assert connection.execute("PRAGMA quick_check").fetchone() == ("ok",)  # SQLite's: fine
    return path


# What each damage is refused for, after the file's name.
REFUSALS = {
    "dropped table": "is not a whole MLflow store: table metrics is missing, though its schema "
    "version is this install's MLflow",
    "newer schema": f"has a schema this install's MLflow {mlflow.__version__} does "
    f"not know (version {NEWER_REVISION}, from a newer MLflow): open it with the MLflow that "
    "wrote it, or give another store",
    "older schema": f"has the schema of an older MLflow (version {OLDER_REVISION}; this "
    f"install's MLflow {mlflow.__version__} needs",
    "text": "is not a SQLite database (file is not a database)",
    "truncated": "is damaged",
}


def _ray_must_not_start(*args, **kwargs):
    raise AssertionError("the sweep went on to Ray with a store MLflow cannot use")


@pytest.mark.parametrize("damage", list(REFUSALS))
def test_a_store_mlflow_cannot_use_is_refused_before_ray_in_one_line(
    tmp_path, capsys, monkeypatch, damage
):
    from sweeps import ear_xnli
    from sweeps.cli import EXIT_BAD_INPUT, main
    from sweeps.running import runner

    path = _store(tmp_path, damage)
    before = path.read_bytes()
    monkeypatch.setattr(runner, "run_sweep", _ray_must_not_start)
    assert main(ear_xnli, ["--tracking-uri", f"sqlite:///{path}"]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1, error
    assert f"an intact MLflow SQLite database; {path} {REFUSALS[damage]}" in error, error
    assert "--resume" not in error
    assert path.read_bytes() == before  # MLflow made no table in it


@pytest.mark.parametrize("damage", list(REFUSALS))
def test_a_report_of_a_store_mlflow_cannot_use_is_refused_in_one_line(tmp_path, capsys, damage):
    from analysis.__main__ import main

    path = _store(tmp_path, damage)
    code = main(["report", "--experiment", "ear_xnli", "--tracking-uri", f"sqlite:///{path}"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and len(error.splitlines()) == 1, error
    assert error.startswith(f"error: the MLflow database {path} {REFUSALS[damage]}"), error


def test_a_newer_store_gets_no_upgrade_advice_and_an_older_one_gets_mlflows(tmp_path):
    from xlt_schema.tracking_store import sqlite_problem

    newer = sqlite_problem(_store(tmp_path / "newer", "newer schema"))
    older = sqlite_problem(_store(tmp_path / "older", "older schema"))
    assert "mlflow db upgrade" not in newer
    assert older.endswith(
        f"back it up, then upgrade it: mlflow db upgrade sqlite:///{tmp_path / 'older'}/mlflow.db"
    )


def test_the_schema_is_the_installed_mlflows():
    from mlflow.store.db.utils import _get_latest_schema_revision

    from xlt_schema.tracking_store import mlflow_schema

    schema = mlflow_schema()
    assert schema.mlflow_version == mlflow.__version__
    assert schema.head == _get_latest_schema_revision()  # MLflow's own check's revision
    assert {"experiments", "runs", "metrics", "params", "tags"} <= schema.tables
