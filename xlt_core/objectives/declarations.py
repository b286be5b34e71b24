"""The built-in objectives, one declaration each (fields: `xlt_core/registry.py`).

Step costs: a training step's cost relative to a fine-tuning step on the same batch,
measured on CPU at mBERT-base dimensions (batch 8, random weights) by `make bench`, run of
2026-12-01 01:11 UTC (docs/benchmarks.md): EAR 1.66x (its batch stacks the originals above
their copies); ADV 1.52x with one FGSM step; RS-RP 1.01x; RS-DA 1.00x per step (but m times
the steps: it trains on copies). The EAR variants run the same passes as EAR and RS-syntax
the same as fine-tuning: assumed, not measured. A new `make bench` run updates these.

Their settings (`objective_settings.setting`) come first, each declared once, in the order
`--help` and a trial's dict list them; an objective's settings class inherits those it has.
"""

from dataclasses import dataclass

from xlt_core.objective_settings import setting
from xlt_core.registry import ObjectiveDeclaration, register_objective


@dataclass(frozen=True)
class EmbeddingPush:
    """EAR's weight of EPT (ear, ear_srpt): loss = CE(x) + CE(x^a) + alpha*EPT + beta*APT."""

    # Strategy `search` (here and below, EAR's): around both published settings (alpha
    # 0.1-1.8, beta 0.1-1) and over the paper's layers; m = 1 keeps a smoke search cheap, a
    # paper preset's search keeps its card's m (sweeps/running/search.py fixed_axes).
    alpha: float = setting(
        1.0,
        at_least=0.0,
        search=("float", 0.1, 2.0, 0.1),
        source="ding2022 L1793: the best alpha is 1.0 (Table A.3)",
    )


@dataclass(frozen=True)
class EarTargets:
    """The EAR family's weight of its second target (APT, or SRPT) and the layer it reads."""

    beta: float = setting(
        0.1,
        at_least=0.0,
        search=("float", 0.05, 1.0, 0.05),
        source="ding2022 L1793: beta = 0.1 while alpha is selected (Table A.2 chose it)",
    )
    # 1-based, as in the paper ("layer 6" = attentions[5]).
    layer: int = setting(
        6,
        at_least=1,
        search=("choice", (3, 6, 9, 12)),
        source='ding2022 L1786, L1793: "the 6-th layer"',
    )


@dataclass(frozen=True)
class Copies:
    """The objectives that train on copies of every example: how many."""

    # EAR pairs each copy with its original.
    m: int = setting(
        1,
        at_least=1,
        search=("choice", (1,)),
        source="smoke value; the cards: 3 on XNLI, 10 on PAWS-X (ding2022 L1725, huang2021 L166)",
    )


@dataclass(frozen=True)
class NoiseTarget:
    """ear_nt: the standard deviation of the Gaussian noise on the copies' word embeddings."""

    # The ear_targets paper preset sweeps 0.001, 0.01 and 0.1.
    noise_sigma: float = setting(
        0.01,
        above=0,
        source="ding2022 does not give it; the radius ADV and RS-RP use (epsilon), so NT "
        "perturbs about as strongly as the robust baselines",
    )


@dataclass(frozen=True)
class SynonymTable:
    """The objectives that draw synonym copies: how much of the neighbour table they use."""

    # A subsample drawn once per fraction, the same for every seed; a study setting.
    dictionary_scale: float = setting(
        1.0,
        above=0,
        at_most=1,
        hyperparameter=False,
        source="the whole table; ding2022 Table 6 varies the fraction of its entries kept",
    )


@dataclass(frozen=True)
class AdjacentSwaps:
    """rs_syntax: the probability of each adjacent-word swap."""

    swap_probability: float = setting(
        0.1, above=0, at_most=1, source='huang2021 L220: "with a probability $p=0.1$"'
    )


@dataclass(frozen=True)
class Ball:
    """Robust training (Huang et al. 2021): an L-inf ball of radius epsilon around the vectors
    at `perturbation_site` (objectives/perturbation.py): the encoder's output fed to the task
    head, the paper's Enc(x) (so that smoke runs the paper's path), or the word embeddings
    (`inputs_embeds`, before position/type)."""

    epsilon: float = setting(
        0.01, above=0, source="huang2021 L166's grid {0.001, 0.01, 0.1, 1.0}, one point"
    )
    perturbation_site: str = setting(
        "encoder_output",
        choices=("encoder_output", "word_embeddings"),
        hyperparameter=False,
        source="huang2021 L84, L102: the perturbation is added to Enc(x)",
    )


