"""What the sweep scripts share: `SweepSpec`, `experiment_spec` (a script's module to its
`SweepSpec`), the smoke budget, a paper preset's settings from its paper card
(`sweeps/spec/paper_cards.py`), the smoke data's languages and the data settings. Each experiment
itself (grids, seeds, test, selection metric, trial settings) is written out as data in its
own script, `sweeps/<name>.py`; what the scripts of one paper share lives in
`sweeps/families/`, never in another script.
"""

from __future__ import annotations

import functools
import itertools
import types
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from sweeps.spec.paper_cards import PAPER_PRESET, Departure, PaperCard, load_card, sweep_departures
from sweeps.spec.spaces import with_setting
from sweeps.spec.strategy import DEFAULT_STRATEGY
from sweeps.spec.trial_contract import trial_config
from xlt_core.config import MAX_SEED, TrialConfig
from xlt_core.errors import ConfigError

# Strategy `race`'s settings (`SweepSpec`'s race_* fields).
RACE_SETTINGS = ("race_alpha", "race_first_seeds", "race_test")
# The settings `--set` takes that belong to the sweep, not to a trial.
SWEEP_SETTINGS = (
    "seeds",
    "cpus_per_trial",
    "log_models",
    "search_trials",
    "top_k",
    "search_seeds",
    "search_concurrency",
    "confirm_seeds",
    *RACE_SETTINGS,
)

# Strategy `race`'s tests: analysis/seed_race.py's POOLED and PAIRED, named here for the
# settings' check (the spec imports no analysis; tests/sweeps/test_race_settings.py checks
# that they agree).
RACE_TESTS = ("pooled", "paired")


