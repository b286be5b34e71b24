"""The names Tune gives a trial and its directory (`TuneConfig.trial_name_creator`,
`trial_dirname_creator`): its MLflow run's name, and Tune's own directory name."""

from __future__ import annotations

from sweeps.spec.trial_contract import TrialRequest
from xlt_core.errors import ConfigError

# Tune's own longest `<trainable>_<trial id>_<tag>` in a trial directory's name (Ray 2.60).
TUNE_DIRNAME_LENGTH = 130


def tune_trial_name(trial) -> str:
    """Tune's name of a trial (`TuneConfig.trial_name_creator`): its MLflow run's
    (`TrialRequest.run_name`), from the space Tune resolved for it. A sampled configuration
    that is not valid keeps Tune's default name: the trial fails on it in its worker."""
    try:
        return TrialRequest.from_space(trial.config).run_name()
    except ConfigError:
        return f"{trial.trainable_name}_{trial.trial_id}"


def tune_trial_dirname(trial) -> str:
    """The trial's directory name as Tune names it without a custom trial name (Ray 2.60's
    `Trial._generate_dirname`: `<trainable>_<trial id>_<tag>_<date>`), which would otherwise
    follow the run name (`tune_trial_name`; its spaces and `=`): tools and tests find a trial's
    directory by its Tune trial id."""
    from ray.tune.utils import date_str

    name = f"{trial.trainable_name}_{trial.trial_id}_{trial.experiment_tag}"
    return f"{name[:TUNE_DIRNAME_LENGTH]}_{date_str()}".replace("/", "_")
