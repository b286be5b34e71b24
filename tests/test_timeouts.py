"""No test has a wall-clock limit that a loaded machine hits: every `timeout=` in tests/ goes
through conftest.scaled_timeout (XLT_TEST_TIMEOUT_SCALE, default 3), directly or through a
helper that applies it."""

import ast
from pathlib import Path

import pytest
from conftest import scaled_timeout

TESTS = Path(__file__).resolve().parent
# Helpers whose `timeout` argument is a base value they scale themselves.
SCALING_HELPERS = {"run_command", "run_smoke_sweep", "run_quick", "run_script"}
# The keywords that set a wall-clock limit.
TIMEOUT_KEYWORDS = ("timeout", "timeout_s")


def _callee(call: ast.Call) -> str:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")


def _is_scaled(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and _callee(value) == "scaled_timeout"


def unscaled_timeouts(source: str) -> list[int]:
    """Lines of `source` that pass `timeout=` or `timeout_s=` unscaled to anything but a
    scaling helper."""
    return [
        keyword.value.lineno
        for call in ast.walk(ast.parse(source))
        if isinstance(call, ast.Call) and _callee(call) not in SCALING_HELPERS
        for keyword in call.keywords
        if keyword.arg in TIMEOUT_KEYWORDS and not _is_scaled(keyword.value)
    ]


def test_every_timeout_in_the_tests_is_scaled():
    found = {
        str(path.relative_to(TESTS)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if (lines := unscaled_timeouts(path.read_text()))
    }
    assert not found, f"wall-clock limits not scaled by scaled_timeout: {found}"


def test_the_check_sees_an_unscaled_timeout():
    # Sources to parse, not limits of this test: a number or a name, passed unscaled.
    waits = "process.wait(timeout=limit)\nrun_command(a, b, timeout=limit)"
    assert unscaled_timeouts(waits) == [1]
    assert unscaled_timeouts("probe(address, timeout_s=limit)") == [1]
    assert unscaled_timeouts("probe(address, timeout_s=scaled_timeout(limit))") == []


def test_scale_from_the_environment(monkeypatch):
    monkeypatch.delenv("XLT_TEST_TIMEOUT_SCALE", raising=False)
    assert scaled_timeout(300) == 900  # generous by default
    assert scaled_timeout(100) == 600  # and never under 600 s
    monkeypatch.setenv("XLT_TEST_TIMEOUT_SCALE", "10")
    assert scaled_timeout(100) == 1000


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "slow"])
def test_a_bad_scale_is_refused(monkeypatch, value):
    monkeypatch.setenv("XLT_TEST_TIMEOUT_SCALE", value)
    with pytest.raises(pytest.UsageError, match="XLT_TEST_TIMEOUT_SCALE"):
        scaled_timeout(1)
