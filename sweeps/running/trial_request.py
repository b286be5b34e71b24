"""What the driver asks of a Ray Tune trial, and how it travels: `TrialRequest`.

The driver writes a phase's request into Tune's `param_space` (`to_space`); Tune resolves it
into one space per trial (a grid over points and seeds, or a sampled point) and hands that to
the worker, which reads it back with `from_space`; the driver reads the phase's results with
`from_space` too. Tune writes the spaces to disk (params.json, the experiment state) and
restores them with `--resume`, so the keys stay the ones earlier sweeps wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError

# The keys of every trial's space. `log_model` and `search_seeds` are optional.
REQUIRED_KEYS = ("base", "point", "seed", "threads", "experiment_id", "parent_run_id", "phase")
# Tune's Repeater (`set_index=True`) numbers the repeats of a sampled configuration here.
TRIAL_INDEX = "__trial_index__"
# Tune's own longest `<trainable>_<trial id>_<tag>` in a trial directory's name (Ray 2.60).
TUNE_DIRNAME_LENGTH = 130


def trial_config(
    base: Mapping[str, Any], point: Mapping[str, Any], seed: int | None = None, **extra
) -> TrialConfig:
    """One trial's validated configuration: the sweep's common settings, then the point's,
    then `extra` (a sampled value, say), then the seed (None: TrialConfig's default).
    Raises ConfigError on a bad value."""
    values = {**base, **point, **extra}
    if seed is not None:
        values["seed"] = seed
    return TrialConfig.from_dict(values)


@dataclass(frozen=True)
class TrialRequest:
    """One trial (`from_space`), or on the driver a phase's trials, whose `point` and `seed`
    Tune fills in (`to_space`)."""

    base: Mapping[str, Any]  # the settings every trial of the sweep shares
    phase: str  # the phase tag: grid, grid-round<k>, search, final
    experiment_id: str
    parent_run_id: str
    threads: float  # the CPUs Ray gives the trial: torch's thread count
    log_model: bool = False  # log the trained model as the run's `model/` artifact
    point: Mapping[str, Any] | None = None  # the method configuration
    seed: int | None = None
    # Phase 1 of a search with repeats: the seeds each sampled configuration runs with.
    search_seeds: tuple[int, ...] = ()

    def config(self) -> TrialConfig:
        """The trial's validated configuration (a request of one trial)."""
        return trial_config(self.base, self.point or {}, self.seed)

    def run_name(self) -> str:
        """The trial's name in MLflow and in Tune: `<configuration> seed=<seed>`."""
        config = self.config()
        return f"{config.config_label()} seed={config.seed}"

    def to_space(
        self, points: list[dict] | None = None, seeds: list[int] | None = None
    ) -> dict[str, Any]:
        """Tune's `param_space`: one trial per point x seed when `points` and `seeds` are
        given (grid searches); without `points` the searcher samples the point (named
        `point/<name>`: sweeps/running/search.py DefineByRun), and with `search_seeds` Tune's
        Repeater runs it once per seed."""
        from ray import tune

        space: dict[str, Any] = {
            "base": dict(self.base),
            "threads": self.threads,
            "experiment_id": self.experiment_id,
            "parent_run_id": self.parent_run_id,
            "log_model": self.log_model,
            "phase": self.phase,
        }
        point = tune.grid_search(points) if points is not None else self.point
        seed = tune.grid_search(seeds) if seeds is not None else self.seed
        if point is not None:  # None: the searcher's
            space["point"] = point
        if seed is not None:
            space["seed"] = seed
        if self.search_seeds:
            space["search_seeds"] = list(self.search_seeds)
        return space

    @classmethod
    def from_space(cls, space: Mapping[str, Any]) -> TrialRequest:
        """The request of one trial from the space Tune gave it; its seed is its repeat's
        when Tune's Repeater numbered it. Raises ConfigError naming the keys a space lacks
        (a Tune state saved by another version, or damaged)."""
        missing = [key for key in REQUIRED_KEYS if key not in space]
        if missing:
            raise ConfigError(
                "trial space",
                sorted(space),
                f"the keys {', '.join(REQUIRED_KEYS)}; missing: {', '.join(missing)} (a Tune "
                "state from another version of sweeps/, or damaged: start the sweep afresh)",
            )
        search_seeds = tuple(space.get("search_seeds") or ())
        seed = space["seed"]
        if search_seeds and TRIAL_INDEX in space:
            seed = search_seeds[space[TRIAL_INDEX]]
        return cls(
            base=dict(space["base"]),
            phase=space["phase"],
            experiment_id=space["experiment_id"],
            parent_run_id=space["parent_run_id"],
            threads=space["threads"],
            log_model=bool(space.get("log_model")),
            point=dict(space["point"]),
            seed=seed,
            search_seeds=search_seeds,
        )


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
