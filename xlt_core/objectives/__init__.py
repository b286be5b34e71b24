"""Training objectives, one module per method family, found by the name `method` takes.

Adding an objective (docs/extending.md): a class with `name`, `from_config(config, pad_id,
synonyms)`, `training_set(examples, encode, seed)` and `loss(model, batch)`
(`objectives/base.py`), and one `registry.ObjectiveDeclaration` naming it: the built-in
ones in `objectives/declarations.py`, a plugin's in a module named in XLT_PLUGINS. Every
table that lists objectives derives from the declarations; the tasks whose declaration says
`objectives=ALL` (the pair tasks) support it at once. This package imports no torch: a
class is imported when a trial builds its objective.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlt_core import registry
from xlt_core.errors import ConfigError

if TYPE_CHECKING:
    from xlt_core.config import TrialConfig
    from xlt_core.objectives.base import Objective

# Objective name -> its class, imported on first lookup.
OBJECTIVES = registry.LazyImplementations(
    registry.objective_names,
    lambda name: registry.resolve(registry.objective(name), "implementation"),
)


def build_objective(
    config: TrialConfig, pad_id: int, synonyms: dict[str, list[str]] | None
) -> Objective:
    """The objective `config.method` names, with its hyperparameters. One that trains on
    synonym copies refuses an empty or missing table (its copies would equal the originals),
    and so does one whose class keeps a table (a `synonyms` attribute, as EAR's subclasses)
    but whose declaration leaves `uses_synonyms` off: no trial would load it one."""
    declaration = registry.objective(config.method)
    if declaration.uses_synonyms and not synonyms:
        raise ConfigError(
            "synonyms",
            config.synonyms,
            f"a neighbour table with entries: method={config.method} trains on synonym "
            "copies, which without one would equal their originals",
        )
    objective = OBJECTIVES[config.method].from_config(config, pad_id, synonyms or {})
    if not declaration.uses_synonyms and hasattr(objective, "synonyms"):
        raise registry.DeclarationError(
            "objective",
            config.method,
            "uses_synonyms",
            "True: its class keeps a synonym table, which the trial loads only for an "
            "objective declared with uses_synonyms=True",
        )
    return objective
