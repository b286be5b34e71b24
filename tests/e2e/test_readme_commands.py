"""Every command README.md and the docs pages of DOCUMENTS show is run here, as a user runs
it: in a fresh working directory, tracked through `MLFLOW_TRACKING_URI` in a SQLite file there
(an empty store copied in, but for the demo's, which makes its own as a first `make demo` does),
with `--set` values appended that shrink the work (one seed, a fraction of an epoch, a 2-layer
tiny model, a few hundred examples) but not what the command does. Commands that need the hub,
AWS, a GPU or a person at a browser are listed with the reason in NOT_RUN_HERE, and a test
checks that those pages show no command outside these lists, and that every docs page with
commands is one of DOCUMENTS (or NOT_COLLECTED says why not).
"""

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import SHARED_DATA, require_shared_data
from mlflow.tracking import MlflowClient
from sweep_helpers import (
    ADJUST_SETTINGS,
    DEMO_SETTINGS,
    REPO,
    ROBUST_SETTINGS,
    child_runs,
    parent_runs,
    run_command,
    smoke_spec,
)
from tracking_stores import tracking_store

from xlt_core.config import HYPERPARAMETER_NAMES
from xlt_schema import (
    ADAPTATION_TAG,
    CONFIG_LABEL_TAG,
    HYPERPARAMETERS_TAG,
    METHOD_TAG,
    parse_metric_key,
)

README = REPO / "README.md"
# The pages whose `sh` blocks are collected: the README and the docs pages it sends users to.
DOCUMENTS = [
    README,
    *(
        REPO / "docs" / name
        for name in ("usage.md", "sweeps.md", "adjustment.md", "reports.md", "cluster.md")
    ),
]
# Docs pages with `sh` blocks whose commands are run elsewhere, and where.
NOT_COLLECTED = {
    "benchmarks.md": (
        "the benchmark suite: tests/benchmarks/test_benchmarks.py runs it at tiny sizes"
    ),
}
# The pages' stand-in for a user's XTREME-layout folder; the tests put the development data
# samples (tests/conftest.py's SHARED_DATA) in its place, and skip where they are missing.
DATA_DIR = "/path/to/xtreme-data"

# The work of every sweep, shrunk: one seed, a fifth of an epoch, one evaluation, 2 layers,
# no confirmation phase (one path for every script: the demo's command runs it).
SMALL = {
    "seeds": "0",
    "confirm_seeds": "0",
    "epochs": "0.2",
    "evals_per_epoch": "1",
    "tiny_layers": "2",
    "max_train_examples": "200",
    "max_eval_examples": "40",
}
EAR = {**SMALL, "layer": "2"}  # EAR's smoke points read layer 6 of 6
ADJUST = {**SMALL, "parallel_max_sentences": "300"}
QA = {**ADJUST, "max_train_examples": "100"}
# XSR chooses the layer on the first 100 pairs of each language and tests on the rest.
XSR = {**ADJUST, "max_eval_examples": "150"}

