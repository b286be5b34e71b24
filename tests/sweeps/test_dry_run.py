"""`--dry-run` (sweeps/planning/plan.py, sweeps/planning/cost_model.py): the plan of a sweep,
printed offline without Ray and without tracking, and its cost estimate checked against hand
computations."""

import dataclasses
import importlib
import json
import math
import subprocess
import sys

import pytest
from conftest import scaled_timeout
from sweep_helpers import REPO

from sweeps import adjust_xnli, ear_xnli
from sweeps.cli import main
from sweeps.planning import cost_model
from sweeps.planning.plan import format_plan
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.model_shapes import MODEL_SHAPES, model_shape
from sweeps.spec.paper_cards import load_card
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import METHODS, TASKS, TrialConfig

PAPER_COMMAND = [str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "paper", "--dry-run"]

# Run before the command: any connection attempt fails it, and at exit the heavy modules it
# imported are written to $LOADED_MODULES.
NO_NETWORK = """
import atexit, json, os, socket, sys

def _refuse(*args, **kwargs):
    raise OSError("network used during a dry run")

socket.socket.connect = _refuse
socket.create_connection = _refuse
atexit.register(
    lambda: open(os.environ["LOADED_MODULES"], "w").write(
        json.dumps([m for m in ("ray", "mlflow", "torch") if m in sys.modules])
    )
)
"""


def test_paper_dry_run_plans_90_trials_offline_and_tracks_nothing(tmp_path):
    workdir, hooks = tmp_path / "work", tmp_path / "hooks"
    workdir.mkdir()
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(NO_NETWORK)
    store = tmp_path / "store" / "mlflow.db"
    loaded = tmp_path / "modules.json"
    completed = subprocess.run(
        [sys.executable, *PAPER_COMMAND],
        cwd=workdir,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": f"{hooks}:{REPO}",
            "MLFLOW_TRACKING_URI": f"sqlite:///{store}",
            "LOADED_MODULES": str(loaded),
        },
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "18 configurations x 5 seeds = 90 trials" in out
    assert (
        "Confirmation: the configuration selected on dev and the baseline x 5 fresh seeds "
        "(6, 7, 8, 9, 10) = 10 trials" in out
    )
    assert "Trials: 100\n" in out
    assert "GPU-hours for 100 trials" in out
    assert "not measured on a GPU by this project" in out
    assert not store.exists() and not store.parent.exists()
    assert list(workdir.iterdir()) == []  # no mlflow.db, ray_results, cache
    assert json.loads(loaded.read_text()) == []  # neither Ray, MLflow nor torch loaded


def test_search_dry_run_shows_both_phases_and_their_budgets(capsys):
    argv = ["--preset", "paper", "--strategy", "search", "--dry-run"]
    assert main(ear_xnli, [*argv, "--set", "search_trials=6", "--set", "top_k=2"]) == 0
    out = capsys.readouterr().out
    assert "Phase 1 (search): 6 configurations sampled by Optuna TPE" in out
    assert "x 1 seed (1) = 6 trials" in out
    assert "Phase 2 (final): 1 baseline + top 2 of phase 1 = 3 configurations x 5 seeds" in out
    assert "Trials: 31 at most" in out
    # Phase 1's trials and the top 2 over 5 seeds are EAR, the baseline 5 fine-tuning trials;
    # the confirmation re-runs the baseline and the selected (costliest counted) on 5 more.
    rows = [line.split() for line in out.splitlines() if line.startswith("      ")]
    assert [(row[0], row[-1]) for row in rows] == [
        ("6", "choices"),
        ("5", "finetune"),
        ("10", "choices)"),
        ("5", "finetune"),
        ("5", "candidate)"),
    ]


def test_search_dry_run_of_an_adjustment_sweep_is_refused(capsys):
    assert main(adjust_xnli, ["--preset", "paper", "--strategy", "search", "--dry-run"]) == 2
    assert "use --strategy grid" in capsys.readouterr().err


def test_bad_setting_stops_the_dry_run(capsys):
    assert main(ear_xnli, ["--preset", "paper", "--dry-run", "--set", "beta=-1"]) == 2
    assert "beta" in capsys.readouterr().err


def test_resources_per_trial_are_shown():
    spec = experiment_spec(ear_xnli, "paper", None)
    assert "Resources per trial: 0.25 GPU (1/4), the cluster's CPUs per GPU / 4" in format_plan(
        spec, 4
    )
    spec = dataclasses.replace(spec, cpus_per_trial=2.0)
    assert "Resources per trial: 2 CPU, no GPU" in format_plan(spec, None)


MBERT_BODY = 12 * (4 * (768 * 768 + 768) + 2 * 768 * 3072 + 3072 + 768 + 4 * 768) + 768 * 768 + 768


