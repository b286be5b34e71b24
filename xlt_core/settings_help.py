"""The `--help` list of every setting, with its default and what it allows, read from the
settings' declarations (TrialConfig's fields, the objectives' settings) and from the checks
`TrialConfig.validate` runs, so the help cannot drift from what is enforced."""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Mapping

from xlt_core.config import allowed_values, setting_default, setting_names, setting_type

WIDTH = 100


def _field_default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        return _shown(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return _shown(field.default_factory())
    return "the script's"


def _shown(value) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(str(item) for item in value) or "none"
    return "none" if value is None else str(value)


def _entry(name: str, kind: str, default: str, allowed: str) -> str:
    line = f"  {name} ({kind}, default {default})"
    line += f": {allowed}" if allowed else ""
    return textwrap.fill(line, WIDTH, subsequent_indent="      ")


def settings_epilog(
    names: tuple[str, ...],
    heading: str,
    other_fields: tuple[dataclasses.Field, ...] = (),
    other_rules: Mapping[str, str] | None = None,
) -> str:
    """`heading`, then each of `names` with its type, default and allowed values: a trial
    setting's from its declaration and its checks; one of `other_fields` (a sweep's
    settings) with `other_rules`."""
    shown = {name: (setting_type(name), _shown(setting_default(name))) for name in setting_names()}
    shown.update({field.name: (field.type, _field_default(field)) for field in other_fields})
    rules = {**allowed_values(), **(other_rules or {})}
    lines = [textwrap.fill(heading, WIDTH)]
    lines += [_entry(name, *shown[name], rules.get(name, "")) for name in names]
    return "\n".join(lines)
