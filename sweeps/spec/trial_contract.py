"""The trial contract: what the driver asks of a Ray Tune trial and how it travels
(`TrialRequest`), and what a trial reports back (the keys of its final result, its failure
text, its checkpoint read back).

The driver writes a phase's request into Tune's `param_space` (`to_space`); Tune resolves it
into one space per trial (a grid over points and seeds, or a sampled point) and hands that to
the worker, which reads it back with `from_space`; the driver reads the phase's results with
`from_space` too. Tune writes the spaces to disk (params.json, the experiment state) and
restores them with `--resume`, so the keys stay the ones earlier sweeps wrote.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from xlt_core.config import TrialConfig
from xlt_core.errors import ConfigError, TrainingDiverged
from xlt_core.temp_folders import owned_temporary_directory
from xlt_schema import DIVERGED_FAILURE

# Keys of a trial's final Ray result that the runner reads.
TRIAL_COMPLETE = "trial_complete"  # the trial ran to its end (not stopped early by ASHA)
MLFLOW_LOGGED = "mlflow_logged"  # False: the results wait in the checkpoint to be re-logged
MLFLOW_RUN_ID = "mlflow_run_id"
FAILURE = "failure"
# The keys of every trial's space. `log_model` and `search_seeds` are optional.
REQUIRED_KEYS = ("base", "point", "seed", "threads", "experiment_id", "parent_run_id", "phase")
# Tune's Repeater (`set_index=True`) numbers the repeats of a sampled configuration here.
TRIAL_INDEX = "__trial_index__"


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


def failure_text(error: BaseException) -> str:
    """What a failed trial's run says in its failure tag (and Tune in its result): the error's
    class and message. A diverged loss's starts with DIVERGED_FAILURE, which analysis reads."""
    kind = DIVERGED_FAILURE if isinstance(error, TrainingDiverged) else type(error).__name__
    return f"{kind}: {error}"


@contextlib.contextmanager
def checkpoint_copy(checkpoint) -> Iterator[str]:
    """A local copy of a Ray checkpoint in a private (0700) folder, deleted when the block
    ends. Not a bare `Checkpoint.to_directory()`: that copies into a world-readable
    `checkpoint_tmp_*` folder in the system temp directory that nothing deletes (a model
    and its optimizer state: ~2 GB at mBERT size)."""
    with owned_temporary_directory("xlt-checkpoint-") as directory:
        yield checkpoint.to_directory(directory)
