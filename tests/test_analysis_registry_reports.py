"""The full report on fake sweeps: generalized pairs, mixed split, NER counts, a second
reference, published rows, PNG plots, LaTeX, and the model registry (sqlite store)."""

import json
from pathlib import Path

import mlflow
import numpy as np
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric, Param

from analysis.collect import (
    ExampleScores,
    collect_trials,
    example_artifact,
    metric_splits,
    parse_metric_key,
    split_languages,
)
from analysis.registry import best_seed_run, register_champion
from analysis.report import report_sweep
from analysis.select import compare_configs, resolve_config
from analysis.stats import entity_f1, permutation_test

SEEDS = (0, 1)
N = 200
# label -> (method, hyperparameters, probability of a correct answer per language)
CONFIGS = {
    "finetune": ("finetune", {}, 0.60),
    "adjusted": ("adjusted", {}, 0.66),
    "ear alpha=1 beta=0.1 layer=6": ("ear", {"alpha": "1", "beta": "0.1", "layer": "6"}, 0.78),
    "ear alpha=0.1 beta=1 layer=6": ("ear", {"alpha": "0.1", "beta": "1", "layer": "6"}, 0.62),
}
KEYS = (
    "dev/en",
    "test/en",
    "test/es",
    "test/de",
    "test/en-es",
    "test/es-en",
    "test/es-es",
    "mixed/es",
    "mixed/de",
)
FEW_KEYS = ("dev/en", "test/en", "test/es")  # for the sweeps that check one thing


def _make_sweep(
    root: Path,
    experiment: str,
    significance_test: str,
    with_counts: bool,
    model_for: str | None,
    keys: tuple[str, ...] = KEYS,
):
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.create_experiment(
        experiment, artifact_location=(root / experiment).as_uri()
    )
    parent = client.create_run(experiment_id, tags={"xlt.role": "parent"}).info.run_id
    client.log_batch(
        parent,
        params=[
            Param("significance_test", significance_test),
            Param("base.task", "xnli"),
            Param("base.model", "tiny"),
        ],
    )
    rng = np.random.default_rng(0)
    difficulty = {key: rng.beta(2, 2, size=N) for key in keys}
    stored = {}
    for label, (method, params, skill) in CONFIGS.items():
        for seed in SEEDS:
            run = client.create_run(
                experiment_id,
                tags={
                    "mlflow.parentRunId": parent,
                    "xlt.role": "trial",
                    "method": method,
                    "config_key": label.replace(" ", "_"),
                    "config_label": label,
                },
            )
            run_id = run.info.run_id
            metrics = []
            for key in keys:
                split, lang = key.split("/")
                chance = np.clip(difficulty[key] + skill - 0.5, 0, 1)
                scores = (rng.uniform(size=N) < chance).astype(float)
                payload = {
                    "split": split,
                    "lang": lang,
                    "metric": "accuracy",
                    "scores": scores.tolist(),
                }
                value = scores.mean()
                if with_counts:
                    tp = rng.binomial(2, chance)
                    fp = rng.binomial(1, 0.3, size=N)
                    counts = np.stack([tp, fp, 2 - tp], axis=1)
                    payload.update(metric="f1", counts=counts.tolist())
                    value = float(entity_f1(counts.sum(axis=0)))
                stored[label, seed, split, lang] = payload
                metrics.append(Metric(f"{key}/{payload['metric']}", value, 0, 0))
                client.log_dict(run_id, payload, example_artifact(split, lang))
            all_params = {
                "method": method,
                "seed": str(seed),
                "epsilon": "none",
                "m": "1",
                **{axis: params.get(axis, "none") for axis in ("alpha", "beta", "layer")},
            }
            client.log_batch(
                run_id, metrics=metrics, params=[Param(k, v) for k, v in all_params.items()]
            )
            if label == model_for:
                model_dir = root / f"{experiment}-model-{seed}"
                model_dir.mkdir()
                (model_dir / "config.json").write_text(json.dumps({"seed": seed}))
                client.log_artifacts(run_id, str(model_dir), "model")
            client.set_terminated(run_id)
    client.set_terminated(parent)
    return uri, client, parent, stored


BEST = "ear alpha=1 beta=0.1 layer=6"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """One sqlite store for every fake sweep here: creating a store's tables takes seconds."""
    return tmp_path_factory.mktemp("store")


