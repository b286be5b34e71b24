"""The `--help` list of every setting, with its default and what it allows, read from the
dataclass fields that hold the settings and from the checks `TrialConfig.validate` runs, so
the help cannot drift from what is enforced."""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Mapping

from xlt_core.config import TrialConfig, allowed_values

WIDTH = 100


def _default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "the script's"
    if isinstance(value, (tuple, list)):
        return ",".join(str(item) for item in value) or "none"
    return "none" if value is None else str(value)


def _entry(field: dataclasses.Field, allowed: str) -> str:
    line = f"  {field.name} ({field.type}, default {_default(field)})"
    line += f": {allowed}" if allowed else ""
    return textwrap.fill(line, WIDTH, subsequent_indent="      ")


def settings_epilog(
    names: tuple[str, ...],
    heading: str,
    other_fields: tuple[dataclasses.Field, ...] = (),
    other_rules: Mapping[str, str] | None = None,
) -> str:
    """`heading`, then each of `names` with its type, default and allowed values: a
    TrialConfig setting's from its field and its checks; one of `other_fields` (a sweep's
    settings) with `other_rules`."""
    fields = {field.name: field for field in dataclasses.fields(TrialConfig)}
    fields.update({field.name: field for field in other_fields})
    rules = {**allowed_values(), **(other_rules or {})}
    lines = [textwrap.fill(heading, WIDTH)]
    lines += [_entry(fields[name], rules.get(name, "")) for name in names]
    return "\n".join(lines)
