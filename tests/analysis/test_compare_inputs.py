"""Inputs of `python -m analysis` refused or printed as a shell takes them: an empty
`--experiments`, and the `mlflow ui` command of a store whose path holds a space."""

import shlex

import pytest

from analysis.__main__ import main
from analysis.compare import experiment_names
from analysis.mlflow_ui import ui_command


@pytest.mark.parametrize("value", [",", " , ,", ""])
def test_compare_without_a_name_is_refused_naming_the_flag(value, tmp_path, capsys):
    store = tmp_path / "mlflow.db"
    code = main(["compare", "--experiments", value, "--tracking-uri", f"sqlite:///{store}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: invalid --experiments {value!r}: one or more")
    assert "No objects to concatenate" not in err


def test_experiment_names_keep_their_order_once_each():
    assert experiment_names(" b, a,,b ") == ["b", "a"]


def test_the_mlflow_ui_command_of_a_path_with_spaces_is_one_shell_word():
    uri = "sqlite:////home/me/my runs/mlflow.db"
    command = ui_command(uri)
    assert shlex.split(command) == ["mlflow", "ui", "--backend-store-uri", uri]
