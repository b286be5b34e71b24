"""Training objectives, one module per method family."""

from __future__ import annotations

from xlt_core.config import TrialConfig
from xlt_core.objectives.base import Objective


def build_objective(
    config: TrialConfig, pad_id: int, synonyms: dict[str, list[str]] | None
) -> Objective:
    """The objective `config.method` names, with its hyperparameters."""
    if config.method == "ear":
        from xlt_core.objectives.ear import EAR

        return EAR(config.alpha, config.beta, config.layer, config.m, synonyms or {}, pad_id)
    if config.method == "adv":
        from xlt_core.objectives.adversarial import Adversarial

        return Adversarial(config.epsilon, config.adv_steps, config.adv_step_scale, pad_id)
    if config.method == "rs_rp":
        from xlt_core.objectives.smoothing import RandomPerturbation

        return RandomPerturbation(config.epsilon, config.seed, pad_id)
    if config.method == "rs_da":
        from xlt_core.objectives.smoothing import SynonymAugmentation

        return SynonymAugmentation(
            config.m, config.rs_da_variant == "keep_originals", synonyms or {}, pad_id
        )
    from xlt_core.objectives.finetune import FineTune

    return FineTune(pad_id)
