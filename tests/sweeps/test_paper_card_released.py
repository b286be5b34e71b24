"""`--preset released`: the authors' released code as a preset (each card's `released` values,
cited by repository, commit and file line). Every trial of a released preset holds what the
card says; its dry run prints every setting that differs from `--preset paper`, with both
sources; every released value is cited so; efimov2023's no-trainer tasks declare the
clipping the released loops do not do (E17); one reading of Robust-XLT's released budget on
both cards and in the reproduction view (D11)."""

import importlib
import subprocess
import sys

import pytest
from conftest import scaled_timeout
from paper_card_checks import preset_mismatches, uncited_released_values
from sweep_helpers import REPO

from analysis.papers import load_published_results, matching_cells, published_epochs
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.paper_cards import RELEASED_PRESET, load_card, value_text
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import HYPERPARAMETER_NAMES

PAPERS = ("ding2022", "huang2021", "efimov2023")
# Every script whose card has released code for its methods, by paper.
RELEASED_SCRIPTS = {
    "ding2022": (
        "ear_xnli",
        "ear_pawsx",
        "ear_ablation",
        "ear_dictionary_scale",
        "ear_source_language",
    ),
    "huang2021": ("robust_xnli", "robust_pawsx", "rs_da_m_curve"),
    "efimov2023": ("adjust_xnli", "adjust_ner", "adjust_qa", "adjust_xsr"),
}
SCRIPTS = [(paper, script) for paper, scripts in RELEASED_SCRIPTS.items() for script in scripts]
IDS = [script for _, script in SCRIPTS]


def test_the_scripts_with_released_code_have_the_released_preset_and_no_other_does():
    for paper in PAPERS:
        card = load_card(paper)
        assert card.code(RELEASED_PRESET) is not None
        scope = card.presets[RELEASED_PRESET].experiments or tuple(card.experiments)
        assert set(scope) == set(RELEASED_SCRIPTS[paper])
        for experiment in card.experiments:
            module = importlib.import_module(f"sweeps.{experiment}")
            assert (RELEASED_PRESET in module.POINTS) == (experiment in RELEASED_SCRIPTS[paper])


@pytest.mark.parametrize("paper, script", SCRIPTS, ids=IDS)
def test_every_trial_of_a_released_preset_holds_the_cards_settings(paper, script):
    module = importlib.import_module(f"sweeps.{script}")
    assert module.PAPER == paper
    assert preset_mismatches(module, RELEASED_PRESET) == []


def _settings_by_point(spec) -> dict[tuple, dict]:
    """(method, adaptation) -> the settings its trials hold: every trial setting but the
    seed, and only its own hyperparameters."""
    found = {}
    for point in spec.points:
        config = trial_config(spec.base, point, spec.seeds[0])
        own = set(config.hyperparameter_names())
        values = {
            name: value
            for name, value in config.to_dict().items()
            if name != "seed" and (name in own or name not in HYPERPARAMETER_NAMES)
        }
        found[(config.method, config.adaptation)] = values
    return found


def differing_settings(module) -> dict[str, tuple]:
    """Setting -> (paper preset's value, released preset's value) wherever the trials of the
    two presets differ (the points both have; the seeds), read from the trials themselves."""
    paper, released = (experiment_spec(module, p, None) for p in ("paper", RELEASED_PRESET))
    found = {}
    if paper.seeds != released.seeds:
        found["seeds"] = (paper.seeds, released.seeds)
    ours, theirs = _settings_by_point(paper), _settings_by_point(released)
    for point in ours.keys() & theirs.keys():
        for name in ours[point].keys() & theirs[point].keys():
            if ours[point][name] != theirs[point][name]:
                found[name] = (ours[point][name], theirs[point][name])
    return found


def _source(card, experiment: str, preset: str, name: str) -> str:
    """Where the card says a preset's value comes from: the departure that sets it, else the
    released value's citation (released preset), else the paper's source."""
    setters = [
        d for d in card.departures(experiment, preset) if d.setting == name and d.ours is not None
    ]
    if setters:
        return setters[-1].reason
    setting = card.settings(experiment, preset)[name]
    released = setting.released if preset == RELEASED_PRESET else None
    return (released or setting).source


