"""`python -m xlt_core --help` lists every TrialConfig setting with its default and what it
allows (xlt_core/settings_help.py)."""

import dataclasses

import pytest

from xlt_core.__main__ import parse_arguments
from xlt_core.config import TrialConfig


def test_every_trial_setting_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        parse_arguments(["--help"])
    text = capsys.readouterr().out
    listed = text[text.index("settings (--set KEY=VALUE)") :]
    for field in dataclasses.fields(TrialConfig):
        assert f"\n  {field.name} ({field.type}, default " in listed, field.name
    assert "precision (str, default bf16): one of bf16, fp32" in " ".join(listed.split("\n"))
