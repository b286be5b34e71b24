"""The parent run's per-configuration mean and std over seeds (analysis/seed_summary.py),
against a hand computation."""

import pandas as pd
import pytest
from mlflow.utils.validation import _validate_metric_name

from analysis.seed_summary import metric_label, seed_summary_metrics
from analysis.select import aggregate_over_seeds


def tidy(rows):
    columns = ["config_key", "config_label", "method", "adaptation", "seed"]
    columns += ["split", "lang", "metric", "value"]
    return pd.DataFrame(rows, columns=columns)


def test_mean_and_sample_std_per_configuration_on_the_selection_metric_and_test():
    ear, base = (
        ("k1", "ear alpha=1 beta=0.1", "ear", "none"),
        ("k0", "finetune", "finetune", "none"),
    )
    rows = [
        (*ear, 0, "dev", "en", "accuracy", 0.60),
        (*ear, 1, "dev", "en", "accuracy", 0.70),
        (*ear, 0, "test", "es", "accuracy", 0.50),
        (*ear, 1, "test", "es", "accuracy", 0.54),
        (*ear, 0, "dev", "es", "accuracy", 0.9),  # neither the selection metric nor test
        (*ear, 0, "test", "es", "loss", 0.9),  # another metric
        (*base, 0, "dev", "en", "accuracy", 0.40),
    ]
    metrics = seed_summary_metrics(aggregate_over_seeds(tidy(rows)), "dev/en/accuracy")
    assert metrics == pytest.approx(
        {
            "seeds/ear alpha:1 beta:0.1/dev/en/accuracy/mean": 0.65,
            "seeds/ear alpha:1 beta:0.1/dev/en/accuracy/std": pd.Series([0.6, 0.7]).std(),
            "seeds/ear alpha:1 beta:0.1/test/es/accuracy/mean": 0.52,
            "seeds/ear alpha:1 beta:0.1/test/es/accuracy/std": pd.Series([0.5, 0.54]).std(),
            "seeds/finetune/dev/en/accuracy/mean": 0.40,  # one seed: no std
        }
    )
    for key in metrics:
        _validate_metric_name(key)  # raises on a name MLflow refuses


def test_labels_become_valid_metric_names():
    assert metric_label("rs_da m=3 variant=released") == "rs_da m:3 variant:released"
    assert metric_label("ear (m=2)") == "ear _m:2_"
