"""New SQLite tracking stores for the tests that build a store only to fill it.

MLflow makes a new store by running every schema migration it has (about 2 s of CPU each
time; 42 s of the fast tier's 190 s of test time when each test made its own); `tracking_store`
copies an empty store made once per test process instead. Creating a store is still tested
where it is the subject: the demo's shared sweep (conftest's `ear_xnli_smoke`) and the
creation and lock tests of tests/xlt_schema/test_tracking_store.py make theirs (its
damaged-store fixture starts from a copy).
"""

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from mlflow.tracking import MlflowClient

STORE_FILE = "mlflow.db"  # where a test's sweep or report in a folder keeps its runs


def tracking_store(directory: Path) -> str:
    """The URI of the SQLite tracking store `directory`/mlflow.db; a copy of an empty store
    (MLflow's schema in place) when there is none yet; `directory` is made if need be, as
    MLflow makes it."""
    path = Path(directory) / STORE_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_empty_store(), path)
    return sqlite_uri(directory)


def sqlite_uri(directory: Path) -> str:
    """The URI of the SQLite store in `directory`, as it is or will be."""
    return f"sqlite:///{Path(directory) / STORE_FILE}"


@functools.cache
def _empty_store() -> Path:
    directory = Path(tempfile.mkdtemp(prefix="xlt-empty-store-"))
    atexit.register(shutil.rmtree, directory, True)
    MlflowClient(sqlite_uri(directory)).search_experiments()  # MLflow creates the schema
    return directory / STORE_FILE