# Documented command -> (sweep script, the settings appended). Each runs in test_sweep_command;
# those of SHARED_SWEEPS once per session (conftest), read by the sweeps' own tests too.
SWEEPS = {
    "python sweeps/ear_xnli.py --preset smoke": ("ear_xnli", DEMO_SETTINGS),
    f"python sweeps/ear_xnli.py --preset smoke --data-dir {DATA_DIR}": ("ear_xnli", EAR),
    "python sweeps/ear_pawsx.py --preset smoke": ("ear_pawsx", EAR),
    "python sweeps/ear_source_language.py --preset smoke": ("ear_source_language", EAR),
    "python sweeps/ear_ablation.py --preset smoke": ("ear_ablation", EAR),
    "python sweeps/ear_targets.py --preset smoke": ("ear_targets", EAR),
    "python sweeps/ear_dictionary_scale.py --preset smoke": ("ear_dictionary_scale", EAR),
    "python sweeps/rs_syntax.py --preset smoke": ("rs_syntax", SMALL),
    "python sweeps/rs_da_m_curve.py --preset smoke": ("rs_da_m_curve", SMALL),
    f"python sweeps/ear_pawsx.py --preset smoke --data-dir {DATA_DIR}": ("ear_pawsx", EAR),
    "python sweeps/robust_xnli.py --preset smoke": ("robust_xnli", ROBUST_SETTINGS),
    "python sweeps/robust_pawsx.py --preset smoke": ("robust_pawsx", SMALL),
    "python sweeps/adjust_xnli.py --preset smoke": ("adjust_xnli", ADJUST_SETTINGS),
    "python sweeps/adjust_ner.py --preset smoke": ("adjust_ner", ADJUST),
    "python sweeps/adjust_qa.py --preset smoke": ("adjust_qa", QA),
    "python sweeps/adjust_xsr.py --preset smoke": ("adjust_xsr", XSR),
    f"python sweeps/adjust_ner.py --preset smoke --data-dir {DATA_DIR}": ("adjust_ner", ADJUST),
    f"python sweeps/adjust_qa.py --preset smoke --data-dir {DATA_DIR}": ("adjust_qa", QA),
    f"python sweeps/adjust_xsr.py --preset smoke --data-dir {DATA_DIR}": ("adjust_xsr", XSR),
}
SHARED_SWEEPS = {
    "python sweeps/ear_xnli.py --preset smoke": "ear_xnli_smoke",
    "python sweeps/robust_xnli.py --preset smoke": "robust_xnli_smoke",
    "python sweeps/adjust_xnli.py --preset smoke": "adjust_xnli_smoke",
}
# The development data samples each sweep reads in place of `--data-dir /path/to/xtreme-data`.
SHARED_SAMPLES = {
    "ear_xnli": ("xnli", "synonyms"),
    "ear_pawsx": ("pawsx", "synonyms"),
    "adjust_ner": ("panx", "parallel"),
    "adjust_qa": ("tydiqa", "xquad", "mlqa", "parallel"),
    "adjust_xsr": ("tydiqa", "tatoeba", "parallel"),  # XSR fine-tunes on QA first
}
# Commands run by the other tests of this file: every `python -m xlt_core` command (one trial,
# no Ray) with TRIAL settings appended where the command does not set them, and these.
ONE_TRIAL = "python -m xlt_core "
TRIAL = {
    "epochs": "0.5",
    "tiny_layers": "2",
    "max_train_examples": "200",
    "max_eval_examples": "40",
    "parallel_max_sentences": "300",
}
REPORT = "python -m analysis report --experiment ear_xnli [--tracking-uri URI] [--out DIR]"
COMPARE = (
    "python -m analysis compare --experiments ear_xnli,robust_xnli [--tracking-uri URI] [--out DIR]"
)
CLUSTER = "python -m sweeps.cluster ray_cluster.yaml"
DRY_RUN = "python sweeps/ear_xnli.py --preset paper --dry-run"
SAVE_CONFIG = "python sweeps/ear_xnli.py --preset smoke --set alpha=0.5 --save-config my_sweep.yaml"
RUN_CONFIG = "python sweeps/ear_xnli.py --config my_sweep.yaml --dry-run"
XLMR_DRY_RUN = "python sweeps/ear_xnli.py --preset paper-xlmr --dry-run"
# Commands run elsewhere, or not runnable offline on a CPU machine, and why.
NOT_RUN_HERE = {
    "make demo": "runs `python sweeps/ear_xnli.py --preset smoke`, tested here",
    "make test": "runs the test suite, this file included",
    "make test-fast": "runs the tests not marked slow",
    "make install": "what every make target runs first; CI runs it in a fresh clone",
    "pip install ": (
        "installs: tests/e2e/test_install.py makes the analysis-only one in a fresh virtualenv"
    ),
    ".venv/bin/mlflow ui": "a web UI for a person at a browser",
    "optuna-dashboard": "a web UI for a person at a browser (the dashboard extra)",
    "python sweeps/ear_xnli.py --preset paper": "mBERT and XNLI from the hub",
    "python sweeps/ear_xnli.py --preset smoke --strategy search": (
        "the search strategy end to end, interrupted and resumed: tests/sweeps/test_sweep_search.py"
    ),
    "python -m benchmarks.tracking_load": (
        "minutes of load on two tracking servers: "
        "tests/benchmarks/test_tracking_server_load.py runs the same load with 8 trials on both"
    ),
    "ray ": "an AWS cluster (the cluster file itself is validated here, offline)",
    # On premises: `make cluster-check` runs `ray up`, `ray exec` and `ray down` on this machine.
    "RAY_UP_enable_autoscaler_v2=0 ray up": "your machines (make cluster-check runs it here)",
    "make cluster-check": (
        "as root, minutes (namespaces, sshd, ray up): .ci/run runs it after make test, its "
        "transcript in docs/cluster.md; its fast parts: tests/sweeps/test_cluster_check.py"
    ),
    "python -m sweeps.cluster_files": "tests/sweeps/test_cluster_files.py (--check, a lab's file)",
    "python -m sweeps.cluster my_cluster.yaml": (
        "a lab's file: tests/sweeps/test_cluster_files.py validates one made for given addresses"
    ),
    "ssh ": "an AWS cluster",
}


