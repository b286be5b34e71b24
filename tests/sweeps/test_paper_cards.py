"""Paper cards (sweeps/spec/paper_cards.py, sweeps/papers/*.yaml): the loader refuses a bad card
naming the file, the key and what is allowed; every trial of every ding2022 paper preset
holds what the card says; the dry run prints the card's departures, the sweep logs them on
its parent run and the report renders them beside the reproduction view; the `precision`
setting turns bf16 autocast off."""

import dataclasses
import importlib
import subprocess
import sys

import pytest
import torch
from conftest import scaled_timeout
from fake_sweeps import log_scored_trial, trial_tags
from mlflow import MlflowClient
from mlflow.entities import Param
from paper_card_checks import PAPER_TEXTS, misquoted, preset_mismatches, spec_mismatches
from sweep_helpers import REPO
from tiny_models import tiny_pair_classifier
from tracking_stores import tracking_store

from analysis.report import report_sweep
from analysis.sweep_records import read_departures
from sweeps import ear_xnli
from sweeps.cli import apply_overrides
from sweeps.planning.plan import format_plan
from sweeps.records.tracking import log_departures
from sweeps.running.runner import SweepOptions, _start_parent
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.paper_cards import load_card
from sweeps.spec.trial_contract import trial_config
from xlt_core import train
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError
from xlt_core.objectives.finetune import FineTune
from xlt_core.precision import autocast
from xlt_core.preflight import check_supported
from xlt_core.tasks import pair_encoding_and_scoring
from xlt_core.tasks.pair_encoding_and_scoring import EncodedPairs, PairTrainingSet
from xlt_schema import PAPER_TAG, PARENT_ROLE, ROLE_TAG

DING = load_card("ding2022")
# Every ding2022 sweep script and its card presets.
DING_PRESETS = [
    ("ear_xnli", "paper"),
    ("ear_xnli", "paper-xlmr"),
    ("ear_pawsx", "paper"),
    ("ear_pawsx", "paper-xlmr"),
    ("ear_ablation", "paper"),
    ("ear_targets", "paper"),
    ("ear_targets", "paper-xlmr"),
    ("ear_dictionary_scale", "paper"),
    ("ear_source_language", "paper"),
]

# A card every loader test starts from; each bad card below changes one line of it.
GOOD_CARD = """\
paper: card
citation: "A. Author 2022, A Paper"
text: card.txt
seeds: {value: [7], source: 'L1: "one seed"'}
settings:
  learning_rate:
    value: 2.0e-5
    source: 'L2: "lr 2e-5"'
    released: {value: 3.0e-5, source: 'a/b@abcdef0 run.sh:3: "LR=3e-5"'}
  precision: {value: fp32, source: 'released code'}
experiments:
  ear_xnli:
    settings:
      m: {value: 3, source: 'L3: "3 copies"'}
presets:
  paper-xlmr:
    experiments: [ear_xnli]
    settings:
      model: {value: xlm-roberta-base, source: 'L4: "XLM-R"'}
  released:
    code: a/b@abcdef0
departures:
  - setting: precision
    paper: fp32
    ours: bf16
    reason: faster
  - setting: seeds
    paper: one run
    ours: [1, 2]
    reason: a t-test needs seeds
  - setting: word aligner
    paper: fast_align
    reason: eflomal is packaged
"""


def _card(tmp_path, old: str = "", new: str = ""):
    assert old in GOOD_CARD
    (tmp_path / "card.yaml").write_text(GOOD_CARD.replace(old, new, 1), encoding="utf-8")
    return load_card("card", tmp_path)


def test_a_good_card_gives_trial_settings_points_seeds_and_departures(tmp_path):
    card = _card(tmp_path)
    assert card.trial_settings("ear_xnli") == {"learning_rate": 2e-5, "precision": "bf16"}
    assert card.point_settings("ear_xnli") == {"m": 3}
    assert card.seeds("ear_xnli") == [1, 2]
    assert card.settings("ear_xnli")["precision"].value == "fp32"  # the paper's, with source
    assert [d.setting for d in card.departures("ear_xnli")] == [
        "precision",
        "seeds",
        "word aligner",
    ]
    assert card.trial_settings("ear_xnli", "paper-xlmr")["model"] == "xlm-roberta-base"
    # the released code's value, a departure of its preset only, with both sources
    assert card.trial_settings("ear_xnli", "released")["learning_rate"] == 3e-5
    (released, *declared) = card.departures("ear_xnli", "released")
    assert (released.setting, released.ours) == ("learning_rate", 3e-5)
    assert released.paper == '2e-05 (L2: "lr 2e-5")'
    assert released.reason == 'the released code: a/b@abcdef0 run.sh:3: "LR=3e-5"'
    assert [d.setting for d in declared] == ["precision", "seeds", "word aligner"]
    assert card.code("released") == "a/b@abcdef0" and card.code("paper") is None


