"""The tasks, one module each behind the protocol of `tasks/base.py`, found by name."""

from __future__ import annotations

from xlt_core.tasks import ner, pawsx, qa, xnli, xsr
from xlt_core.tasks.base import Task

TASKS: dict[str, Task] = {module.TASK.name: module.TASK for module in (xnli, pawsx, ner, qa, xsr)}
