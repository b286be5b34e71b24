"""Training objectives, one module per method family."""

from __future__ import annotations

from xlt_core.config import TrialConfig
from xlt_core.objectives.base import Objective


def build_objective(config: TrialConfig, pad_id: int, synonyms: dict[str, list[str]] | None) -> Objective:
    """The objective `config.method` names, with its hyperparameters."""
    if config.method == "ear":
        from xlt_core.objectives.ear import EAR

        return EAR(config.alpha, config.beta, config.layer, config.m, synonyms or {}, pad_id)
    from xlt_core.objectives.finetune import FineTune

    return FineTune(pad_id)