BAD_CARDS = {
    "unknown setting": (
        "  learning_rate:\n    value",
        "  learnin_rate:\n    value",
        ["settings.learnin_rate", "a TrialConfig setting", "learning_rate"],
    ),
    "missing source": (
        "    source: 'L2: \"lr 2e-5\"'\n",
        "",
        ["settings.learning_rate.source", "a non-empty source"],
    ),
    "empty source": (
        "source: 'released code'",
        "source: ' '",
        ["settings.precision.source", "a non-empty source"],
    ),
    "bad value": ("value: 2.0e-5", "value: fast", ["settings.learning_rate", "a number"]),
    "unknown experiment": (
        "  ear_xnli:\n    settings",
        "  ear_xnlii:\n    settings",
        ["experiments", "ear_xnlii", "sweeps/<name>.py"],
    ),
    "departure without ours": (
        "    ours: bf16\n",
        "",
        ["departures[0].ours", "the value the trials get", "precision is a trial setting"],
    ),
    "departure without reason": (
        "    reason: faster\n",
        "",
        ["departures[0].reason", "a non-empty text"],
    ),
    "ours for no trial setting": (
        "    paper: fast_align\n",
        "    paper: fast_align\n    ours: eflomal\n",
        ["departures[2].setting", "a TrialConfig setting or seeds"],
    ),
    "departure for an unknown experiment": (
        "    reason: faster\n",
        "    reason: faster\n    experiments: [ear_pawsx]\n",
        ["departures[0].experiments", "ear_pawsx", "one of ear_xnli"],
    ),
    "preset of an unknown experiment": (
        "experiments: [ear_xnli]",
        "experiments: [adjust_qa]",
        ["presets.paper-xlmr.experiments", "adjust_qa"],
    ),
    "unknown key": ("settings:\n  learning", "setings:\n  learning", ["(top level)", "setings"]),
    "released value without a source": (
        """released: {value: 3.0e-5, source: 'a/b@abcdef0 run.sh:3: "LR=3e-5"'}""",
        "released: {value: 3.0e-5}",
        ["settings.learning_rate.released.source", "a non-empty source"],
    ),
    "released code without a commit": (
        "code: a/b@abcdef0",
        "code: a/b",
        ["presets.released.code", "owner/repository@commit"],
    ),
    "name other than the file's": ("paper: card", "paper: other", ["paper", "the file's name"]),
    "bad seeds": ("[7]", "[7, 7]", ["seeds", "distinct non-negative integers"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CARDS))
def test_a_bad_card_is_refused_naming_the_file_the_key_and_what_is_allowed(case, tmp_path):
    old, new, words = BAD_CARDS[case]
    with pytest.raises(ConfigError) as caught:
        _card(tmp_path, old, new)
    message = str(caught.value)
    assert str(tmp_path / "card.yaml") in message
    for word in words:
        assert word in message, (case, message)


def test_unknown_cards_experiments_and_presets_are_named(tmp_path):
    with pytest.raises(ConfigError, match="paper card.*'missing'.*one of ding2022"):
        load_card("missing")
    card = _card(tmp_path)
    with pytest.raises(ConfigError, match="'ear_pawsx': one of this card's experiments: ear_xnli"):
        card.trial_settings("ear_pawsx")
    with pytest.raises(ConfigError, match="'paper-big': one of this card's presets: paper, paper"):
        card.seeds("ear_xnli", "paper-big")


@pytest.mark.parametrize("script, preset", DING_PRESETS)
def test_every_trial_of_a_ding2022_preset_holds_the_cards_settings(script, preset):
    module = importlib.import_module(f"sweeps.{script}")
    assert module.PAPER == "ding2022"
    assert preset_mismatches(module, preset) == []
    spec = experiment_spec(module, preset, None)
    assert spec.departures() == DING.departures(script, preset)
    # What the card holds is what the paper says (L1725, L1740), read back by hand.
    trial = trial_config(spec.base, spec.points[-1], 1)
    budget = (trial.epochs, trial.learning_rate, trial.batch_size, trial.max_seq_length)
    assert budget == (1.0, 2e-5, 32, 128)
    assert (trial.warmup_ratio, trial.precision) == (0.0, "bf16")  # precision: a departure
    assert trial.model == ("xlm-roberta-base" if preset == "paper-xlmr" else MBERT)
    # The augmentation files of huang2021 (L1725), written by a look-up of each word as
    # written, and the released code's random batches.
    assert (trial.synonym_lookup, trial.group_by_length) == ("exact", False)
    copies = {
        trial.objective.m
        for p in spec.points
        if p["method"] != "finetune"
        for trial in [_trial(spec, p)]
    }
    assert copies == {10 if script == "ear_pawsx" else 3}
    assert spec.seeds == [1, 2, 3, 4, 5]


MBERT = "bert-base-multilingual-cased"


def _trial(spec, point) -> TrialConfig:
    return trial_config(spec.base, point, spec.seeds[0])


def test_the_check_fails_when_a_trial_leaves_the_card():
    spec = experiment_spec(ear_xnli, "paper", None)
    points = [*spec.points]
    points[1] = {**points[1], "m": 1}
    spec = dataclasses.replace(spec, base={**spec.base, "epochs": 2.0}, points=points)
    found = spec_mismatches(spec, DING)
    assert any("epochs=2.0, card 1.0" in line for line in found)
    assert any("m=1, card 3" in line for line in found)
    spec = dataclasses.replace(spec, seeds=[1])
    assert spec_mismatches(spec, DING)[0].startswith("seeds [1]")


def test_the_xlmr_presets_are_table_1_2_and_a4_rows():
    labels = [
        _trial(experiment_spec(ear_xnli, "paper-xlmr", None), p).config_label()
        for p in ear_xnli.POINTS["paper-xlmr"]
    ]
    assert labels == [
        "finetune",
        "rs_da m=3 rs_da_variant=released",
        "ear alpha=1 beta=0.1 layer=6 m=3",
    ]
    ablation = importlib.import_module("sweeps.ear_ablation")
    with pytest.raises(ConfigError, match="--preset.*one of this sweep's presets: smoke, paper"):
        experiment_spec(ablation, "paper-xlmr", None)


@pytest.mark.skipif(not PAPER_TEXTS.is_dir(), reason="the paper texts (shared/papers) are absent")
def test_every_quote_of_the_ding2022_card_is_on_its_line_of_the_paper():
    assert misquoted(DING) == []


def test_paper_dry_run_prints_m3_one_epoch_and_the_departures():
    completed = subprocess.run(
        [sys.executable, str(REPO / "sweeps" / "ear_xnli.py"), "--preset", "paper", "--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "ear alpha=1 beta=0.1 layer=6 m=3" in out
    assert "m=1" not in out
    assert "Training (every trial): model=bert-base-multilingual-cased epochs=1 " in out
    assert "Paper card: ding2022 (sweeps/papers/ding2022.yaml)" in out
    assert f"Departures from {DING.citation}: 8\n" in out
    for departure in DING.departures("ear_xnli"):
        assert f"  - {departure.setting}: {departure.paper} -> " in out
    assert "  - precision: fp32 -> bf16; why: " in out


def test_set_overrides_show_as_departures_and_take_back_the_cards():
    spec = experiment_spec(ear_xnli, "paper", None)
    spec = apply_overrides(spec, {"precision": "fp32", "epochs": "2", "m": "1", "seeds": "1,2"})
    found = {d.setting: d for d in spec.departures()}
    assert "precision" not in found  # back at the paper's fp32
    assert (found["epochs"].paper, found["epochs"].ours) == ("1", 2.0)
    assert found["epochs"].reason == "--set on the command line"
    assert (found["m"].paper, found["m"].ours) == ("3", 1)
    assert found["seeds"].ours == [1, 2]
    assert found["seeds"].reason.startswith(
        "--set on the command line (the card's choice, 1,2,3,4,5: "
    )
    plan = format_plan(spec, None)
    assert "  - epochs: 1 -> 2; why: --set on the command line" in plan
    assert "precision=fp32 (the GPU-hours below assume bf16" in plan


def test_the_xlmr_rs_da_budget_is_declared_where_it_leaves_huang2021s():
    """ding2022 L1740: "other models are trained following Hu et al. 2020 and Huang et al.
    2021"; the "+RS-DA*" row trains with EAR's budget instead, declared for the XLM-R presets
    that have it, and looks words up as the released perturb.py does."""
    for script in ("ear_xnli", "ear_pawsx"):
        module = importlib.import_module(f"sweeps.{script}")
        spec = experiment_spec(module, "paper-xlmr", None)
        budget = [d for d in spec.departures() if d.setting == "RS-DA* training budget"]
        assert len(budget) == 1 and "L1740" in budget[0].paper
        assert 'train_pawsx.sh:27 "EPOCH=3"' in budget[0].paper
        rs_da = _trial(spec, next(p for p in spec.points if p["method"] == "rs_da"))
        assert (rs_da.epochs, rs_da.synonym_lookup) == (1.0, "exact")
    mbert = experiment_spec(ear_xnli, "paper", None).departures()
    assert "RS-DA* training budget" not in {d.setting for d in mbert}  # no RS-DA point there


def test_apt_padding_and_ept_averaging_are_declared():
    found = {d.setting: d for d in DING.departures("ear_xnli")}
    assert "pads every example to max_seq_length, 128" in found["APT padding"].paper
    assert "batch's longest sequence" in found["APT padding"].reason
    assert "L395" in found["EPT over hidden units"].paper
    assert "768" in found["EPT over hidden units"].reason


# --- strategy search on a paper preset keeps the card's hyperparameters ----------------------


@pytest.mark.parametrize("script, m", [("ear_xnli", 3), ("ear_pawsx", 10)])
def test_a_paper_presets_search_keeps_the_cards_m(script, m):
    from sweeps.planning import search_space

    module = importlib.import_module(f"sweeps.{script}")
    spec = experiment_spec(module, "paper", None)
    assert search_space.search_ranges(spec, fits=check_supported)["ear"]["m"] == ("choice", (m,))
    assert spec.departures() == DING.departures(script)  # nothing undeclared
    # The smoke preset has no card: its search stays at one copy.
    smoke = experiment_spec(module, "smoke", None)
    assert search_space.search_ranges(smoke, fits=check_supported)["ear"]["m"] == ("choice", (1,))
    # --set wins, and is then a departure.
    changed = apply_overrides(spec, {"m": "1"})
    assert search_space.search_ranges(changed, fits=check_supported)["ear"]["m"] == ("choice", (1,))
    assert [(d.paper, d.ours) for d in changed.departures() if d.setting == "m"] == [(str(m), 1)]


@pytest.mark.slow
def test_the_paper_search_dry_run_plans_m3():
    completed = subprocess.run(
        [sys.executable, "sweeps/ear_xnli.py", "--preset", "paper", "--strategy", "search"]
        + ["--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert completed.returncode == 0, completed.stderr
    assert "layer in {3, 6, 9, 12}, m in {3}; fixed by the paper card or --set: m=3)" in (
        completed.stdout
    )
    assert "m in {1}" not in completed.stdout and "  - m: " not in completed.stdout


def test_smoke_presets_have_no_card():
    spec = experiment_spec(ear_xnli, "smoke", None)
    assert spec.paper_card is None and spec.departures() == []
    assert "Departures" not in format_plan(spec, None)


# --- the departures on the parent run and in the report ------------------------------------


def test_the_parent_run_holds_the_card_and_the_departures_the_sweep_makes(tmp_path):
    uri = tracking_store(tmp_path)
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.create_experiment("ear_xnli", (tmp_path / "a").as_uri())
    spec = apply_overrides(experiment_spec(ear_xnli, "paper", None), {"precision": "fp32"})
    options = SweepOptions(tracking_uri=uri)
    parent_id, _ = _start_parent(client, experiment_id, spec, options, "key")
    parent = client.get_run(parent_id)
    assert parent.data.tags[PAPER_TAG] == "ding2022"
    logged = read_departures(client, parent)
    assert (logged["paper"], logged["citation"]) == ("ding2022", DING.citation)
    assert logged["departures"] == [d.to_dict() for d in spec.departures()]
    assert "precision" not in {d["setting"] for d in logged["departures"]}  # --set took it back
    assert {
        "setting": "seeds",
        "paper": DING.departures("ear_xnli")[0].paper,
        "ours": [1, 2, 3, 4, 5],
        "reason": DING.departures("ear_xnli")[0].reason,
    } in logged["departures"]
    smoke = experiment_spec(ear_xnli, "smoke", None)
    smoke_id, _ = _start_parent(client, experiment_id, smoke, options, "smoke-key")
    assert read_departures(client, client.get_run(smoke_id)) is None


def _fake_sweep(root, departures: bool, model: str = MBERT) -> str:
    """A finished two-configuration XNLI sweep of `model`; with `departures` its parent run
    is tagged and holds the card's departures as a paper preset's sweep logs them."""
    uri = tracking_store(root)
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.create_experiment("ear_xnli", artifact_location=(root / "a").as_uri())
    tags = {ROLE_TAG: PARENT_ROLE, **({PAPER_TAG: "ding2022"} if departures else {})}
    parent = client.create_run(experiment_id, tags=tags).info.run_id
    if departures:
        log_departures(client, parent, DING, DING.departures("ear_xnli"))
    params = [Param("significance_test", "ttest"), Param("base.task", "xnli")]
    client.log_batch(parent, params=[*params, Param("base.model", model)])
    configs = {
        "finetune": ("finetune", {}, 80),
        "ear alpha=1 beta=0.1 layer=6 m=3": ("ear", {}, 84),
    }
    for label, (method, hyper, correct) in configs.items():
        for seed in (1, 2):
            value = correct + seed
            keys = ("dev/en", "test/en", "test/es")
            scores = {key: [1.0] * value + [0.0] * (100 - value) for key in keys}
            # XTREME's 5 epochs: the baseline is the papers' baselines' like (a row meets only
            # its own budget, analysis.papers.budget_difference)
            run_params = {
                "method": method,
                "seed": str(seed),
                "task": "xnli",
                "model": model,
                "epochs": "5.0",
            }
            tags = trial_tags(parent, label, method)
            log_scored_trial(client, experiment_id, tags, scores, run_params)
    client.set_terminated(parent)
    return uri


def test_report_renders_the_departures_beside_the_reproduction_view(tmp_path):
    uri = _fake_sweep(tmp_path, departures=True)
    report = report_sweep(uri, "ear_xnli", out_dir=str(tmp_path / "out"), register=False)
    text = report.markdown
    assert "## Departures from the paper" in text
    assert f"departs from {DING.citation} in 8 setting(s)" in text
    assert "- **precision**: paper fp32; ours bf16; why: bf16 autocast" in text
    assert (
        "- **seeds**: paper one run per cell (the released scripts' --seed 7); "
        "ours 1,2,3,4,5; why: " in text
    )
    reproduction = text.index("## Reproduction of published results")
    pointer = text.index(
        "Verdicts above/below the paper may reflect these departures from it: seeds"
    )
    assert text.index("## Departures from the paper") < reproduction < pointer
    assert pointer < text.index("###", reproduction)  # under the heading, before the tables


def test_an_xlmr_sweep_is_compared_with_the_papers_xlmr_rows(tmp_path):
    uri = _fake_sweep(tmp_path, departures=True, model="xlm-roberta-base")
    report = report_sweep(uri, "ear_xnli", out_dir=str(tmp_path / "out"), register=False)
    assert "### Baseline `finetune` vs ding2022 Table 1 (`finetune`), test accuracy" in (
        report.markdown
    )
    assert "No published result matches" not in report.markdown


def test_report_of_a_sweep_without_a_card_has_no_departures(tmp_path):
    uri = _fake_sweep(tmp_path, departures=False)
    report = report_sweep(uri, "ear_xnli", out_dir=str(tmp_path / "out"), register=False)
    assert "Departures from the paper" not in report.markdown
    assert "may reflect these departures" not in report.markdown


# --- precision ---------------------------------------------------------------------------


def test_precision_is_bf16_or_fp32():
    assert TrialConfig().precision == "bf16"
    with pytest.raises(ConfigError, match="precision='fp16': one of bf16, fp32"):
        TrialConfig.from_dict({"precision": "fp16"})


def test_fp32_turns_autocast_off_and_cpu_never_has_it():
    assert autocast(torch.device("cuda"), "fp32")._enabled is False
    assert autocast(torch.device("cpu"), "bf16")._enabled is False
    assert autocast(torch.device("cpu"), "fp32")._enabled is False


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_bf16_autocasts_and_fp32_does_not():
    device = torch.device("cuda")
    a = torch.ones(4, 4, device=device)
    with autocast(device, "bf16"):
        assert (a @ a).dtype == torch.bfloat16
    with autocast(device, "fp32"):
        assert (a @ a).dtype == torch.float32


def test_training_and_evaluation_pass_the_trials_precision(monkeypatch):
    asked = []

    def spy(device, precision):
        asked.append(precision)
        return autocast(device, precision)

    monkeypatch.setattr(train, "autocast", spy)
    monkeypatch.setattr(pair_encoding_and_scoring, "autocast", spy)
    model, cpu = tiny_pair_classifier(), torch.device("cpu")
    encoded = EncodedPairs([[1, 5, 2, 6, 2], [1, 7, 2, 8, 9, 2]], [[0, 0, 0, 1, 1]] * 2, [0, 2])
    config = TrialConfig(precision="fp32")
    optimizer, scheduler = train.optimizer_and_schedule(model, config, 1)
    training_set = PairTrainingSet(encoded, 0)
    train.train_step(model, FineTune(), training_set, [0, 1], optimizer, scheduler, config, cpu)
    pair_encoding_and_scoring.predict(model, encoded, 2, 0, cpu, precision="fp32")
    assert asked == ["fp32", "fp32"]
