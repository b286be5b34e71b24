"""`StopSignals`: what SIGINT and SIGTERM do to a sweep's driver at each moment (no Ray)."""

import os
import signal

import pytest

from sweeps.interruption import TUNE_STOP_SIGNAL, StopSignals, SweepInterrupted


def _send(signum: int) -> None:
    # The handler runs in the main thread before the next bytecode after the signal.
    os.kill(os.getpid(), signum)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_outside_tune_raises_with_the_shells_exit_code(signum, code):
    with StopSignals(), pytest.raises(SweepInterrupted) as raised:
        _send(signum)
    assert raised.value.exit_code == code and raised.value.parent_run_id is None


def test_handlers_are_restored_on_exit():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with StopSignals():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as ray.init does
    assert {s: signal.getsignal(s) for s in before} == before


def test_take_over_reinstalls_the_handler_ray_init_replaced():
    with StopSignals() as signals:
        signal.signal(signal.SIGTERM, lambda *_: None)
        signals.take_over()
        with pytest.raises(SweepInterrupted):
            _send(signal.SIGTERM)


def test_a_held_signal_is_recorded_and_raised_afterwards():
    with StopSignals() as signals:
        with signals.held():
            _send(signal.SIGTERM)
            recorded = signals.received
        assert recorded == signal.SIGTERM
        with pytest.raises(SweepInterrupted) as raised:
            signals.raise_if_received("after the update")
    assert raised.value.exit_code == 143 and "after the update" in str(raised.value)


def test_in_a_tune_fit_the_first_signal_calls_tunes_stop_and_a_second_stops_at_once():
    calls = []
    with StopSignals() as signals:
        with signals.tune_fit():
            # What Tune does early in `fit`: register its stop handler for SIGUSR1.
            signal.signal(TUNE_STOP_SIGNAL, lambda signum, frame: calls.append(signum))
            _send(signal.SIGTERM)
            assert calls == [signal.SIGTERM]  # Tune's graceful stop, no exception
            with pytest.raises(SweepInterrupted) as raised:
                _send(signal.SIGINT)
        # The first signal decides the exit status.
        assert raised.value.exit_code == 143 and signals.received == signal.SIGTERM


def test_a_signal_before_tune_registers_its_stop_raises():
    # A stale stop handler of an earlier fit must not swallow it: it is reset on entry.
    signal.signal(TUNE_STOP_SIGNAL, lambda *_: None)
    try:
        with StopSignals() as signals, signals.tune_fit(), pytest.raises(SweepInterrupted):
            _send(signal.SIGINT)
    finally:
        signal.signal(TUNE_STOP_SIGNAL, signal.SIG_DFL)


def _main_with(monkeypatch, tmp_path, outcome, argv=()):
    """`cli.main` on a tiny smoke sweep whose `run_sweep` does `outcome()` instead of running."""
    import sweeps.runner
    from sweeps import ear_xnli
    from sweeps.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sweeps.runner, "run_sweep", lambda spec, options, signals: outcome())
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    return main(ear_xnli, ["--tracking-uri", uri, "--set", "seeds=0", *argv])


def _interrupted(parent_run_id):
    error = SweepInterrupted(signal.SIGTERM, "phase grid stopped")
    error.parent_run_id = parent_run_id
    raise error


def test_an_interrupted_sweep_exits_143_and_prints_the_resume_command(
    monkeypatch, tmp_path, capsys
):
    import shlex
    import sys

    assert _main_with(monkeypatch, tmp_path, lambda: _interrupted("abc")) == 143
    error = capsys.readouterr().err
    assert "Traceback" not in error and "SIGTERM received; phase grid stopped" in error
    command = shlex.split(error.strip().splitlines()[-1])
    assert command[0] == sys.executable and command[1].endswith("sweeps/ear_xnli.py")
    assert command[-2:] == ["seeds=0", "--resume"] and command.count("--resume") == 1


def test_interrupted_before_the_parent_run_exists_says_to_start_again(
    monkeypatch, tmp_path, capsys
):
    assert _main_with(monkeypatch, tmp_path, lambda: _interrupted(None)) == 143
    assert "nothing was tracked yet; run the same command again" in capsys.readouterr().err


def test_a_driver_crash_exits_3_with_the_resume_command(monkeypatch, tmp_path, capsys):
    def crash():
        raise RuntimeError("a bug")

    assert _main_with(monkeypatch, tmp_path, crash) == 3
    error = capsys.readouterr().err
    assert "RuntimeError: a bug" in error and error.strip().endswith("--resume")


@pytest.mark.parametrize("failed, code", [(0, 0), (2, 1)])
def test_exit_status_of_a_sweep_that_ran_to_its_end(monkeypatch, tmp_path, failed, code):
    assert _main_with(monkeypatch, tmp_path, lambda: failed) == code
