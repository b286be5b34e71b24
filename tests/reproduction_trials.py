"""Trials tables built in memory (no MLflow) as the sweeps log them, for the reproduction
view's tests: an mBERT XNLI sweep, two seeds per configuration, accuracy as a fraction of
100 examples (a score of k correct is exactly k percent)."""

import pandas as pd

MBERT = "bert-base-multilingual-cased"
N = 100


def trials_in_memory(
    configs: dict, names: tuple[str, ...], epochs: dict[str, float], default_epochs: float
) -> pd.DataFrame:
    """One row per (configuration, seed 1 or 2): ``configs`` label -> (method,
    hyperparameters, percent correct per metric key and seed); ``names``: the hyperparameter
    params every run logs; ``epochs`` per label, else ``default_epochs``."""
    rows = []
    for label, (method, hyperparameters, percents) in configs.items():
        for index, seed in enumerate((1, 2)):
            rows.append(
                {
                    "run_id": f"{label}-{seed}",
                    "config_key": label,
                    "config_label": label,
                    "method": method,
                    "adaptation": "none",
                    "seed": seed,
                    "hyperparameters": tuple(hyperparameters),
                    "task": "xnli",
                    "model": MBERT,
                    "epochs": str(epochs.get(label, default_epochs)),
                    **{name: hyperparameters.get(name) for name in names},
                    **{f"{key}/accuracy": correct[index] / N for key, correct in percents.items()},
                }
            )
    return pd.DataFrame(rows)
