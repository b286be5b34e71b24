"""Settings of the adjustment methods are checked before any work starts."""

import subprocess
import sys
from pathlib import Path

import pytest

from sweeps.cli import apply_overrides, resolve_paths
from sweeps.presets import PRESETS
from xlt_core.adjustment import check_parallel
from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "values, field",
    [
        ({"method": "adjusted"}, "parallel_data"),
        (
            {"method": "adjusted_continual", "parallel_data": "synthetic", "continual_alpha": -1},
            "continual_alpha",
        ),
        (
            {"method": "adjusted", "parallel_data": "synthetic", "adjust_learning_rate": 0},
            "adjust_learning_rate",
        ),
    ],
)
def test_bad_adjustment_settings_are_refused(values, field):
    with pytest.raises(ConfigError, match=f"invalid setting {field}="):
        TrialConfig.from_dict(values)


def test_parallel_data_must_cover_a_target_language():
    config = TrialConfig.from_dict(
        {"method": "adjusted", "parallel_data": "synthetic", "target_langs": "es"}
    )
    check_parallel(config)  # synthetic pairs English with es, de, ru
    with pytest.raises(ConfigError, match="parallel_data"):
        check_parallel(
            TrialConfig.from_dict(
                {"method": "adjusted", "parallel_data": "synthetic", "target_langs": "vi"}
            )
        )


def test_adjust_presets_pair_three_methods_over_the_same_seeds(tmp_path):
    spec = PRESETS["adjust_xnli"]("smoke", None)
    assert [p["method"] for p in spec.points] == ["finetune", "adjusted", "adjusted_continual"]
    assert spec.significance_test == "ttest"
    spec = apply_overrides(spec, {"adjust_learning_rate": "0.01"})
    assert [p.get("adjust_learning_rate") for p in spec.points] == [None, 0.01, 0.01]
    assert resolve_paths(spec).base["parallel_data"] == "synthetic"  # a named source is no path
    assert PRESETS["adjust_ner"]("smoke", str(tmp_path)).significance_test == "permutation"


def test_ner_smoke_needs_a_data_dir():
    completed = subprocess.run(
        [sys.executable, str(ROOT / "sweeps" / "adjust_ner.py"), "--preset", "smoke"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert completed.returncode == 2
    assert "invalid setting --data-dir=None" in completed.stderr