@dataclass(frozen=True)
class SweepSpec:
    """One sweep: common trial settings, the method configurations, and the seeds. Frozen:
    `--set`, a sweep file and `--set method=NAME` each make a new spec
    (`dataclasses.replace`), so a spec's configurations never change under its readers. Its
    dicts and lists are never changed in place either: copy, then replace."""

    experiment: str
    base: dict
    points: list[dict]
    seeds: list[int]
    # None: 1 CPU, or with --trials-per-gpu a share of a GPU node's CPUs
    # (sweeps/planning/trial_resources.py).
    cpus_per_trial: float | None = None
    preset: str = "smoke"
    strategy: str = DEFAULT_STRATEGY
    # The paper's test for this task, read by the report: ttest (paired t-test on per-example
    # scores averaged over seeds), permutation (NER), bootstrap (robust training).
    significance_test: str = "ttest"
    # Log each trial's trained model (`save_pretrained` folder) as its run's `model/`
    # artifact, so the report can register the selected one (`--set log_models=true`).
    log_models: bool = False
    # The dev metric the report selects on (parent-run param); None: English dev's.
    selection_metric: str | None = None
    extra_tags: dict = field(default_factory=dict)
    # Strategy `search` (sweeps/running/search.py): phase-1 samples, configurations re-run in
    # phase 2, and the hyperparameters fixed with --set (constants in the search space).
    search_trials: int = 4
    top_k: int = 1
    # Phase 1 ranks each sampled configuration on its mean over this many seeds (the sweep's
    # first ones; Tune's Repeater), so that a lucky seed does not win it.
    search_seeds: int = 1
    # Phase 1 draws at most this many configurations before results return (Tune's
    # ConcurrencyLimiter): unlimited on a large cluster, TPE would draw most of its samples
    # blind, close to random search.
    search_concurrency: int = 4
    # The confirmation phase every strategy ends with (sweeps/running/confirmation.py): the
    # selected configuration and the baseline re-run on this many fresh seeds, and the verdict
    # decided on them. None: as many as the sweep's seeds; 0: none (the verdict then corrects
    # for the selection instead: docs/statistics.md).
    confirm_seeds: int | None = None
    # Strategy `race` (sweeps/strategies/race.py, analysis/seed_race.py): the error rate of
    # dropping the best configuration (split Bonferroni over rounds x opponents), the seeds of
    # the first round (later rounds add one each up to the sweep's seeds), and the test
    # (pooled: one seed variance for all; paired: each pair's own).
    race_alpha: float = 0.05
    race_first_seeds: int = 2
    race_test: str = RACE_TESTS[0]
    fixed_axes: dict = field(default_factory=dict)
    # The paper card a paper preset is built from (None: smoke, or a script without one).
    paper_card: PaperCard | None = None
    # `--set seeds=auto`: the seeds added per round of sequential seeds (None: every seed
    # up front; sweeps/running/sequential_seeds.py).
    seed_rounds: tuple[int, ...] | None = None
    # `--set method=NAME`: where the replaced method's points come from, for the dry run
    # (sweeps/planning/method_override.py; a sweep file keeps the points themselves).
    method_line: str | None = field(default=None, compare=False)

    def __post_init__(self):
        # A sweep's own copies, never a script's module-level grids (which another spec of
        # the same script reads). Frozen: object.__setattr__ is the way in, here only.
        object.__setattr__(self, "base", dict(self.base))
        object.__setattr__(self, "points", [dict(point) for point in self.points])
        object.__setattr__(self, "seeds", list(self.seeds))
        object.__setattr__(self, "fixed_axes", dict(self.fixed_axes))
        object.__setattr__(self, "extra_tags", dict(self.extra_tags))

    def trial_config(
        self, point: Mapping[str, Any], seed: int | None = None, **extra
    ) -> TrialConfig:
        """One trial's validated configuration: the sweep's settings, then `point`'s, then
        `extra` (a searched value, say), then `seed` (None: TrialConfig's default). Raises
        ConfigError on a bad value."""
        return trial_config(self.base, point, seed, **extra)

    def configs(self) -> list[TrialConfig]:
        """Each point's validated configuration (default seed), in the points' order; built
        once per spec, on first use."""
        return list(self._configs)

    @functools.cached_property
    def _configs(self) -> tuple[TrialConfig, ...]:
        # Kept in the instance's __dict__, which a frozen dataclass leaves writable; not a
        # field, so neither compared nor carried over by dataclasses.replace.
        return tuple(self.trial_config(point) for point in self.points)

    def baseline_points(self) -> list[dict]:
        """The points without hyperparameters: plain fine-tuning of the original encoder."""
        return [
            point
            for point, config in zip(self.points, self.configs())
            if not config.hyperparameter_names()
        ]

    def confirmation_seeds(self) -> list[int]:
        """The confirmation phase's fresh seeds, `confirm_seeds` of them (default as many as
        the sweep's seeds; [] when 0): the next integers after the sweep's largest seed, or
        where they would pass MAX_SEED the smallest seeds it trains no trial with."""
        count = len(self.seeds) if self.confirm_seeds is None else self.confirm_seeds
        start = max(self.seeds) + 1
        if start + count - 1 <= MAX_SEED:
            return list(range(start, start + count))
        used = set(self.seeds)
        return list(itertools.islice((s for s in itertools.count() if s not in used), count))

    def departures(self) -> list[Departure]:
        """The departures from the paper this sweep makes, `--set` included (none without
        a card)."""
        if self.paper_card is None:
            return []
        return sweep_departures(
            self.paper_card, self.experiment, self.preset, self.base, self.seeds, self.fixed_axes
        )


# Every script has these presets; a paper's card may add others (ding2022: paper-xlmr), which
# the scripts that run them list in POINTS.
PRESET_NAMES = ("smoke", PAPER_PRESET)
# What every sweep script defines: its grids and seeds by preset, the report's test, and
# trial_settings(preset, data_dir) -> the settings every trial shares.
REQUIRED_NAMES = ("POINTS", "SEEDS", "SIGNIFICANCE_TEST", "trial_settings")


