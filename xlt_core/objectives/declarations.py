"""The built-in objectives, one declaration each (fields: `xlt_core/registry.py`).

Step costs: a training step's cost relative to a fine-tuning step on the same batch,
measured on CPU at mBERT-base dimensions (batch 8, random weights) by `make bench`, run of
2026-12-01 01:11 UTC (docs/benchmarks.md): EAR 1.66x (its batch stacks the originals above
their copies); ADV 1.52x with one FGSM step; RS-RP 1.01x; RS-DA 1.00x per step (but m times
the steps: it trains on copies). The EAR variants run the same passes as EAR and RS-syntax
the same as fine-tuning: assumed, not measured. A new `make bench` run updates these.
"""

from xlt_core.registry import ObjectiveDeclaration, register_objective

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
        hyperparameters=("alpha", "beta", "layer", "m"),
        # Strategy `search`: around both published settings (alpha 0.1-1.8, beta 0.1-1)
        # and over the paper's layers; m = 1 keeps a smoke search cheap, a paper preset's
        # search keeps its card's m (sweeps/running/search.py fixed_axes).
        search_ranges={
            "alpha": ("float", 0.1, 2.0, 0.1),
            "beta": ("float", 0.05, 1.0, 0.05),
            "layer": ("choice", (3, 6, 9, 12)),
            "m": ("choice", (1,)),
        },
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
        hyperparameters=("epsilon", "adv_steps", "adv_step_scale"),
        perturbs=True,
    )
)
# Randomized smoothing with random perturbations (huang2021).
register_objective(
    ObjectiveDeclaration(
        name="rs_rp",
        implementation=f"{_SMOOTHING_CLASSES}:RandomPerturbation",
        step_cost=1.01,
        hyperparameters=("epsilon",),
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
        hyperparameters=("m", "rs_da_variant"),
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
        hyperparameters=("beta", "layer", "m", "noise_sigma"),
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
        hyperparameters=("alpha", "beta", "layer", "m"),
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
        hyperparameters=("m", "swap_probability"),
        copies=True,
    )
)
