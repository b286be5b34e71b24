"""efimov2023 Fig. 2 from a sweep's trials: which run holds each state, shared bins, the figure."""

import pandas as pd
import pytest

from analysis.probing_stages import (
    PROBING_PLOT,
    ProbingStages,
    plot_probing_stages,
    probing_stages_figure,
    shared_bins,
    stage_runs,
)


def trials(rows):
    return pd.DataFrame(rows, columns=["run_id", "method", "adaptation", "seed"])


def test_stage_runs_take_the_lowest_seed_with_every_adaptation():
    frame = trials(
        [
            ("b0", "finetune", "none", 0),  # seed 0 lacks the continual run
            ("a0", "finetune", "adjusted", 0),
            ("b1", "finetune", "none", 1),
            ("a1", "finetune", "adjusted", 1),
            ("c1", "finetune", "adjusted_continual", 1),
            ("e1", "ear", "none", 1),  # another method's run is not a probing stage
        ]
    )
    seed, runs = stage_runs(frame)
    assert seed == 1
    assert runs == {
        "original": "b1",
        "finetuned": "b1",
        "adjusted": "a1",
        "adjusted_finetuned": "a1",
        "adjusted_continual": "c1",
    }


def test_stage_runs_of_a_sweep_without_the_continual_adaptation():
    frame = trials([("b0", "finetune", "none", 0), ("a0", "finetune", "adjusted", 0)])
    assert stage_runs(frame) == (
        0,
        {"original": "b0", "finetuned": "b0", "adjusted": "a0", "adjusted_finetuned": "a0"},
    )


def test_stage_runs_refuse_when_no_seed_is_complete():
    frame = trials([("b0", "finetune", "none", 0), ("a1", "finetune", "adjusted", 1)])
    with pytest.raises(ValueError, match="no seed"):
        stage_runs(frame)


def test_bins_are_shared_by_every_state_and_kind(tmp_path):
    distances = {
        "original": {"related": [1.0, 2.0], "unrelated": [3.0, 4.0]},
        "adjusted": {"related": [0.5], "unrelated": [8.0]},
    }
    bins = shared_bins(distances, count=4)
    assert bins.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    path = plot_probing_stages(distances, tmp_path / "probing_stages.png", "seed 0")
    with open(path, "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_figure_draws_the_stages_as_read_and_nothing_without_them(tmp_path):
    # The reading layer (analysis.sweep_records.read_probing_stages) gives None for a sweep
    # without probing distances; the figure takes what it read, no client.
    assert probing_stages_figure(None, tmp_path) == []
    distances = {
        "original": {"related": [1.0, 2.0], "unrelated": [3.0, 4.0]},
        "finetuned": {"related": [0.5], "unrelated": [8.0]},
    }
    assert probing_stages_figure(ProbingStages(3, distances), tmp_path) == [
        str(tmp_path / PROBING_PLOT)
    ]