def _dry_run(script: str) -> str:
    completed = subprocess.run(
        [sys.executable, f"sweeps/{script}.py", "--preset", RELEASED_PRESET, "--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(120),
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@pytest.mark.parametrize("paper, script", SCRIPTS, ids=IDS)
def test_the_released_dry_run_prints_every_setting_that_differs_with_both_sources(paper, script):
    module = importlib.import_module(f"sweeps.{script}")
    card = load_card(paper)
    out = _dry_run(script)
    assert f"Dry run of {script} (preset released, strategy grid)" in out
    block = out.split("Settings that differ from --preset paper: ")[1].split("Departures from")[0]
    lines = {line.split(":")[0].strip(" -"): line for line in block.splitlines()[1:]}
    differing = differing_settings(module)
    assert differing, "the released code differs from the paper preset in some setting"
    for name, (ours, theirs) in differing.items():
        line = lines[name]
        paper_side = f"paper {value_text(ours)} ("
        released_side = f"| released {value_text(theirs)} ("
        assert paper_side in line and released_side in line, line
        assert _source(card, script, "paper", name) in line.split(released_side)[0]
        assert _source(card, script, RELEASED_PRESET, name) in line.split(released_side)[1]


@pytest.mark.parametrize("paper", PAPERS)
def test_every_released_value_cites_a_repository_a_commit_and_a_file_line(paper):
    assert uncited_released_values(load_card(paper)) == []


def test_the_citation_check_finds_a_released_value_without_its_commit_or_line(tmp_path):
    card = (REPO / "sweeps" / "papers" / "ding2022.yaml").read_text(encoding="utf-8")
    good = "KB-Ding/EAR@b508ce7 scripts/bert-ept-apt-xnli.sh:6: "
    assert good in card
    for bad in ("KB-Ding/EAR scripts/bert-ept-apt-xnli.sh:6: ", "KB-Ding/EAR@b508ce7 scripts: "):
        (tmp_path / "ding2022.yaml").write_text(card.replace(good, bad, 1), encoding="utf-8")
        found = uncited_released_values(load_card("ding2022", tmp_path))
        assert [line.split(":")[0] for line in found] == [
            "(top level).settings.learning_rate.released"
        ]


# --- E17: efimov2023's no-trainer tasks clip nowhere --------------------------------------


@pytest.mark.parametrize("script", RELEASED_SCRIPTS["efimov2023"])
@pytest.mark.parametrize("preset", ["paper", RELEASED_PRESET])
def test_every_efimov2023_task_declares_the_clipping_the_released_loops_do_not_do(script, preset):
    """The authors trained every task without the Trainer (README.md:11) and no no-trainer
    loop clips: clipping at 1.0 is a declared departure of XNLI, QA and XSR as of NER, in
    both presets, and no card setting sources it to the Trainer."""
    module = importlib.import_module(f"sweeps.{script}")
    spec = experiment_spec(module, preset, None)
    (clipping,) = [d for d in spec.departures() if d.setting == "max_grad_norm"]
    assert clipping.ours == spec.base["max_grad_norm"] == 1.0
    assert "no clip_grad_norm_" in clipping.paper
    assert "max_grad_norm" not in load_card("efimov2023").settings(script, preset)


# --- D11: one reading of Robust-XLT's released budget --------------------------------------


@pytest.mark.parametrize("task, experiment", [("xnli", "robust_xnli"), ("pawsx", "robust_pawsx")])
def test_one_reading_of_robust_xlts_budget_on_both_cards_and_in_the_reproduction_view(
    task, experiment
):
    """huang2021's RS-DA rows, ding2022's copies of them and its XLM-R +RS-DA* row trained
    Robust-XLT's released budget (one epoch on XNLI, three on PAWS-X): the huang2021 card's
    released value, what ding2022's card says +RS-DA* trained, and the budget the
    reproduction view reads those rows with are one number."""
    released = load_card("huang2021").settings(experiment)["epochs"].released.value
    assert released == {"xnli": 1.0, "pawsx": 3.0}[task]
    assert published_epochs("huang2021", task, "rs_da") == released
    assert published_epochs("ding2022", task, "rs_da") == released
    (budget,) = [
        d
        for d in load_card("ding2022").departures("ear_xnli", "paper-xlmr")
        if d.setting == "RS-DA* training budget"
    ]
    script = {"xnli": "train_xnli.sh", "pawsx": "train_pawsx.sh"}[task]
    assert f'{script}:27 "EPOCH={released:g}"' in budget.paper
    # the paper preset's other rows keep XTREME's five epochs
    assert published_epochs("huang2021", task, "adv") == 5.0


def test_the_xlmr_rs_da_point_meets_its_xnli_row_and_not_its_pawsx_row():
    """paper-xlmr's +RS-DA* trains one epoch, Robust-XLT's released XNLI budget: it meets
    ding2022 Table 1's +RS-DA* row on that budget; on PAWS-X it trains one where the row
    trained three, and Table 2's row is another budget."""
    published = load_published_results()
    expected = {"ear_xnli": ("xnli", ""), "ear_pawsx": ("pawsx", "epochs 1 (the paper's 3)")}
    for script, (task, budget) in expected.items():
        spec = experiment_spec(importlib.import_module(f"sweeps.{script}"), "paper-xlmr", None)
        point = next(p for p in spec.points if p["method"] == "rs_da")
        trial = trial_config(spec.base, point, 1)
        rs_da = trial.objective
        params = {"epochs": trial.epochs, "m": rs_da.m, "rs_da_variant": rs_da.rs_da_variant}
        cells = matching_cells(
            published, task, trial.model, "test", "accuracy", "rs_da", "none", params
        )
        assert set(cells["paper"]) == {"ding2022"} and set(cells["budget"]) == {budget}