@pytest.fixture(scope="module")
def accuracy_sweep(store):
    return _make_sweep(store, "ear_xnli", "ttest", False, BEST)


def test_metric_keys_with_pairs_and_mixed_split_parse():
    assert parse_metric_key("test/en-es/accuracy") == ("test", "en-es", "accuracy")
    assert parse_metric_key("mixed/es/accuracy") == ("mixed", "es", "accuracy")
    assert parse_metric_key("test/es/exact_match") == ("test", "es", "exact_match")
    assert parse_metric_key("train/loss") is None
    assert example_artifact("test", "en-es") == "predictions/test-en-es.json"


def test_collect_separates_languages_pairs_and_splits(accuracy_sweep):
    uri, client, parent, _ = accuracy_sweep
    trials = collect_trials(client, parent)
    assert metric_splits(trials) == ["dev", "test", "mixed"]
    assert split_languages(trials, "test") == ["en", "de", "es"]
    assert split_languages(trials, "test", pairs=True) == ["en-es", "es-en", "es-es"]
    assert split_languages(trials, "mixed") == ["de", "es"]


def test_reference_is_resolved_by_method_label_or_key(accuracy_sweep):
    _, client, parent, _ = accuracy_sweep
    trials = collect_trials(client, parent)
    assert resolve_config(trials, "adjusted") == "adjusted"
    assert resolve_config(trials, "ear alpha=0.1 beta=1 layer=6") == "ear_alpha=0.1_beta=1_layer=6"
    with pytest.raises(ValueError, match="several configurations"):
        resolve_config(trials, "ear")
    with pytest.raises(ValueError, match="matches no finished configuration"):
        resolve_config(trials, "nope")


def test_full_report_writes_tables_plots_and_registers_the_best_seed(accuracy_sweep, tmp_path):
    uri, client, parent, _ = accuracy_sweep
    report = report_sweep(uri, "ear_xnli", out_dir=str(tmp_path), reference="adjusted")
    out = {path.name for path in tmp_path.iterdir()}
    assert {
        "report.md",
        "report.tex",
        "selected_config.json",
        "gains_test.png",
        "gains_mixed.png",
        "transfer_heatmap.png",
        "hyperparameter_response.png",
    } <= out
    for name in out:
        if name.endswith(".png"):
            assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    logged = {info.path for info in client.list_artifacts(parent, "report")}
    assert {f"report/{name}" for name in out} == logged

    markdown = report.markdown
    assert report.selection.config_label == BEST
    assert "## Selected configuration vs baseline (mixed)" in markdown
    # The best config is ~18 points above the baseline and ~12 above the reference on
    # 200 examples x 2 seeds: both marks on every single-language test cell.
    table = markdown.split("### test accuracy (%)")[1].split("###")[0]
    best_row = next(line for line in table.splitlines() if BEST in line)
    assert best_row.count("***") == 3  # en, de, es cells carry * and **
    assert "| ours: finetune (baseline) |" in table
    assert "(reference)" in table
    latex = (tmp_path / "report.tex").read_text()
    assert r"\begin{tabular}{lrrrr}" in latex and "$^{***}$" in latex

    # The champion is the best seed's run by dev/en/accuracy; its model folder resolves.
    trials = collect_trials(client, parent)
    champion = best_seed_run(trials, report.selection.config_key, "dev/en/accuracy")
    assert report.registration.registered and report.registration.run_id == champion
    version = client.get_model_version_by_alias("ear_xnli", "champion")
    assert version.run_id == champion
    local = mlflow.artifacts.download_artifacts(
        artifact_uri=version.source, dst_path=str(tmp_path / "dl")
    )
    seed = int(trials.loc[trials["run_id"] == champion, "seed"].iloc[0])
    assert json.loads((Path(local) / "config.json").read_text()) == {"seed": seed}
    assert "models:/ear_xnli@champion" in markdown

    payload = json.loads((tmp_path / "selected_config.json").read_text())
    assert payload["registered_model"]["version"] == str(version.version)
    assert {row["lang"] for row in payload["test_comparison"]} == {"en", "de", "es"}
    assert payload["significance_test"] == "ttest"

    # A second report registers a second version and moves the alias.
    again = report_sweep(uri, "ear_xnli", out_dir=str(tmp_path / "again"))
    assert again.registration.version == "2"
    assert str(client.get_model_version_by_alias("ear_xnli", "champion").version) == "2"


