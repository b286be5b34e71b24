"""`--dry-run`: what a sweep would run and what it would cost, printed without starting Ray,
without network and without tracking anything: the configurations x seeds of each phase,
the trial count, the resources per trial, the languages, and per configuration the estimate of
`sweeps/planning/cost_model.py` (training tokens, GPU-hours, peak memory), with its assumptions.

The sweep's own settings checks run first (sweeps/planning/sweep_checks.py: every trial's values,
each task's methods, a search's ranges as the sweep would search them), so a dry run refuses
what the sweep refuses; local or synthetic training data is read to count it; the evaluation
files, a pretrained model's depth and the tracking store are checked when the sweep itself
starts (they may need the network).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sweeps.planning import cost_model
from sweeps.planning.sweep_checks import check_settings
from sweeps.planning.trial_resources import trial_resources
from sweeps.spec.experiment import SweepSpec
from sweeps.spec.model_shapes import model_shape
from sweeps.spec.paper_cards import preset_difference_lines, value_text
from sweeps.spec.strategy import strategy_named
from xlt_core.config import ADAPTATION_HYPERPARAMETERS, TrialConfig
from xlt_core.data.parallel import stage_targets

GIB = 2**30
# What an adjusted encoder depends on besides its language and seed (its cache key,
# xlt_core/adjustment.py): configurations that agree on these share their encoders.
ADJUSTMENT_SETTINGS = (
    *ADAPTATION_HYPERPARAMETERS["adjusted"],
    "adjust_batch_size",
    "parallel_data",
    "parallel_max_sentences",
    "parallel_pool_sentences",
)


@dataclass(frozen=True)
class Entry:
    """A configuration of a phase and how many of its trials the phase runs."""

    label: str
    config: TrialConfig
    trials: int


@dataclass(frozen=True)
class Phase:
    summary: str
    entries: list[Entry]

    @property
    def trials(self) -> int:
        return sum(entry.trials for entry in self.entries)


def print_plan(spec: SweepSpec, trials_per_gpu: int | None) -> int:
    """Print the plan; the exit status of a dry run (0)."""
    print(format_plan(spec, trials_per_gpu), flush=True)
    return 0


def sequential_lines(spec: SweepSpec) -> list[str]:
    """`--set seeds=auto`: the rounds and the design (the trials below are the maximum)."""
    if not spec.seed_rounds:
        return []
    from analysis.sequential import SequentialDesign

    design = SequentialDesign(tuple(spec.seed_rounds))
    return [
        f"Sequential seeds: {design.describe()}; the trials below are the maximum (a decided "
        "or futile configuration gets no more seeds)"
    ]


def format_plan(spec: SweepSpec, trials_per_gpu: int | None) -> str:
    """The plan as text. Raises ConfigError on a bad setting, as the sweep would."""
    check_settings(spec)
    configs, strategy = spec.configs(), strategy_named(spec.strategy)
    phases = strategy.plan(spec)
    phases += confirmation_phase(spec, configs, phases)
    total = sum(phase.trials for phase in phases)
    lines = [
        f"Dry run of {spec.experiment} (preset {spec.preset}, strategy {spec.strategy}): "
        "nothing started, nothing tracked.",
        f"Seeds ({len(spec.seeds)}): {', '.join(map(str, spec.seeds))}",
        *sequential_lines(spec),
        *(phase.summary for phase in phases),
        *([spec.method_line] if spec.method_line else []),
        f"Trials: {total}{strategy.plan_note(spec)}",
        *adjustment_lines(spec, configs),
        f"Resources per trial: {resources_text(spec, trials_per_gpu)}",
        training_text(configs[0]),
        language_text(configs),
        *paper_lines(spec),
        "",
        *estimate_lines(configs[0], phases),
    ]
    return "\n".join(lines)


# The trial settings the plan names: what sets a trial's training budget and numerics.
TRAINING_SETTINGS = (
    "model",
    "epochs",
    "learning_rate",
    "batch_size",
    "max_seq_length",
    "warmup_ratio",
    "precision",
)


def training_text(config: TrialConfig) -> str:
    """`Training: model=bert-base-multilingual-cased epochs=1 ...` (every trial's)."""
    values = " ".join(f"{name}={value_text(getattr(config, name))}" for name in TRAINING_SETTINGS)
    if config.precision == "fp32":
        # sweeps/planning/cost_model.py's throughput is bf16 tensor cores'.
        values += " (the GPU-hours below assume bf16: fp32 trains several times slower)"
    return f"Training (every trial): {values}"


def language_text(configs: list[TrialConfig]) -> str:
    """`Languages: source en (training); targets (14, zero-shot): ar, bg, ...`, over every
    configuration (ding2022 Table 5's sweep trains from three sources)."""
    sources = list(dict.fromkeys(config.source_lang for config in configs))
    targets = list(dict.fromkeys(lang for config in configs for lang in config.target_langs))
    extra = [
        name
        for name, evaluated in (
            ("the generalized pairs", any(config.generalized_pairs for config in configs)),
            ("mixed-language XNLI", any(config.mixed_language for config in configs)),
        )
        if evaluated
    ]
    return (
        f"Languages: source {', '.join(sources)} (training); targets ({len(targets)}, "
        f"zero-shot): {', '.join(targets)}" + (f"; also {' and '.join(extra)}" if extra else "")
    )


def paper_lines(spec: SweepSpec) -> list[str]:
    """A paper preset's card and its departures from the paper (`--set` included)."""
    card = spec.paper_card
    if card is None:
        return []
    departures = spec.departures()
    return [
        f"Paper card: {card.paper} (sweeps/papers/{card.path.name})",
        *preset_difference_lines(card, spec.experiment, spec.preset),
        f"Departures from {card.citation}: {len(departures)}",
        *(f"  - {departure.line()}" for departure in departures),
    ]


def adjustment_lines(spec: SweepSpec, configs: list[TrialConfig]) -> list[str]:
    """The adjusted encoders a sweep computes: one per (target language, seed) and adjustment
    settings, each adjusted on that language's pairs only and fine-tuned by every trial of
    an adjusted configuration (k fine-tunings per trial: xlt_core/language_stages.py);
    configurations with the same adjustment settings share them through the cache."""
    adjusted = [config for config in configs if config.adjusted]
    if not adjusted:
        return []
    settings = {tuple(getattr(c, name) for name in ADJUSTMENT_SETTINGS) for c in adjusted}
    stages = {lang: targets for c in adjusted for lang, targets in stage_targets(c).items()}
    per_setting = len(stages) * len(spec.seeds)
    lines = [
        f"Adjusted encoders: {per_setting * len(settings)} = {len(stages)} languages "
        f"({', '.join(stages)}) x {len(spec.seeds)} seeds"
        + (f" x {len(settings)} adjustment settings" if len(settings) > 1 else "")
        + ", one per (language, seed), each adjusted on its en-<language> pairs only; "
        f"each of the {len(adjusted)} adjusted configurations' trials fine-tunes "
        f"{len(stages)} models, one per language",
    ]
    for lang, targets in stages.items():
        also = (
            f" (and {', '.join(targets[1:])}, which have no parallel data)" if targets[1:] else ""
        )
        lines.append(
            f"  - {lang}: {len(spec.seeds)} encoders (seeds {', '.join(map(str, spec.seeds))}), "
            f"tested on {lang}{also}; English and dev: the mean over the {len(stages)} models"
        )
    return lines


def config_step_cost(config: TrialConfig) -> float:
    """A configuration's cost per training example relative to fine-tuning's."""
    return cost_model.step_cost(config) * cost_model.items_per_example(config)


def confirmation_phase(
    spec: SweepSpec, configs: list[TrialConfig], phases: list[Phase]
) -> list[Phase]:
    """The confirmation phase (sweeps/running/confirmation.py): the selected configuration and
    the baseline on fresh seeds; the selected one is unknown until the sweep ran, so it is
    counted as the costliest candidate (an upper bound). None with confirm_seeds=0."""
    seeds = spec.confirmation_seeds()
    baselines = [config for config in configs if not config.hyperparameter_names()]
    candidates = [
        entry.config for phase in phases for entry in phase.entries if entry.config not in baselines
    ]
    if not seeds or not baselines or not candidates:
        return []
    costliest = max(candidates, key=config_step_cost)
    n = len(seeds)
    return [
        Phase(
            f"Confirmation: the configuration selected on dev and the baseline x {n} fresh "
            f"seed{'s' if n > 1 else ''} ({', '.join(map(str, seeds))}) = {2 * n} trials, none "
            "if the baseline is selected; the verdict is decided on these (confirm_seeds=0: "
            "no confirmation, the verdict corrected for the selection instead)",
            [
                Entry(baselines[0].config_label(), baselines[0], n),
                Entry(
                    f"the selected configuration ({costliest.config_label()}, costliest candidate)",
                    costliest,
                    n,
                ),
            ],
        )
    ]


def resources_text(spec: SweepSpec, trials_per_gpu: int | None) -> str:
    """What each trial asks Ray for (sweeps/planning/trial_resources.py); with
    --trials-per-gpu and no cpus_per_trial the CPUs depend on the cluster, which a dry run
    does not contact."""
    resources = trial_resources(spec.cpus_per_trial, trials_per_gpu, {})
    if trials_per_gpu is None:
        return (
            f"{resources['cpu']:g} CPU, no GPU (trials train on CPU; "
            "--trials-per-gpu K gives each a K-th of a GPU)"
        )
    cpus = (
        f"{resources['cpu']:g} CPU"
        if spec.cpus_per_trial is not None
        else f"the cluster's CPUs per GPU / {trials_per_gpu} (at least 1; read when Ray starts)"
    )
    return f"{resources['gpu']:g} GPU (1/{trials_per_gpu}), {cpus}"


def training_examples(config: TrialConfig) -> int:
    """Training examples per epoch: the hub set's size, or counted in the synthetic or
    local data (read as the trial reads it), at most max_train_examples."""
    if config.data_source == "hub":
        return min(cost_model.TASK_DATA[config.task].train, config.max_train_examples or math.inf)
    from xlt_core.tasks import TASKS  # torch loads here, only for data read locally

    return len(TASKS[config.task].load_training(config))


def estimate_lines(first: TrialConfig, phases: list[Phase]) -> list[str]:
    shape = model_shape(first)
    if shape is None:
        return [
            f"Estimate: none for model {first.model} (not in sweeps/spec/model_shapes.py "
            "MODEL_SHAPES, not a local directory with a BERT-style config.json)"
        ]
    examples = training_examples(first)
    source = "hub" if first.data_source == "hub" else f"counted in the {first.data_source} data"
    lines = [
        f"Estimate per trial (model {first.model}, {shape.params / 1e6:.1f}M parameters, "
        f"{shape.body_params / 1e6:.1f}M non-embedding; task {first.task}, "
        f"{examples:,} training examples per epoch ({source}), "
        f"{cost_model.example_tokens(first):.1f} tokens per example):",
        f"  {'trials':>6}  {'train tokens':>12}  {'GPU-hours':>9}  {'peak GiB':>8}  configuration",
    ]
    total = 0.0
    for phase in phases:
        for entry in phase.entries:
            trial = cost_model.estimate_trial(entry.config, shape, examples)
            total += trial.gpu_hours * entry.trials
            lines.append(
                f"  {entry.trials:>6}  {trial.train_tokens:>12.3g}  {trial.gpu_hours:>9.3g}  "
                f"{trial.peak_bytes / GIB:>8.3g}  {entry.label}"
            )
    return [
        *lines,
        f"Total: {total:.3g} GPU-hours for {sum(p.trials for p in phases)} trials; "
        f"{cost_model.GPU_ASSUMPTION}.",
        "FLOPs: 6 x non-embedding parameters per training token x the objective's step cost "
        f"vs fine-tuning (EAR {cost_model.EAR_STEP_COST}x, ADV 1 + "
        f"{cost_model.ADV_ASCENT_STEP_COST} per ascent step, RS-DA 1x per copy: CPU ratios "
        "measured at mBERT-base dimensions by make bench), 2 x per evaluated token, plus the "
        "adjustment stage; tokens: examples x epochs x copies x typical length x padding "
        f"({cost_model.GROUPED_PADDING} length-grouped, {cost_model.RANDOM_PADDING} random); "
        "evaluation sets at the hub's sizes. Sources: sweeps/planning/cost_model.py; "
        "the step costs: "
        "xlt_core/objectives/declarations.py.",
        "Peak memory: a formula, not measured: 16 bytes per parameter (fp32 weights, "
        "gradients, AdamW moments) + activations s*b*h*(34 + 5*a*s/h) bytes per layer "
        "(Korthikanti et al. 2022) at s = max_seq_length; excludes the CUDA context.",
    ]