@dataclass(frozen=True)
class Ascent:
    """ADV's projected gradient-sign ascent: its steps (1 = FGSM) and each step's size."""

    adv_steps: int = setting(1, at_least=1, source="huang2021 does not state it (its card)")
    adv_step_scale: float = setting(  # each ascent step is adv_step_scale * epsilon
        1.0, above=0, source="huang2021 does not state it: a step of the ball's radius"
    )


@dataclass(frozen=True)
class RsDaVariant:
    """RS-DA as released trains on the m copies only; keep_originals also on each original."""

    rs_da_variant: str = setting(
        "released",
        choices=("released", "keep_originals"),
        source="uclanlp/Robust-XLT perturb.py writes only the m copies",
    )


@dataclass(frozen=True)
class EarSettings(EmbeddingPush, EarTargets, Copies, SynonymTable):
    """EAR's and EAR-SRPT's settings."""


@dataclass(frozen=True)
class EarNoiseTargetSettings(EarTargets, Copies, NoiseTarget, SynonymTable):
    """EAR-NT's settings: no alpha (NT is a perturbation, not a weighed loss term)."""


@dataclass(frozen=True)
class AdvSettings(Ball, Ascent):
    """ADV's settings."""


@dataclass(frozen=True)
class RsDaSettings(Copies, SynonymTable, RsDaVariant):
    """RS-DA's settings."""


@dataclass(frozen=True)
class RsSyntaxSettings(Copies, AdjacentSwaps):
    """RS-syntax's settings."""


EAR_STEP_COST = 1.66
_EAR_CLASSES = "xlt_core.objectives.ear"
_SMOOTHING_CLASSES = "xlt_core.objectives.smoothing"

register_objective(
    ObjectiveDeclaration(
        name="finetune", implementation="xlt_core.objectives.finetune:FineTune", step_cost=1.0
    )
)
# EAR (Ding et al. 2022): loss = CE(x) + CE(x^a) + alpha*EPT + beta*APT on m synonym copies.
register_objective(
    ObjectiveDeclaration(
        name="ear",
        implementation=f"{_EAR_CLASSES}:EAR",
        step_cost=EAR_STEP_COST,
        settings=EarSettings,
        searched=True,
        uses_synonyms=True,
        copies=True,
        paired_rows=True,
    )
)
# Adversarial training (huang2021): projected gradient-sign ascent in an L-inf ball;
# 1 + 0.52 per ascent step (the bench's 1.52x at one step; linear in adv_steps is an
# assumption: each ascent step is one more forward and backward).
register_objective(
    ObjectiveDeclaration(
        name="adv",
        implementation="xlt_core.objectives.adversarial:Adversarial",
        step_cost=1.0,
        ascent_step_cost=0.52,
        settings=AdvSettings,
        perturbs=True,
    )
)
# Randomized smoothing with random perturbations (huang2021).
register_objective(
    ObjectiveDeclaration(
        name="rs_rp",
        implementation=f"{_SMOOTHING_CLASSES}:RandomPerturbation",
        step_cost=1.01,
        settings=Ball,
        perturbs=True,
    )
)
# Randomized smoothing with synonym data augmentation (huang2021): RS-DA as released trains
# on the m copies only; keep_originals trains on each original too.
register_objective(
    ObjectiveDeclaration(
        name="rs_da",
        implementation=f"{_SMOOTHING_CLASSES}:SynonymAugmentation",
        step_cost=1.0,
        settings=RsDaSettings,
        uses_synonyms=True,
        copies=True,
        original_kept_when=("rs_da_variant", "keep_originals"),
    )
)
# ding2022 Tables 4 / A.4: EAR with the Noise Target for EPT ...
register_objective(
    ObjectiveDeclaration(
        name="ear_nt",
        implementation=f"{_EAR_CLASSES}:EARNoiseTarget",
        step_cost=EAR_STEP_COST,
        settings=EarNoiseTargetSettings,
        uses_synonyms=True,
        copies=True,
        paired_rows=True,
    )
)
# ... or SRPT for APT.
register_objective(
    ObjectiveDeclaration(
        name="ear_srpt",
        implementation=f"{_EAR_CLASSES}:EARSentencePull",
        step_cost=EAR_STEP_COST,
        settings=EarSettings,
        uses_synonyms=True,
        copies=True,
        paired_rows=True,
    )
)
# huang2021 Table 3: randomized smoothing on m copies with adjacent words swapped.
register_objective(
    ObjectiveDeclaration(
        name="rs_syntax",
        implementation=f"{_SMOOTHING_CLASSES}:SyntacticAugmentation",
        step_cost=1.0,
        settings=RsSyntaxSettings,
        copies=True,
    )
)
