"""`--help` lists every setting `--set` takes, with its default and allowed values
(sweeps/planning/sweep_settings_help.py), read from the same fields and checks that enforce them."""

import dataclasses

from sweeps.cli import SETTABLE, build_parser
from xlt_core.config import DATA_SOURCES, TrialConfig, allowed_values


def settings_section() -> dict[str, str]:
    text = build_parser("ear_xnli").format_help()
    section = text[text.index("settings (--set KEY=VALUE") :].splitlines()
    entries, name = {}, None
    for line in section[1:]:
        if line.startswith("  ") and not line.startswith("      "):
            name = line.split()[0]
            entries[name] = line.strip()
        elif name and line.strip():
            entries[name] += " " + line.strip()
    return entries


def test_every_settable_setting_is_listed_with_its_default():
    entries = settings_section()
    assert set(entries) == set(SETTABLE)
    defaults = {field.name: field.default for field in dataclasses.fields(TrialConfig)}
    assert "(float, default 1.0)" in entries["alpha"]
    assert f"default {defaults['max_seq_length']})" in entries["max_seq_length"]
    assert "(str, default synthetic)" in entries["data_source"]
    assert "default es,de,ru" in entries["target_langs"]


def test_allowed_values_are_the_checks_own():
    entries = settings_section()
    assert entries["data_source"].endswith("one of " + ", ".join(DATA_SOURCES))
    assert entries["seed" if "seed" in entries else "seeds"].count("2**32 - 1") == 1
    for name, allowed in allowed_values().items():
        if name in entries:
            assert " ".join(allowed.split()) in entries[name], name


def test_a_rule_is_read_from_the_check_that_enforces_it():
    allowed = allowed_values()
    assert allowed["m"] == "a value >= 1"
    assert allowed["dictionary_scale"] == "a number in (0, 1]"
    assert "ear" in allowed["method"] and "finetune" in allowed["method"]