def test_mbert_parameter_counts():
    shape = MODEL_SHAPES["bert-base-multilingual-cased"]
    assert shape.body_params == MBERT_BODY == 85_645_056
    # BertModel of bert-base-multilingual-cased: 177,853,440 parameters.
    assert shape.params == 177_853_440


def _paper_trial(**point) -> TrialConfig:
    spec = experiment_spec(ear_xnli, "paper", None)
    return trial_config(spec.base, point, 1)


def test_finetune_estimate_by_hand():
    """mBERT fine-tuning on MultiNLI, 1 epoch (ding2022's), 4 evaluations per epoch, 15
    languages."""
    config = _paper_trial(method="finetune")
    trial = cost_model.estimate_trial(
        config, MODEL_SHAPES[config.model], cost_model.TASK_DATA["xnli"].train
    )
    # examples x epochs x typical length x padding (random batches, as the released code)
    tokens = 392_702 * 1 * 39.4 * 1.75
    evaluated = 2_490 * (1 * 4 + 1) + 5_010 * 15  # English dev 5 times, test in 15 languages
    flops = 6 * MBERT_BODY * tokens + 2 * MBERT_BODY * evaluated * 39.4 * 1.03
    assert trial.train_tokens == pytest.approx(tokens)
    assert trial.flops == pytest.approx(flops)
    assert trial.gpu_hours == pytest.approx(flops / (312e12 * 0.4) / 3600)
    assert trial.gpu_hours == pytest.approx(0.0323, abs=5e-4)
    # 16 bytes per parameter + 12 layers x s*b*h*(34 + 5*a*s/h), s=128, b=32, h=768, a=12.
    activations = 12 * 128 * 32 * 768 * (34 + 5 * 12 * 128 / 768)
    assert trial.peak_bytes == pytest.approx(16 * 177_853_440 + activations)


def test_objective_costs_by_hand():
    shape, examples = MODEL_SHAPES["bert-base-multilingual-cased"], 1000

    def training_flops(**point):
        config = _paper_trial(**point, max_eval_examples=1)
        trial = cost_model.estimate_trial(config, shape, examples)
        evaluated = 1 * 5 + 1 * 15
        return trial.flops - 2 * MBERT_BODY * evaluated * 39.4 * 1.03

    finetune = training_flops(method="finetune")
    assert finetune == pytest.approx(6 * MBERT_BODY * 1000 * 1 * 39.4 * 1.75)
    assert training_flops(method="ear", m=1) == pytest.approx(1.66 * finetune)
    assert training_flops(method="ear", m=3) == pytest.approx(3 * 1.66 * finetune)
    assert training_flops(method="adv", adv_steps=3) == pytest.approx((1 + 3 * 0.52) * finetune)
    assert training_flops(method="rs_da", m=3) == pytest.approx(3 * finetune)
    keep = training_flops(method="rs_da", m=3, rs_da_variant="keep_originals")
    assert keep == pytest.approx(4 * finetune)
    grouped_batches = training_flops(method="finetune", group_by_length=True)
    assert grouped_batches == pytest.approx(finetune * 1.03 / 1.75)


def test_adjustment_stage_by_hand():
    settings = adjust_xnli.trial_settings("paper", None)  # 4 targets, 30,000 pairs each
    adjusted = TrialConfig.from_dict({**settings, **adjust_xnli.POINTS["paper"][1], "seed": 1})
    continual = TrialConfig.from_dict({**settings, **adjust_xnli.POINTS["paper"][2], "seed": 1})
    # Pairs x tokens per sentence (8.32 words x 39.4 / 33.85) x 14 FLOPs per parameter-token.
    per_pair = 8.32 * (39.4 / 33.85) * 14 * MBERT_BODY
    stage = 4 * 30_000 * 1.0 * per_pair
    assert cost_model.adaptation_flops(adjusted, MBERT_BODY, 100) == pytest.approx(stage)
    # Continual alignment: 16 pairs at each of the 100 training steps on top.
    assert cost_model.adaptation_flops(continual, MBERT_BODY, 100) == pytest.approx(
        stage + 100 * 16 * per_pair
    )


def test_local_model_directory_is_read_without_network(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "num_hidden_layers": 12,
                "hidden_size": 768,
                "num_attention_heads": 12,
                "intermediate_size": 3072,
                "vocab_size": 119_547,
                "max_position_embeddings": 512,
                "type_vocab_size": 2,
            }
        )
    )
    config = _paper_trial(method="finetune", model=str(tmp_path))
    assert model_shape(config) == MODEL_SHAPES["bert-base-multilingual-cased"]


