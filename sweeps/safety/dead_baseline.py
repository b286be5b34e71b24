"""A sweep whose baseline has no finished run (issue 41, item 3): every trial ended, but the
report compares each configuration with the baseline, so none can be made. The driver says
so in one line (exit 1) instead of failing in the report on every `--resume`."""

from __future__ import annotations

from sweeps.spec.trial_contract import TrialRequest

# On a parent whose baseline trials failed on an error (not a diverged loss): `--resume`
# restores its phases with their errored trials resumed, so those run again.
RERUN_ERRORED_TAG = "xlt.rerun_errored"


class NoReport(Exception):
    """The sweep ran to its end but its baseline has no finished run: the message is the
    line the command prints. `rerun`: whether `--resume` runs the failed baseline trials
    again (they raised an error, which a fix may remove); else (a diverged loss, bad data)
    the parent is closed and the sweep must be started again once its settings are fixed."""

    def __init__(self, message: str, rerun: bool):
        super().__init__(message)
        self.rerun = rerun


def dead_baseline(spec, results) -> NoReport | None:
    """NoReport when the sweep has baseline points (`SweepSpec.baseline_points`) and none of
    the reported phase's `results` (Tune's, one per trial) of a baseline point finished;
    else None."""
    baseline = spec.baseline_points()
    ours = [result for result in results if (result.config or {}).get("point") in baseline]
    if not baseline or not ours or any(_finished(result) for result in ours):
        return None
    failed = "; ".join(f"{_label(result)} ({_why(result)})" for result in ours)
    rerun = all(result.error is not None for result in ours)
    then = (
        "once their cause is fixed, --resume runs them again (the other trials are kept)"
        if rerun
        else "they would fail the same way on --resume: fix the settings and start the "
        "sweep again without --resume"
    )
    return NoReport(
        f"no report can be made: the baseline has no finished run to compare with; "
        f"its failed trials: {failed}; {then}",
        rerun,
    )


def _finished(result) -> bool:
    return result.error is None and not (result.metrics or {}).get("failure")


def _label(result) -> str:
    return TrialRequest.from_space(result.config).run_name()


def _why(result) -> str:
    """The failure in a few words: the error's class and first line (a Ray task's error is
    told by its cause), or the failure a diverged trial reported."""
    if result.error is None:
        return str((result.metrics or {}).get("failure", "failed"))[:200]
    error = getattr(result.error, "cause", None) or result.error
    lines = str(error).strip().splitlines()
    if not isinstance(error, BaseException):  # Tune's error.txt: its last line says it
        return lines[-1][:200] if lines else "failed"
    return f"{type(error).__name__}: {lines[0][:200]}" if lines else type(error).__name__
