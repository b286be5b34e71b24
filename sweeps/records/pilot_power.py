"""`--dry-run --pilot EXPERIMENT`: what a sweep's seeds could detect, read from a finished
pilot sweep's runs in the tracking store (analysis/power.py)."""

from __future__ import annotations

from sweeps.records.tracking import resolve_tracking_uri
from sweeps.spec.experiment import SweepSpec
from xlt_core.errors import ConfigError


def power_lines(
    spec: SweepSpec, tracking_uri: str | None, pilot: str | None, target: float | None
) -> list[str]:
    """`--pilot EXPERIMENT`: what the sweep's seeds could detect, from that finished sweep's
    runs (analysis/power.py; read only); without one, the line that says it is needed."""
    if pilot is None:
        return [
            "Power: not stated: it needs a pilot sweep (--pilot EXPERIMENT, a finished sweep "
            "of this task with 2 or more seeds on the tracking URI)"
        ]
    from analysis.collect import AnalysisError
    from analysis.power import pilot_lines

    try:
        return pilot_lines(resolve_tracking_uri(tracking_uri), pilot, len(spec.seeds), target)
    except AnalysisError as error:
        raise ConfigError("--pilot", pilot, f"a finished sweep on the tracking URI: {error}")