def test_unknown_model_gets_no_estimate():
    spec = experiment_spec(ear_xnli, "paper", None)
    spec = dataclasses.replace(spec, base={**spec.base, "model": "someone/unknown-model"})
    plan = format_plan(spec, None)
    assert "Trials: 100" in plan
    assert "Estimate: none for model someone/unknown-model" in plan


def test_every_method_and_task_has_a_cost():
    for method in METHODS:
        config = _paper_trial(method=method)
        assert cost_model.step_cost(config) >= 1.0, method
    assert set(TASKS) == set(cost_model.TASK_DATA)
    assert math.isclose(
        cost_model.TASK_DATA["xnli"].words * cost_model.TOKENS_PER_WORD, 39.4
    )  # XNLI's measured typical length


# The papers' other experiments (issue 14): baseline + the published variants, over the
# card's seeds (ding2022's presets: 5, a declared departure; huang2021: its 10).
PAPER_PLANS = {
    "ear_ablation": 5,  # finetune, EAR, -EPT, -APT, -EPT -APT (ding2022 Table 3)
    "ear_targets": 6,  # finetune, EPT+APT, NT+APT at 3 noise scales, EPT+SRPT (Tables 4, A.4)
    "ear_dictionary_scale": 5,  # finetune, EAR at 1.0 / 0.75 / 0.5 / 0.25 (Table 6)
    "ear_source_language": 4,  # finetune, EAR from en / de / ru (Table 5)
    "rs_syntax": 3,  # finetune, RS-DA, RS-syntax (huang2021 Table 3)
    "rs_da_m_curve": 7,  # finetune, RS-DA at m = 1, 3, 5, 10, 15, 20 (Fig. 3)
}
PAPER_SEEDS = {"rs_syntax": 10, "rs_da_m_curve": 10}  # huang2021 L144; the others 5


@pytest.mark.parametrize("script", sorted(PAPER_PLANS))
def test_the_papers_other_experiments_state_their_trial_counts(script, capsys):
    module = importlib.import_module(f"sweeps.{script}")
    assert main(module, ["--preset", "paper", "--dry-run"]) == 0
    configurations, seeds = PAPER_PLANS[script], PAPER_SEEDS.get(script, 5)
    out = capsys.readouterr().out
    trials = seeds * configurations
    assert f"{configurations} configurations x {seeds} seeds = {trials} trials" in out
    # and the confirmation phase: the selected configuration and the baseline on fresh seeds
    assert f"Trials: {trials + 2 * seeds}\n" in out


PAPER_SCRIPTS = (
    "ear_xnli",
    "ear_pawsx",
    "ear_ablation",
    "ear_targets",
    "ear_dictionary_scale",
    "ear_source_language",
    "robust_xnli",
    "robust_pawsx",
    "rs_syntax",
    "rs_da_m_curve",
)
# Every paper preset (`paper`, `paper-xlmr`) of the ding2022 and huang2021 scripts.
PAPER_PRESETS = [
    (script, preset)
    for script in PAPER_SCRIPTS
    for preset in importlib.import_module(f"sweeps.{script}").POINTS
    if preset != "smoke"
]


def test_the_paper_scripts_are_every_ding2022_and_huang2021_script():
    scripts = [
        path.stem for path in (REPO / "sweeps").glob("*.py") if "\nPAPER = " in path.read_text()
    ]
    cards = {
        script
        for script in scripts
        if importlib.import_module(f"sweeps.{script}").PAPER in ("ding2022", "huang2021")
    }
    assert cards == set(PAPER_SCRIPTS)


@pytest.mark.parametrize(("script", "preset"), PAPER_PRESETS)
def test_every_ding2022_and_huang2021_dry_run_lists_its_languages(script, preset):
    """The languages line names the card's target languages in the card's order, after the
    source; a `--set target_langs=...` shows in it too."""
    module = importlib.import_module(f"sweeps.{script}")
    spec = experiment_spec(module, preset, None)
    card_targets = load_card(module.PAPER).trial_settings(script, preset)["target_langs"]
    (line,) = [line for line in format_plan(spec, None).splitlines() if "Languages:" in line]
    sources = ", ".join(dict.fromkeys(config.source_lang for config in spec.configs()))
    assert line.startswith(
        f"Languages: source {sources} (training); targets ({len(card_targets)}, zero-shot): "
        f"{', '.join(card_targets)}"
    ), line


def test_the_languages_line_follows_set(capsys):
    argv = ["--preset", "paper", "--dry-run", "--set", "target_langs=de,sw"]
    assert main(ear_xnli, argv) == 0
    assert "Languages: source en (training); targets (2, zero-shot): de, sw\n" in (
        capsys.readouterr().out
    )
