"""The tasks, one implementation each behind the protocol of `tasks/base.py`, found by name.

TASKS maps a task's name to its implementation, built from its declaration
(`registry.TaskDeclaration.implementation` called with the declaration) on first lookup: the
declarations (`tasks/declarations.py`, plugins') are the one list of tasks.
"""

from __future__ import annotations

from xlt_core import registry


def _build(name: str):
    declaration = registry.task(name)
    return registry.resolve(declaration, "implementation")(declaration)


TASKS = registry.LazyImplementations(registry.task_names, _build)
