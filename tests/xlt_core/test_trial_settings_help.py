"""`python -m xlt_core --help` lists every trial setting (TrialConfig's and the objectives')
with its default and what it allows (xlt_core/settings_help.py)."""

import pytest

from xlt_core.__main__ import parse_arguments
from xlt_core.config import setting_names, setting_type


def test_every_trial_setting_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        parse_arguments(["--help"])
    text = capsys.readouterr().out
    listed = text[text.index("settings (--set KEY=VALUE)") :]
    for name in setting_names():
        assert f"\n  {name} ({setting_type(name)}, default " in listed, name
    assert "\n  alpha (float, default 1.0): a value >= 0.0\n" in listed  # EAR's own
    assert "precision (str, default bf16): one of bf16, fp32" in " ".join(listed.split("\n"))
