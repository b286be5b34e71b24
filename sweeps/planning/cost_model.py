"""What one trial costs, estimated before any GPU is spent (`--dry-run`, `sweeps/planning/plan.py`):
training tokens, FLOPs, GPU-hours at an assumed throughput, and peak training memory.

Everything that is not counted from the trial's settings is a constant below with its
source. No figure here was measured on a GPU by this project: the step-cost ratios were
measured on CPU (`make bench`), the GPU throughput is a datasheet peak times an assumed
utilisation, and peak memory is a formula.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from sweeps.spec.model_shapes import ModelShape
from xlt_core import registry
from xlt_core.config import TrialConfig
from xlt_core.data.parallel import parallel_targets, stage_targets

# The GPU the GPU-hours assume: NVIDIA A100, dense bf16 tensor-core peak (A100 datasheet),
# at 40% model FLOPs utilisation, issue 10's target for bf16 fine-tuning at mBERT-base.
GPU_PEAK_FLOPS = 312e12
GPU_MFU = 0.40
GPU_ASSUMPTION = (
    "assumes an A100, bf16, 312 TFLOP/s peak at 40% MFU (124.8 TFLOP/s): "
    "not measured on a GPU by this project"
)

# A training step's cost relative to a fine-tuning step on the same batch, whether an
# objective trains on copies and how its rows pair: its declaration's (step costs measured on
# CPU by `make bench`, their sources in xlt_core/objectives/declarations.py). EAR's and
# ADV's per ascent step, for messages.
EAR_STEP_COST = registry.objective("ear").step_cost
ADV_ASCENT_STEP_COST = registry.objective("adv").ascent_step_cost
# The hyperparameters a trial's cost depends on (the others only change the loss).
COST_HYPERPARAMETERS = ("m", "adv_steps")

# Padded tokens per real token. Issue 10, measured on real XNLI: 1.03 with length-grouped
# training batches (`group_by_length`), 1.75 with random batches at mBERT's vocabulary.
# Evaluation batches are sorted by length: taken as the grouped figure (assumption).
GROUPED_PADDING = 1.03
RANDOM_PADDING = 1.75

# Tokens per whitespace word: XNLI pairs average 39.4 tokens under an mBERT-size WordPiece
# vocabulary (docs/benchmarks.md, the stand-in tokenizer trained on the sample) and 33.85
# words (premise + hypothesis, ../shared/data/xnli/train-en.tsv, 999 pairs).
TOKENS_PER_WORD = 39.4 / 33.85


# Each task's hub data sizes and typical example length (`registry.TaskData`), from its
# declaration (sources in xlt_core/tasks/declarations.py), read at each use.
TASK_DATA = registry.DerivedTable(registry.task_names, lambda name: registry.task(name).data)
# Words per parallel sentence (adjustment, continual alignment): the English side of
# ../shared/data/parallel/opensubtitles-en-vi (1,000 sentences), standing in for OPUS-100.
PARALLEL_WORDS = 8.32
# FLOPs per parallel pair and non-embedding parameter per token of one sentence: the
# trained encoder's forward and backward on both sentences (2 x 6) and the frozen copy's
# forward on the English one (2) (objectives/alignment.py `alignment_losses`).
PAIR_FLOPS_PER_PARAM_TOKEN = 14


@dataclass(frozen=True)
class TrialEstimate:
    train_tokens: float  # padded tokens the trial's training steps process
    flops: float  # training, adjustment and evaluation
    peak_bytes: float  # training memory at the widest batch

    @property
    def gpu_hours(self) -> float:
        return self.flops / (GPU_PEAK_FLOPS * GPU_MFU) / 3600


def step_cost(config: TrialConfig) -> float:
    """A training step's cost relative to a fine-tuning step on the same batch (plus, for
    an objective that makes ascent steps, their cost)."""
    declaration = registry.objective(config.method)
    if not declaration.ascent_step_cost:
        return declaration.step_cost
    return declaration.step_cost + declaration.ascent_step_cost * config.objective.adv_steps


def items_per_example(config: TrialConfig) -> int:
    """Training items per training example: the m copies of the objectives that train on
    copies (plus the original where their declaration says it is kept)."""
    declaration = registry.objective(config.method)
    if not declaration.copies:
        return 1
    kept = declaration.original_kept_when
    settings = config.objective
    return settings.m + int(kept is not None and getattr(settings, kept[0]) == kept[1])


def example_tokens(config: TrialConfig) -> float:
    """A typical training (and dev) example's tokens, at most max_seq_length."""
    data = registry.task(config.task).data
    return example_text_tokens(data.train_words or data.words, config)


def example_text_tokens(words: float, config: TrialConfig) -> float:
    """The tokens of a text of `words` words, at most max_seq_length."""
    return min(words * TOKENS_PER_WORD, config.max_seq_length)