def experiment_spec(module: types.ModuleType, preset: str, data_dir: str | None) -> SweepSpec:
    """The sweep a script's module describes, for a preset (`smoke`, `paper`) and an optional
    `--data-dir`. The experiment is named after the script's file (`sweeps/adjust_ner.py`:
    `adjust_ner`). Required names: `POINTS` and `SEEDS` by preset, `SIGNIFICANCE_TEST`,
    `trial_settings(preset, data_dir)`. Optional, with their defaults: `SELECTION_METRIC`
    (None: English dev), `LOG_MODELS` by preset (False), `SEARCH` by preset, a dict of
    `search_trials` and `top_k` (`SweepSpec`'s: 4 and 1), `PAPER` (the name of the paper card
    its presets other than smoke are built from: their departures are printed and logged)."""
    missing = [name for name in REQUIRED_NAMES if not hasattr(module, name)]
    if missing:
        raise TypeError(
            f"{module.__name__} is not a sweep script: it lacks {', '.join(missing)} "
            f"(a sweep script defines {', '.join(REQUIRED_NAMES)})"
        )
    if preset not in module.POINTS:
        raise ConfigError(
            "--preset", preset, f"one of this sweep's presets: {', '.join(module.POINTS)}"
        )
    paper = getattr(module, "PAPER", None)
    return SweepSpec(
        Path(module.__file__).stem,
        module.trial_settings(preset, data_dir),
        module.POINTS[preset],
        module.SEEDS[preset],
        preset=preset,
        significance_test=module.SIGNIFICANCE_TEST,
        selection_metric=getattr(module, "SELECTION_METRIC", None),
        log_models=getattr(module, "LOG_MODELS", {}).get(preset, False),
        **getattr(module, "SEARCH", {}).get(preset, {}),
        paper_card=load_card(paper) if paper and preset != "smoke" else None,
    )


# The offline budget: a tiny BERT trained from scratch, minutes on two CPU cores.
SMOKE_TRAINING = {
    "model": "tiny",
    "learning_rate": 1e-3,
    "batch_size": 32,
    "epochs": 3.0,
    "evals_per_epoch": 2,
    "max_seq_length": 64,
    "warmup_ratio": 0.1,
    "tiny_hidden_size": 64,
    "tiny_layers": 6,
    "tiny_heads": 4,
}


def paper_settings(paper: str, experiment: str, preset: str, data_dir: str | None) -> dict:
    """A paper preset's trial settings: its card's (departures applied), then the data
    settings (`--data-dir`, else the hub)."""
    card = load_card(paper)
    return {**card.trial_settings(experiment, preset), **data_settings(data_dir, "hub")}


def paper_points(paper: str, experiment: str, preset: str, points: list[dict]) -> list[dict]:
    """`points` with the hyperparameters the card fixes (e.g. m = 3) set in every point
    that has them."""
    for name, value in load_card(paper).point_settings(experiment, preset).items():
        points = with_setting(points, name, value)
    return points


def paper_seeds(paper: str, experiment: str, presets: tuple[str, ...]) -> dict[str, list[int]]:
    """Each paper preset's seeds, from the card."""
    return {preset: load_card(paper).seeds(experiment, preset) for preset in presets}


# The paper presets' target languages are on their cards (English is the source everywhere).
# The synthetic data's pseudo-languages (xlt_core/data/synthetic.py).
SYNTHETIC_TARGETS = ("es", "de", "ru")
# The shared PAWS-X sample (../shared/data/pawsx) holds dev files only, in these targets.
LOCAL_PAWSX_TARGETS = ("de", "es", "fr")


def data_settings(data_dir: str | None, default_source: str) -> dict:
    """`--data-dir` given: local data in the XTREME layout; else the preset's own source."""
    if data_dir:
        return {"data_source": "local", "data_dir": data_dir}
    return {"data_source": default_source}


def setting_defaults() -> dict:
    """Each SweepSpec field's default (those that have one): the value a setting had in a sweep
    whose file was written before the setting existed."""
    return {f.name: f.default for f in fields(SweepSpec) if f.default is not MISSING}
