"""Training objectives, one module per method family, registered by the name `method` takes.

Adding an objective: a module with a class that has `name`, `from_config(config, pad_id,
synonyms)`, `training_set(examples, encode, seed)` and `loss(model, batch)`; its entry
below; its hyperparameters in `config.METHOD_HYPERPARAMETERS`; and its name in the
`objectives` of each task that supports it (`xlt_core/tasks/`).
"""

from __future__ import annotations

from xlt_core.config import TrialConfig
from xlt_core.objectives.adversarial import Adversarial
from xlt_core.objectives.base import Objective
from xlt_core.objectives.ear import EAR, EARNoiseTarget, EARSentencePull
from xlt_core.objectives.finetune import FineTune
from xlt_core.objectives.smoothing import (
    RandomPerturbation,
    SynonymAugmentation,
    SyntacticAugmentation,
)

OBJECTIVES = {
    objective.name: objective
    for objective in (
        FineTune,
        EAR,
        EARNoiseTarget,
        EARSentencePull,
        Adversarial,
        RandomPerturbation,
        SynonymAugmentation,
        SyntacticAugmentation,
    )
}


def build_objective(
    config: TrialConfig, pad_id: int, synonyms: dict[str, list[str]] | None
) -> Objective:
    """The objective `config.method` names, with its hyperparameters."""
    return OBJECTIVES[config.method].from_config(config, pad_id, synonyms or {})
