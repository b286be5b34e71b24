"""The benchmark suite (`make bench`, `python -m benchmarks`) runs and prints a line per
figure. Nothing here asserts on a timing: the figures depend on the machine and its load."""

import sys
from datetime import datetime
from pathlib import Path

import pytest
from quick_runs import run_quick

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks import sweep  # noqa: E402
from benchmarks.__main__ import (  # noqa: E402
    CASES,
    OPTIONAL_CASES,
    append_markdown,
    parse_cases,
    result_row,
)
from benchmarks.common import Result, measured, skipped, verdict  # noqa: E402
from benchmarks.sweep import idle_gaps  # noqa: E402
from benchmarks.workload import rows_near_width  # noqa: E402

# A line each case prints whatever the machine (a skip line names the case too).
EXPECTED = {
    "steps": ["step finetune (tiny", "step ear / finetune (tiny", "step ear / finetune (quick"],
    "throughput": [
        "train examples/s, grouped / dynamic (tiny)",
        "padded tokens per real token, grouped",
        "train examples/s, grouped / dynamic (quick)",
        "training throughput",
    ],
    "evaluation": ["eval examples/s, token-budget / fixed-128", "evaluation throughput"],
    "sweep": [
        "sweep wall (smoke",
        "sweep wall / ideal",
        "sweep start-up floor",
        "sweep first trial start",
        "sweep idle gap",
    ],
    "sweep-minute": ["minute-trial sweep wall (smoke", "minute-trial sweep wall / ideal"],
    "statistics": ["paired t-test (", "bootstrapped t-test (", "bootstrap CI (", "permutation"],
    "memory": [f"peak RSS growth, step {m} (quick" for m in ("finetune", "ear", "rs_da")],
}


def test_verdicts_and_rows():
    assert verdict(measured("a", 2.0, "x", ("<=", 2.1))) == "PASS"
    assert verdict(measured("a", 2.2, "x", ("<=", 2.1))) == "MISS"
    assert verdict(measured("a", 1.9, "x", (">=", 1.8))) == "PASS"
    assert verdict(measured("a", 1.0, "s")) == "-"
    assert verdict(skipped("a", "no data")) == "SKIP"
    line = result_row(measured("step ear / finetune", 1.234, "x", ("<=", 2.1), "width 64"))
    assert line.split() == ["step", "ear", "/", "finetune", "1.23", "x", "<=", "2.10", "x"] + [
        "PASS",
        "width",
        "64",
    ]


def test_idle_gaps_pair_each_start_with_the_slot_freed_first():
    # Two slots: trials 0-10 and 0-4 run first; 5-9 takes the slot freed at 4 (gap 1),
    # 12-15 the one freed at 9 (gap 3), 12.5-20 the one freed at 10 (gap 2.5).
    trials = [(0, 10), (0, 4), (5, 9), (12, 15), (12.5, 20)]
    assert idle_gaps(trials, slots=2) == [1, 3, 2.5]
    assert idle_gaps(trials[:2], slots=2) == []
    assert idle_gaps([(0, 5), (1, 6)], slots=1) == [0.0]  # started before a slot was free


def test_the_same_sweep_arguments_are_run_once(monkeypatch, tmp_path):
    # --quick's `sweep` and `sweep-minute` cases both run the quick sweep: measured once.
    runs = []
    monkeypatch.setattr(sweep, "_MEASURED", {})
    monkeypatch.setattr(sweep, "_run_timed_sweep", lambda *args: runs.append(args) or len(runs))
    assert sweep._timed_sweep(["--set", "a=1"], tmp_path / "one", 10) == 1
    assert sweep._timed_sweep(["--set", "a=1"], tmp_path / "two", 10) == 1
    assert sweep._timed_sweep(["--set", "a=2"], tmp_path / "two", 10) == 2
    assert [args[1].name for args in runs] == ["one", "two"]


def test_rows_near_width_takes_the_rows_just_up_to_the_width():
    lengths = [10, 70, 64, 30, 63, 128, 60, 62, 20]
    assert sorted(lengths[i] for i in rows_near_width(lengths, 3, 64)) == [62, 63, 64]
    assert sorted(lengths[i] for i in rows_near_width(lengths, 3, 500)) == [64, 70, 128]
    assert sorted(lengths[i] for i in rows_near_width(lengths, 3, 1)) == [10, 20, 30]


def test_cases_are_chosen_by_name():
    assert parse_cases(None) == [case for case in CASES if case not in OPTIONAL_CASES]
    assert "driver-10k" in CASES and "driver-10k" not in parse_cases(None)
    assert "gpu" in parse_cases(None)  # skipped in a moment without CUDA
    assert parse_cases(["memory,steps", "sweep"]) == ["steps", "sweep", "memory"]
    assert parse_cases(["driver-10k"]) == ["driver-10k"]
    with pytest.raises(SystemExit):
        parse_cases(["nope"])


def test_markdown_appends_a_dated_table(tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text("# Benchmarks\n")
    results = [
        ("steps", measured("step ear / finetune", 1.9, "x", ("<=", 2.1))),
        ("throughput", skipped("training throughput", "train-en.tsv is absent")),
    ]
    run = {"started": datetime(2026, 12, 1, 9, 30), "load": "1 1 1"}
    append_markdown(path, results, [], "python -m benchmarks", {**run, "wall": 12.0})
    text = path.read_text()
    assert text.startswith("# Benchmarks\n")
    assert "### Run of 2026-12-01 09:30 UTC" in text and "`python -m benchmarks`" in text
    assert "| steps: step ear / finetune | 1.90 x | <= 2.10 x | PASS |" in text
    assert "| throughput: training throughput | - | - | SKIP |" in text


@pytest.mark.slow
def test_quick_statistics_case_prints_its_lines():
    out = run_quick("--only", "statistics", timeout=300).stdout
    for expected in EXPECTED["statistics"]:
        assert expected in out


# The cases whose quick run has a test of its own (tests/benchmarks/test_<case>*.py and the
# statistics test above): the suite's test leaves them out rather than run each twice.
TESTED_ALONE = ("statistics", "scale", "driver", "driver-10k", "mfu", "gpu", "contention", "race")


@pytest.mark.slow
def test_quick_suite_runs_every_case_and_prints_its_lines(tmp_path):
    markdown = tmp_path / "benchmarks.md"
    cases = [case for case in CASES if case not in TESTED_ALONE]
    out = run_quick("--only", ",".join(cases), "--markdown", str(markdown)).stdout
    for case in cases:
        lines = EXPECTED[case]
        assert f"# {case}:" in out
        section = out.split(f"# {case}:")[1].split(f"# {case} took")[0]
        if "skipped:" in section:  # the shared XNLI sample is absent here
            continue
        for expected in lines:
            if expected.startswith(("training throughput", "evaluation throughput")):
                continue  # the skip line's name
            assert expected in section, f"{case}: no line {expected!r} in\n{section}"
    table = markdown.read_text()
    assert "--quick" in table and "| case | figure | target | verdict | note |" in table
    assert table.count("\n| ") >= 15


def test_result_is_the_documented_tuple():
    result = measured("x", 1.0, "s", ("<=", 2.0))
    name, figure, unit, target, passed, note = result
    assert (name, figure, unit, target, passed, note) == ("x", 1.0, "s", ("<=", 2.0), True, "")
    assert isinstance(result, Result)
