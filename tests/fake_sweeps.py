"""What the fake sweeps of the analysis tests share: trial runs tagged as the sweeps layer
tags them (`sweeps.trainable.trial_tags`, which needs Ray to import)."""

from collections.abc import Iterable

from xlt_schema import (
    ADAPTATION_TAG,
    CONFIG_KEY_TAG,
    CONFIG_LABEL_TAG,
    HYPERPARAMETERS_TAG,
    METHOD_TAG,
    PARENT_RUN_TAG,
    ROLE_TAG,
    TRIAL_ROLE,
)


def trial_tags(
    parent_id: str,
    label: str,
    method: str,
    adaptation: str = "none",
    hyperparameters: Iterable[str] = (),
    config_key: str | None = None,
) -> dict[str, str]:
    """The tags of a trial of configuration `label` in the sweep `parent_id`; its key is
    `label` with underscores for spaces unless `config_key` is given."""
    return {
        PARENT_RUN_TAG: parent_id,
        ROLE_TAG: TRIAL_ROLE,
        METHOD_TAG: method,
        ADAPTATION_TAG: adaptation,
        HYPERPARAMETERS_TAG: ",".join(hyperparameters),
        CONFIG_KEY_TAG: config_key or label.replace(" ", "_"),
        CONFIG_LABEL_TAG: label,
    }
