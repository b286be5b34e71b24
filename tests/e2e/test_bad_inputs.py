"""A catalogue of bad inputs: each is refused with a message naming what is wrong, before
any trial starts, and nothing already tracked is lost."""

import shutil
import socket
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from tracking_stores import tracking_store

from sweeps import ear_xnli
from sweeps.cli import main
from sweeps.cluster import validate_cluster_file
from sweeps.planning.trial_resources import trial_resources
from sweeps.running.resources import check_gpus_present
from xlt_core.config import TrialConfig
from xlt_core.data.loading import load_split
from xlt_core.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[2]
FAST = ["--set", "epochs=1", "--set", "tiny_layers=2", "--set", "layer=2"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def tracked(tmp_path_factory):
    """A tracking database that already holds a finished run, and a working directory."""
    root = tmp_path_factory.mktemp("bad-inputs")
    uri = tracking_store(root)
    client = MlflowClient(uri)
    experiment_id = client.create_experiment(
        "ear_xnli", artifact_location=(root / "mlartifacts").as_uri()
    )
    run = client.create_run(experiment_id, tags={"xlt.role": "parent"})
    client.log_metric(run.info.run_id, "dev/en/accuracy", 0.5)
    client.set_terminated(run.info.run_id)
    return root, uri, run.info.run_id


def _bad_data_dir(root: Path, corrupt: bool) -> Path:
    """A copy of a valid local layout with one file removed or one line corrupted."""
    data = root / ("corrupt-data" if corrupt else "missing-data")
    if not data.exists():
        (data / "xnli").mkdir(parents=True)
        for name in ("train-en.tsv", "dev-en.tsv", "test-en.tsv", "test-es.tsv"):
            lines = (
                [("premise\thypo\tlabel" if name.startswith("train") else "")]
                if name.startswith("train")
                else []
            )
            lines += [f"a man walks number {i}\tsomeone walks\tentailment" for i in range(20)]
            (data / "xnli" / name).write_text("\n".join(lines) + "\n")
        (data / "synonyms").mkdir()
        (data / "synonyms" / "counterfitted_neighbors.json").write_text('{"man": ["guy"]}')
        if corrupt:
            with open(data / "xnli" / "test-es.tsv", "a") as handle:
                handle.write("only one column here\n")
        else:
            (data / "xnli" / "dev-en.tsv").unlink()
    return data


CASES = [
    # (id, argv, words the message must contain)
    ("negative beta", ["--set", "beta=-1"], ["beta", "-1"]),
    ("layer too deep", ["--set", "layer=13"], ["layer", "13"]),
    ("unknown target language", ["--set", "target_langs=es,xx"], ["target_langs", "xx"]),
    ("repeated target language", ["--set", "target_langs=es,es"], ["target_langs", "distinct"]),
    ("non-numeric epochs", ["--set", "epochs=abc"], ["epochs", "abc"]),
    ("infinite learning rate", ["--set", "learning_rate=inf"], ["learning_rate", "finite"]),
    ("unknown setting", ["--set", "nonsense=1"], ["nonsense", "unknown setting"]),
    ("assignment without =", ["--set", "beta"], ["--set", "KEY=VALUE"]),
    (
        "adaptation fixed by the script",
        ["--set", "adaptation=adjusted"],
        ["adaptation", "fixed by the sweep script"],
    ),
    ("single seed instead of seeds", ["--set", "seed=3"], ["seed", "seeds=0,1,2"]),
    ("repeated seeds", ["--set", "seeds=1,1"], ["seeds", "distinct"]),
    ("non-integer seeds", ["--set", "seeds=a,b"], ["seeds", "integers"]),
    ("zero cpus per trial", ["--set", "cpus_per_trial=0"], ["cpus_per_trial", "> 0"]),
    ("nan cpus per trial", ["--set", "cpus_per_trial=nan"], ["cpus_per_trial", "finite"]),
    ("infinite cpus per trial", ["--set", "cpus_per_trial=inf"], ["cpus_per_trial", "finite"]),
    ("seed beyond 32 bits", ["--set", "seeds=0,4294967296"], ["seeds", "4294967295"]),
    (
        "max_seq_length beyond the tiny model",
        ["--set", "max_seq_length=200000000"],
        ["max_seq_length", "200000000", "512"],
    ),
    (
        "zero search trials",
        ["--strategy", "search", "--set", "search_trials=0"],
        ["search_trials", ">= 1"],
    ),
    ("non-integer top_k", ["--strategy", "search", "--set", "top_k=x"], ["top_k", ">= 1"]),
    (
        "negative alpha in a search",
        ["--strategy", "search", "--set", "tiny_layers=2", "--set", "layer=2", "--set", "alpha=-3"],
        ["alpha", "-3"],
    ),
    (
        "missing data directory",
        ["--data-dir", "/nonexistent/xtreme"],
        ["--data-dir", "/nonexistent/xtreme"],
    ),
]


@pytest.mark.parametrize(
    "argv, words", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_bad_setting_is_refused_naming_it(tracked, monkeypatch, capsys, argv, words):
    root, uri, _ = tracked
    monkeypatch.chdir(root)
    assert main(ear_xnli, ["--preset", "smoke", "--tracking-uri", uri, *FAST, *argv]) == 2
    error = capsys.readouterr().err
    assert all(word in error for word in words), error


FLAG_CASES = [
    ("zero trials per gpu", ["--trials-per-gpu", "0"], ["--trials-per-gpu", ">= 1"]),
    ("negative max failures", ["--max-failures", "-1"], ["--max-failures", ">= 0"]),
    ("unknown strategy", ["--strategy", "random"], ["--strategy", "random"]),
    ("unknown preset", ["--preset", "huge"], ["--preset", "huge"]),
]


@pytest.mark.parametrize(
    "argv, words", [case[1:] for case in FLAG_CASES], ids=[case[0] for case in FLAG_CASES]
)
def test_bad_flag_is_refused_naming_it(tracked, monkeypatch, capsys, argv, words):
    root, uri, _ = tracked
    monkeypatch.chdir(root)
    with pytest.raises(SystemExit) as exit_info:
        main(ear_xnli, ["--tracking-uri", uri, *argv])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert all(word in error for word in words), error


def test_missing_and_corrupt_data_files_are_named(tracked, monkeypatch, capsys):
    root, uri, _ = tracked
    monkeypatch.chdir(root)
    missing = _bad_data_dir(root, corrupt=False)
    assert (
        main(
            ear_xnli,
            ["--tracking-uri", uri, "--data-dir", str(missing), *FAST, "--set", "target_langs=es"],
        )
        == 2
    )
    assert "dev" in capsys.readouterr().err
    corrupt = _bad_data_dir(root, corrupt=True)
    assert (
        main(
            ear_xnli,
            ["--tracking-uri", uri, "--data-dir", str(corrupt), *FAST, "--set", "target_langs=es"],
        )
        == 2
    )
    error = capsys.readouterr().err
    assert "test-es.tsv:21" in error and "3 tab-separated columns" in error, error
    with pytest.raises(DataError, match="test-es.tsv"):
        load_split(
            TrialConfig.from_dict(
                {"data_source": "local", "data_dir": str(corrupt), "target_langs": ["es"]}
            ),
            "test",
            "es",
        )


def test_corrupt_synonym_table_is_named(tracked, monkeypatch, capsys, tmp_path):
    root, uri, _ = tracked
    monkeypatch.chdir(root)
    data = tmp_path / "data"
    shutil.copytree(_bad_data_dir(root, corrupt=False), data)
    (data / "xnli" / "dev-en.tsv").write_text((data / "xnli" / "test-en.tsv").read_text())
    broken = tmp_path / "neighbours.json"
    broken.write_text("{not json")
    assert (
        main(
            ear_xnli,
            [
                "--tracking-uri",
                uri,
                "--data-dir",
                str(data),
                *FAST,
                "--set",
                "target_langs=es",
                "--set",
                f"synonyms={broken}",
            ],
        )
        == 2
    )
    assert "neighbours.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    "make_uri, words",
    [
        (lambda root: f"http://127.0.0.1:{_free_port()}", ["--tracking-uri", "answers"]),
        (
            lambda root: "sqlite:////nonexistent/dir/mlflow.db",
            ["--tracking-uri", "/nonexistent/dir"],
        ),
        (lambda root: "./mlruns", ["--tracking-uri", "directory store"]),
        (lambda root: f"sqlite:///{_corrupt_db(root)}", ["--tracking-uri", "not-a-db.sqlite"]),
    ],
    ids=["unreachable server", "missing directory", "plain directory store", "corrupt database"],
)
def test_bad_tracking_uri_is_refused(tracked, monkeypatch, capsys, make_uri, words):
    root, _, _ = tracked
    monkeypatch.chdir(root)
    assert main(ear_xnli, ["--tracking-uri", make_uri(root), *FAST, "--set", "epochs=1"]) == 2
    error = capsys.readouterr().err
    assert all(word in error for word in words), error


def _corrupt_db(root: Path) -> Path:
    path = root / "not-a-db.sqlite"
    path.write_bytes(b"this is not an sqlite database" * 100)
    return path


def test_resume_without_an_interrupted_sweep_is_refused(tracked, monkeypatch, capsys):
    root, uri, _ = tracked
    monkeypatch.chdir(root)
    assert main(ear_xnli, ["--tracking-uri", uri, *FAST, "--resume"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert not (root / "ray_results").exists()


def test_gpu_packing_without_gpus_is_refused():
    with pytest.raises(ConfigError, match="--trials-per-gpu"):
        check_gpus_present(4, {"CPU": 2.0}, joined_cluster=False)
    with pytest.raises(ConfigError, match="--trials-per-gpu"):
        trial_resources(None, 0, {"CPU": 2.0, "GPU": 1.0})


@pytest.mark.parametrize(
    "content, words",
    [
        (
            "cluster_name: x\nmax_workers: many\nprovider: {type: aws, region: us-west-2}\n",
            ["field max_workers", "many"],
        ),
        (
            "cluster_name: x\nprovider: {type: aws, region: us-west-2}\nhead_node_type: nowhere\n"
            "available_node_types: {cpu: {resources: {}, node_config: {}}}\n",
            ["head_node_type"],
        ),
        ("cluster_name: [unclosed\n", ["not valid YAML"]),
        ("just a string\n", ["provider"]),
    ],
    ids=["wrong type", "unknown head node type", "not yaml", "no provider"],
)
def test_invalid_cluster_file_is_refused_naming_the_field(tmp_path, content, words):
    path = tmp_path / "cluster.yaml"
    path.write_text(content)
    with pytest.raises(DataError) as error:
        validate_cluster_file(path)
    assert str(path) in str(error.value) and all(word in str(error.value) for word in words), str(
        error.value
    )
    with pytest.raises(DataError, match="no such cluster file"):
        validate_cluster_file(tmp_path / "missing.yaml")


def test_nothing_already_tracked_is_lost(tracked):
    """Runs after the whole catalogue (file order): the earlier run is intact, nothing was added."""
    _, uri, run_id = tracked
    client = MlflowClient(uri)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.metrics["dev/en/accuracy"] == 0.5
    experiment = client.get_experiment_by_name("ear_xnli")
    assert [r.info.run_id for r in client.search_runs([experiment.experiment_id])] == [run_id]


def test_resume_on_a_missing_store_is_refused_and_creates_nothing(tmp_path, capsys):
    database = tmp_path / "mlflow.db"
    assert main(ear_xnli, ["--tracking-uri", f"sqlite:///{database}", *FAST, "--resume"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert not database.exists()