def evaluated_tokens(config: TrialConfig, trains: bool) -> float:
    """Tokens evaluated in one trial: English dev at every evaluation during training and
    once at the end, every language's test, the generalized pairs and mixed-language sets.
    Hub sizes, each set capped by max_eval_examples."""
    data = registry.task(config.task).data
    cap = config.max_eval_examples or math.inf
    dev, test = min(data.dev, cap), min(data.test, cap)
    languages = len(config.target_langs) + 1
    test_sets = languages if data.source_tested else languages - 1
    if config.generalized_pairs:
        test_sets += languages * (languages - 1)
    if config.mixed_language:
        test_sets += len(config.target_langs)
    evaluations = math.ceil(config.epochs * config.evals_per_epoch) + 1 if trains else 1
    return dev * evaluations * example_tokens(config) + test * test_sets * example_text_tokens(
        data.words, config
    )


def adaptation_flops(config: TrialConfig, body_params: int, train_steps: float) -> float:
    """The adjustment stage (the sample of each target language with parallel data,
    adjust_epochs times) and, for adjusted_continual, continual_pairs parallel pairs every
    training step. Counted in every trial, an upper bound: trials with the same adjustment,
    language and seed share one adjusted encoder through the cache."""
    if config.adaptation == "none":
        return 0.0
    languages = len(parallel_targets(config))
    pairs = languages * config.parallel_max_sentences * config.adjust_epochs
    if config.adaptation == "adjusted_continual":
        pairs += train_steps * config.continual_pairs
    sentence_tokens = PARALLEL_WORDS * TOKENS_PER_WORD
    return pairs * sentence_tokens * PAIR_FLOPS_PER_PARAM_TOKEN * body_params


def peak_memory(config: TrialConfig, shape: ModelShape, trains: bool) -> float:
    """Bytes: 16 per parameter (fp32 weights and gradients, AdamW's two moments; bf16
    autocast keeps fp32 weights) plus the activations a backward pass keeps, per layer
    s*b*h*(34 + 5*a*s/h) bytes (Korthikanti et al. 2022, 16-bit activations, no
    recomputation) at s = max_seq_length and b = the batch's rows; adjusted_continual adds
    the frozen encoder's fp32 weights. A task without training keeps the weights only.
    Not included: the CUDA context and the allocator's slack."""
    if not trains:
        return 4.0 * shape.params
    rows = config.batch_size * (2 if registry.objective(config.method).paired_rows else 1)
    s, h = config.max_seq_length, shape.hidden
    activations = shape.layers * s * rows * h * (34 + 5 * shape.heads * s / h)
    frozen = 4.0 * shape.params if config.adaptation == "adjusted_continual" else 0.0
    return 16.0 * shape.params + activations + frozen


def language_stages(config: TrialConfig) -> list[TrialConfig]:
    """What one trial fine-tunes: for an adaptation, one model per target language with
    parallel data, each adjusted on that language only and evaluated on its stage's targets
    (xlt_core/language_stages.py); otherwise the trial's one model."""
    if not config.adjusted:
        return [config]
    return [
        dataclasses.replace(config, target_langs=targets)
        for targets in stage_targets(config).values()
    ]


def estimate_trial(config: TrialConfig, shape: ModelShape, train_examples: int) -> TrialEstimate:
    """One trial's cost: the sum over its language stages (k fine-tunings for an adjusted
    trial with k target languages), its peak memory the largest stage's."""
    stages = [estimate_stage(stage, shape, train_examples) for stage in language_stages(config)]
    return TrialEstimate(
        sum(stage.train_tokens for stage in stages),
        sum(stage.flops for stage in stages),
        max(stage.peak_bytes for stage in stages),
    )


def estimate_stage(config: TrialConfig, shape: ModelShape, train_examples: int) -> TrialEstimate:
    """One model's cost (no training examples: a task that evaluates the encoder as it is).
    FLOPs per token: 6 x non-embedding parameters for a training step
    (Kaplan et al. 2020; embedding lookups are not matrix products), times the objective's
    step cost; 2 x for an evaluated token. The attention-score term (6 x layers x s x h per
    token) is left out: under 2% at 128 tokens for mBERT."""
    trains = train_examples > 0
    items = train_examples * items_per_example(config)
    padding = GROUPED_PADDING if config.group_by_length else RANDOM_PADDING
    train_tokens = items * config.epochs * example_tokens(config) * padding
    train_steps = math.ceil(items / config.batch_size) * config.epochs
    eval_tokens = evaluated_tokens(config, trains) * GROUPED_PADDING
    flops = (
        6 * shape.body_params * train_tokens * step_cost(config)
        + 2 * shape.body_params * eval_tokens
        + adaptation_flops(config, shape.body_params, train_steps)
    )
    return TrialEstimate(train_tokens, flops, peak_memory(config, shape, trains))