def test_missing_model_is_reported_not_registered(store, tmp_path):
    uri, client, parent, _ = _make_sweep(store, "no_models", "ttest", False, None, FEW_KEYS)
    report = report_sweep(uri, "no_models", out_dir=str(tmp_path / "out"))
    assert not report.registration.registered
    assert "**No model registered.**" in report.markdown
    assert "log_models=true" in report.markdown
    assert client.search_registered_models(filter_string="name = 'no_models'") == []
    outcome = register_champion(client, report.selection.run_ids[0], "no_models")
    assert not outcome.registered


def test_permutation_sweep_tests_entity_f1_on_counts(store, tmp_path):
    uri, client, parent, stored = _make_sweep(
        store, "adjust_ner", "permutation", True, None, FEW_KEYS
    )
    trials = collect_trials(client, parent)
    table = compare_configs(
        ExampleScores(client), trials, BEST.replace(" ", "_"), "finetune", test="permutation"
    )
    row = table.set_index("lang").loc["es"]
    system = np.array([stored[BEST, seed, "test", "es"]["counts"] for seed in SEEDS])
    baseline = np.array([stored["finetune", seed, "test", "es"]["counts"] for seed in SEEDS])
    expected = permutation_test(system, baseline, statistic=entity_f1)
    assert row["metric"] == "f1"
    assert row["mean_difference"] == pytest.approx(expected.mean_difference, abs=1e-12)
    assert row["p_value"] == pytest.approx(expected.p_value, abs=1e-12)
    # the reported means are the pooled entity F1s the test compares
    assert row["system_mean"] == pytest.approx(entity_f1(system.sum(axis=(0, 1))), abs=1e-12)
    assert row["system_mean"] - row["reference_mean"] == pytest.approx(
        expected.mean_difference, abs=1e-12
    )
    report = report_sweep(uri, "adjust_ner", out_dir=str(tmp_path / "out"), register=False)
    assert report.significance_test == "permutation"
    assert "### test f1 (%)" in report.markdown


def test_published_rows_appear_where_task_and_model_match(accuracy_sweep, tmp_path):
    uri, _, _, _ = accuracy_sweep
    results = tmp_path / "published.json"
    results.write_text(
        json.dumps(
            {
                "papers": {"demo": "A test fixture, not a paper."},
                "results": [
                    {
                        "paper": "demo",
                        "table": "Table 1",
                        "task": "xnli",
                        "model": "tiny",
                        "method": "finetune",
                        "split": "test",
                        "metric": "accuracy",
                        "scores": {"en": 81.0, "de": 70.0, "es": 74.0},
                    },
                    {
                        "paper": "demo",
                        "table": "Table 1",
                        "task": "xnli",
                        "model": "mbert",
                        "method": "finetune",
                        "split": "test",
                        "metric": "accuracy",
                        "scores": {"en": 1.0},
                    },
                ],
            }
        )
    )
    report = report_sweep(
        uri, "ear_xnli", out_dir=str(tmp_path / "out"), register=False, paper_results=results
    )
    assert "| paper: finetune (demo, Table 1) | 81.0 | 70.0 | 74.0 | 75.0 |" in report.markdown
    assert "| 1.0 |" not in report.markdown


def test_shipped_paper_results_file_is_well_formed():
    from analysis.papers import PAPER_RESULTS, load_paper_results

    content = json.loads(PAPER_RESULTS.read_text())
    assert set(content["papers"]) == {"huang2021", "ding2022", "efimov2023"}
    assert isinstance(load_paper_results(), list)


def test_sweep_cli_log_models_setting():
    from sweeps.cli import apply_overrides
    from sweeps.presets import PRESETS
    from xlt_core.errors import ConfigError

    assert PRESETS["ear_xnli"]("smoke", None).log_models is True
    paper = PRESETS["ear_xnli"]("paper", None)
    assert paper.log_models is False
    assert apply_overrides(paper, {"log_models": "true"}).log_models is True
    with pytest.raises(ConfigError, match="log_models"):
        apply_overrides(paper, {"log_models": "maybe"})