def sh_commands(text: str) -> list[str]:
    """The commands of a page's `sh` blocks: continuation lines joined, comments and the
    comment-only lines that follow a command left out."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #")[0].split(" # ")[0].strip()
            if command and not command.startswith("#"):
                commands.append(" ".join(command.split()))
    return commands


def documented_commands() -> list[str]:
    """The commands of every page of DOCUMENTS, in order, each once (a command two pages
    show is run once)."""
    return list(dict.fromkeys(c for page in DOCUMENTS for c in sh_commands(page.read_text())))


def documented_text() -> str:
    return "\n".join(page.read_text() for page in DOCUMENTS)


def _argv(command: str, settings: dict[str, str]) -> list[str]:
    """The documented command's arguments after `python`, scripts made absolute (the command runs
    in a temporary directory), the data samples in place of the pages' placeholder data
    directory, with `--set` for each of `settings`."""
    argv = shlex.split(command)[1:]
    argv = [str(REPO / arg) if arg.startswith("sweeps/") else arg for arg in argv]
    argv = [str(SHARED_DATA) if arg == DATA_DIR else arg for arg in argv]
    for key, value in settings.items():
        argv += ["--set", f"{key}={value}"]
    return argv


def _overrides(settings: dict[str, str]) -> list[str]:
    return [f"{key}={value}" for key, value in settings.items()]


def test_every_readme_command_is_run_by_a_test():
    covered = [*SWEEPS, REPORT, COMPARE, CLUSTER, DRY_RUN, XLMR_DRY_RUN, SAVE_CONFIG, RUN_CONFIG]
    shown = documented_commands()
    # the commands the fixed tests run are shown (NOT_RUN_HERE's paper-preset prefix must not
    # hide the dry runs)
    assert all(command in shown for command in [REPORT, COMPARE, CLUSTER, DRY_RUN, XLMR_DRY_RUN])
    assert len(shown) > 15  # the parser still finds the blocks
    assert "make demo" in sh_commands(README.read_text())  # and reads the README
    unknown = [
        command
        for command in shown
        if command not in covered
        and not command.startswith(ONE_TRIAL)
        and not any(command.startswith(p) for p in NOT_RUN_HERE)
    ]
    assert not unknown, (
        f"documented commands no test runs (add to {Path(__file__).name}): {unknown}"
    )
    # Every sweep command named here is one the pages show (or the --data-dir form the option
    # table shows for that script, `--data-dir /path/to/xtreme-data`).
    text = documented_text()
    for command in SWEEPS:
        assert command in shown or (
            command.removesuffix(f" --data-dir {DATA_DIR}") in text
            and f"--data-dir {DATA_DIR}" in text
        ), command


def test_every_docs_page_with_commands_is_collected():
    """A command moved to a new docs page is not left untested."""
    collected = {page.name for page in DOCUMENTS}
    with_commands = {
        page.name for page in (REPO / "docs").glob("*.md") if sh_commands(page.read_text())
    }
    missing = with_commands - collected - set(NOT_COLLECTED)
    assert not missing, f"docs pages with commands no test collects (add to DOCUMENTS): {missing}"
    assert all(page.is_file() for page in DOCUMENTS), DOCUMENTS


def test_readme_points_at_no_path_outside_the_repository():
    """A user's clone has no development samples beside it: the pages name a placeholder
    and describe the layout instead."""
    text = documented_text()
    assert "../shared" not in text and "shared/data" not in text
    assert f"--data-dir {DATA_DIR}" in text


def _check_sweep(uri: str, spec, stdout: str) -> None:
    """One FINISHED child run per trial, tagged with its method, adaptation and hyperparameter
    names (no param for the others' hyperparameters), evaluated beyond dev; the parent's
    report."""
    children = child_runs(uri, spec.experiment)
    # The grid's trials, then (when the command confirms) the selected configuration and the
    # baseline on the spec's fresh seeds.
    confirmed = 2 * len(spec.confirmation_seeds())
    assert len(children) == len(spec.points) * len(spec.seeds) + confirmed, [
        c.data.tags.get(CONFIG_LABEL_TAG) for c in children
    ]
    assert all(child.info.status == "FINISHED" for child in children)
    configurations = {(c.data.tags[METHOD_TAG], c.data.tags[ADAPTATION_TAG]) for c in children}
    assert configurations == {(p["method"], p.get("adaptation", "none")) for p in spec.points}
    for child in children:
        own = set(filter(None, child.data.tags[HYPERPARAMETERS_TAG].split(",")))
        assert all(child.data.params[name] != "none" for name in own)
        assert not (set(HYPERPARAMETER_NAMES) - own) & set(child.data.params)
        # evaluated beyond the dev set: test/es/accuracy, xquad/vi/f1, ...
        splits = {parsed[0] for parsed in map(parse_metric_key, child.data.metrics) if parsed}
        assert splits - {"dev"}, sorted(child.data.metrics)
    (parent,) = parent_runs(uri, spec.experiment)
    assert parent.info.status == "FINISHED"
    artifacts = {a.path for a in MlflowClient(uri).list_artifacts(parent.info.run_id, "report")}
    assert {"report/report.md", "report/selected_config.json"} <= artifacts
    assert "Selected configuration" in stdout
    # The summary says how the selection fares against the baseline and where the runs are.
    assert "Verdict: " in stdout
    experiment = MlflowClient(uri).get_experiment_by_name(spec.experiment)
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    assert f"#/experiments/{experiment.experiment_id}/runs?workflowType=machine_learning" in stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", list(SWEEPS))
def test_sweep_command(command, request, tmp_path):
    name, settings = SWEEPS[command]
    data_dir = None
    if "--data-dir" in command:
        data_dir = str(require_shared_data(*SHARED_SAMPLES[name]))
    if command in SHARED_SWEEPS:
        shared = request.getfixturevalue(SHARED_SWEEPS[command])
        uri, completed = shared.uri, shared.completed
    else:
        # An empty store to start from: making a new one is the demo's to test (SHARED_SWEEPS).
        uri = tracking_store(tmp_path)
        completed = run_command(_argv(command, settings), tmp_path)
    _check_sweep(uri, smoke_spec(name, _overrides(settings), data_dir), completed.stdout)


@pytest.mark.slow
def test_report_command_rebuilds_the_report(ear_xnli_smoke, tmp_path):
    """On a copy of the demo's store: the report registers the selected model there."""
    workdir = ear_xnli_smoke.copy_to(tmp_path / "demo").workdir
    out = workdir / "rebuilt"
    argv = shlex.split(REPORT.replace("[--tracking-uri URI] [--out DIR]", f"--out {out}"))[1:]
    completed = run_command(argv, workdir, timeout=300)
    selected = json.loads((out / "selected_config.json").read_text())
    report = (out / "report.md").read_text()
    assert selected["config_label"] in report and selected["config_label"] in completed.stdout


@pytest.mark.slow
def test_compare_command_puts_the_sweeps_side_by_side(robust_xnli_smoke, tmp_path):
    """The README's compare command after the demo's sweep and the robust sweep in one store
    (the session's robust sweep is tracked in a copy of the demo's)."""
    out = tmp_path / "compared"
    argv = shlex.split(COMPARE.replace("[--tracking-uri URI] [--out DIR]", f"--out {out}"))[1:]
    store = {"MLFLOW_TRACKING_URI": robust_xnli_smoke.uri}
    run_command(argv, tmp_path, env=store)
    table = (out / "compare.md").read_text().split("### xnli test accuracy (%)")[1]
    labels = [line.split(" | ")[0].lstrip("| ") for line in table.split("###")[0].splitlines()]
    methods = {label.split(": ", 1)[1].split()[0] for label in labels if ": " in label}
    assert {"finetune", "ear", "adv", "rs_da"} <= methods, labels
    assert {"compare.tex", "compare_xnli_test_accuracy.png"} <= {p.name for p in out.iterdir()}


@pytest.mark.slow  # a fresh Python (seconds of imports) and a trial; adjusting ones, a minute
@pytest.mark.parametrize("command", [c for c in documented_commands() if c.startswith(ONE_TRIAL)])
def test_one_trial_command_trains_and_evaluates(command, tmp_path):
    given = dict(arg.split("=", 1) for arg in shlex.split(command) if "=" in arg)
    settings = {key: value for key, value in TRIAL.items() if key not in given}
    if given.get("method") == "ear":
        settings["layer"] = "2"  # of the 2-layer model
    completed = run_command(_argv(command, settings), tmp_path, timeout=300)
    result = json.loads(completed.stdout[completed.stdout.rindex("\n{") :])
    assert {"dev/en/accuracy", "test/es/accuracy", "test/ru/accuracy"} <= set(result["metrics"])
    assert result["best_step"] > 0


def test_dry_run_command_plans_without_tracking(tmp_path):
    completed = run_command(_argv(DRY_RUN, {}), tmp_path)
    assert "18 configurations x 5 seeds = 90 trials" in completed.stdout
    assert "GPU-hours for 100 trials" in completed.stdout
    assert list(tmp_path.iterdir()) == []  # no mlflow.db (the store run_command points at)


def test_xlmr_dry_run_command_plans_the_xlmr_rows(tmp_path):
    completed = run_command(_argv(XLMR_DRY_RUN, {}), tmp_path)
    assert "3 configurations x 5 seeds = 15 trials" in completed.stdout
    assert "model=xlm-roberta-base" in completed.stdout
    assert "Departures from Ding et al. 2022" in completed.stdout


@pytest.mark.slow
def test_a_saved_sweep_file_plans_the_sweep_it_was_saved_from(tmp_path):
    saved = run_command(_argv(SAVE_CONFIG, {}), tmp_path)
    assert "run it with: python sweeps/ear_xnli.py --config my_sweep.yaml" in saved.stdout
    from_file = run_command(_argv(RUN_CONFIG, {}), tmp_path).stdout
    direct = SAVE_CONFIG.replace("--save-config my_sweep.yaml", "--dry-run")
    assert from_file == run_command(_argv(direct, {}), tmp_path).stdout
    assert "alpha=0.5" in from_file


@pytest.mark.slow
def test_cluster_command_validates_the_cluster_file(tmp_path):
    argv = [
        "-m",
        "sweeps.cluster",
        str(REPO / "ray_cluster.yaml"),
        str(REPO / "ray_cluster_onprem.yaml"),
    ]
    completed = run_command(argv, tmp_path)
    assert "ray_cluster.yaml: valid (aws, node types" in completed.stdout
    assert "ray_cluster_onprem.yaml: valid (local, node types" in completed.stdout
    # Ray's INFO lines on the defaults it fills in stay off the terminal.
    assert completed.stderr == ""
