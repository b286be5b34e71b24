"""Training objectives, one module per method family, found by the name `method` takes.

Adding an objective (docs/extending.md): a class with `from_config(config, pad_id,
synonyms)`, `training_set(examples, encode, seed)` and `loss(model, batch)`
(`objectives/base.py`), and one `registry.ObjectiveDeclaration` naming it and its settings
(a dataclass of `objective_settings.setting` fields), the one place its name is typed (a
class carries none, so a subclass cannot keep its parent's): the built-in ones in
`objectives/declarations.py`, a plugin's in a module named in XLT_PLUGINS. Every
table that lists objectives derives from the declarations; the tasks whose declaration says
`objectives=ALL` (the pair tasks) support it at once. This package imports no torch: a
class is imported when a trial builds its objective.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    """The objective `config.method` names, with its hyperparameters, and the synonym table
    its declaration asks for (`uses_synonyms`): one that trains on synonym copies refuses an
    empty or missing table (its copies would equal the originals); any other gets a table
    that refuses to be read (`UndeclaredSynonyms`): no trial loads it one."""
    declaration = registry.objective(config.method)
    if not declaration.uses_synonyms:
        synonyms = UndeclaredSynonyms(config.method)
    elif not synonyms:
        raise ConfigError(
            "synonyms",
            config.synonyms,
            f"a neighbour table with entries: method={config.method} trains on synonym "
            "copies, which without one would equal their originals",
        )
    return OBJECTIVES[config.method].from_config(config, pad_id, synonyms)


class UndeclaredSynonyms(Mapping):
    """The synonym table of an objective declared without `uses_synonyms`: reading it
    raises DeclarationError naming the field, since its class does read one (as EAR's
    subclasses) and would otherwise train on copies equal to their originals."""

    def __init__(self, method: str):
        self.method = method

    def _refuse(self, *args):
        raise registry.DeclarationError(
            "objective",
            self.method,
            "uses_synonyms",
            "True: its class reads a synonym table, which the trial loads only for an "
            "objective declared with uses_synonyms=True",
        )

    __getitem__ = __iter__ = __len__ = _refuse
