"""Settings of the adjustment stage are checked before any work starts; the adjust_* sweeps
fine-tune the original, the adjusted and the adjusted + continual encoder by name."""

import pytest

from sweeps import adjust_ner, adjust_qa, adjust_xnli, adjust_xsr
from sweeps.cli import apply_overrides, resolve_paths
from sweeps.spec.experiment import experiment_spec
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import TrialConfig
from xlt_core.data.parallel import check_parallel
from xlt_core.errors import ConfigError
from xlt_core.preflight import check_resources


@pytest.mark.parametrize(
    "values, field",
    [
        ({"adaptation": "adjusted"}, "parallel_data"),
        (
            {
                "adaptation": "adjusted_continual",
                "parallel_data": "synthetic",
                "continual_alpha": -1,
            },
            "continual_alpha",
        ),
        (
            {"adaptation": "adjusted", "parallel_data": "synthetic", "adjust_learning_rate": 0},
            "adjust_learning_rate",
        ),
    ],
)
def test_bad_adjustment_settings_are_refused(values, field):
    with pytest.raises(ConfigError, match=f"invalid setting {field}="):
        TrialConfig.from_dict(values)


def test_parallel_data_must_cover_a_target_language():
    config = TrialConfig.from_dict(
        {"adaptation": "adjusted", "parallel_data": "synthetic", "target_langs": "es"}
    )
    check_parallel(config)  # synthetic pairs English with es, de, ru
    with pytest.raises(ConfigError, match="parallel_data"):
        check_parallel(
            TrialConfig.from_dict(
                {"adaptation": "adjusted", "parallel_data": "synthetic", "target_langs": "vi"}
            )
        )


def _encoders(points: list[dict]) -> list[tuple[str, str]]:
    return [(p["method"], p.get("adaptation", "none")) for p in points]


THREE_ENCODERS = [
    ("finetune", "none"),
    ("finetune", "adjusted"),
    ("finetune", "adjusted_continual"),
]


def test_adjust_sweeps_pair_three_encoders_over_the_same_seeds(tmp_path):
    spec = experiment_spec(adjust_xnli, "smoke", None)
    assert _encoders(spec.points) == THREE_ENCODERS
    assert spec.significance_test == "ttest"
    spec = apply_overrides(spec, {"adjust_learning_rate": "0.01"})
    assert [p.get("adjust_learning_rate") for p in spec.points] == [None, 0.01, 0.01]
    assert spec.fixed_axes == {"adjust_learning_rate": 0.01}
    spec = apply_overrides(spec, {"continual_alpha": "0.1"})
    assert [p.get("continual_alpha") for p in spec.points] == [None, None, 0.1]
    assert resolve_paths(spec).base["parallel_data"] == "synthetic"  # a named source is no path
    ner = experiment_spec(adjust_ner, "smoke", str(tmp_path))
    assert ner.significance_test == "permutation"
    assert _encoders(ner.points) == _encoders(experiment_spec(adjust_qa, "paper", None).points)
    # The scripts' own grids are untouched by a sweep's overrides.
    assert adjust_xnli.POINTS["smoke"][1]["adjust_learning_rate"] == 1e-3


@pytest.mark.parametrize("preset", ["smoke", "paper"])
def test_adjust_xsr_compares_the_three_encoders_fine_tuned_on_qa(preset, tmp_path):
    """XSR fine-tunes on QA first (efimov2023 L119), so continual alignment has a task loss."""
    spec = experiment_spec(adjust_xsr, preset, str(tmp_path))
    assert _encoders(spec.points) == THREE_ENCODERS
    assert spec.points[1]["adjust_learning_rate"] == (1e-3 if preset == "smoke" else 5e-5)
    assert spec.selection_metric == "dev/pooled/mrr"
    spec = apply_overrides(spec, {"continual_alpha": "0.1"})
    assert [p.get("continual_alpha") for p in spec.points] == [None, None, 0.1]


def test_the_adaptation_is_fixed_by_the_script():
    with pytest.raises(ConfigError) as error:
        apply_overrides(experiment_spec(adjust_xnli, "smoke", None), {"adaptation": "adjusted"})
    message = str(error.value)
    assert "fixed by the sweep script" in message
    assert "finetune" in message and "adjusted_continual" in message


def test_an_adjustment_sweep_refuses_another_method():
    """`--set method=NAME` replaces the compared objective; the adjust_* sweeps compare
    adaptations of fine-tuning, so there is no objective to replace."""
    with pytest.raises(ConfigError) as error:
        apply_overrides(experiment_spec(adjust_xnli, "smoke", None), {"method": "ear"})
    assert "compares adaptations" in str(error.value)


@pytest.mark.parametrize("script", [adjust_ner, adjust_qa, adjust_xsr])
def test_adjust_smoke_presets_need_no_download(script):
    """Without --data-dir the smoke presets read the task's synthetic data and synthetic
    parallel data, and every trial passes the pre-flight check (files, languages, task)."""
    spec = experiment_spec(script, "smoke", None)
    assert (spec.base["data_source"], spec.base["parallel_data"]) == ("synthetic", "synthetic")
    for point in spec.points:
        check_resources(trial_config(spec.base, point))


def test_the_paper_dry_run_plans_one_adjusted_encoder_per_language_and_seed():
    """`python sweeps/adjust_xnli.py --preset paper --dry-run`: es, ru, vi, hi x 5 seeds, and
    each adjusted trial costs k = 4 fine-tunings (the baseline one)."""
    from sweeps.planning.plan import format_plan

    plan = format_plan(experiment_spec(adjust_xnli, "paper", None), None)
    assert "Adjusted encoders: 20 = 4 languages (es, ru, vi, hi) x 5 seeds" in plan
    for lang in ("es", "ru", "vi", "hi"):
        assert f"  - {lang}: 5 encoders (seeds 1, 2, 3, 4, 5), tested on {lang};" in plan
    rows = {
        line.split()[-1] if "adjusted" not in line else line.split()[5]: line.split()
        for line in plan.splitlines()
        if line.startswith("       5  ")
    }
    baseline, adjusted = float(rows["finetune"][1]), float(rows["adjusted"][1])
    assert adjusted == pytest.approx(4 * baseline, rel=0.01)  # train tokens: 4 fine-tunings
    assert "Departures from Efimov" in plan and "word aligner: fast_align" in plan


def test_a_language_without_parallel_data_is_evaluated_by_every_languages_model(tmp_path):
    from xlt_core.data.parallel import stage_targets

    (tmp_path / "p").mkdir()
    for name in ("en-vi.en", "en-vi.vi", "en-es.en", "en-es.es"):
        (tmp_path / "p" / name).write_text("a\n", encoding="utf-8")
    config = TrialConfig.from_dict(
        {"adaptation": "adjusted", "parallel_data": str(tmp_path), "target_langs": "vi,de,es"}
    )
    assert stage_targets(config) == {"vi": ("vi", "de"), "es": ("es", "de")}
