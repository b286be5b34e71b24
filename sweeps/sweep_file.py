"""A sweep as a readable file, to save, edit and run again: `--print-config`,
`--save-config FILE`, `--config FILE`, and `--from-run PARENT_RUN_ID` (the file a sweep
logged on its parent run, `SWEEP_FILE_ARTIFACT`).

The file holds what defines a sweep: the script it belongs to, its preset, the settings every
trial shares (`base`, `--set` and paths already applied), the grid's points, the seeds and the
sweep's own settings. Loading it rebuilds the script's preset (its paper card, so departures
from the paper are derived again from what the file says) and then takes each of those parts
from the file."""

from __future__ import annotations

import json
import types
from pathlib import Path

import yaml

from sweeps.experiment import SWEEP_SETTINGS, SweepSpec, experiment_spec
from xlt_core.errors import ConfigError

FORMAT = 1
SWEEP_FILE_ARTIFACT = "sweep_config.yaml"
# The sweep's own settings a file carries besides base, points and seeds.
FILE_SETTINGS = (
    "strategy",
    *(name for name in SWEEP_SETTINGS if name != "seeds"),
    "fixed_axes",
    "seed_rounds",
)
KEYS = ("format", "script", "preset", "base", "points", "seeds", *FILE_SETTINGS)


def _plain(value):
    """Tuples as lists, anything else JSON cannot hold as text: what YAML writes plainly."""
    return json.loads(json.dumps(value, default=str))


def sweep_text(spec: SweepSpec) -> str:
    """The sweep as the file `--save-config` writes (YAML, keys in `KEYS` order)."""
    document = {
        "format": FORMAT,
        "script": spec.experiment,
        "preset": spec.preset,
        "base": _plain(spec.base),
        "points": _plain(spec.points),
        "seeds": list(spec.seeds),
        **{name: _plain(getattr(spec, name)) for name in FILE_SETTINGS},
    }
    header = f"# The {spec.experiment} sweep: python sweeps/{spec.experiment}.py --config FILE\n"
    return header + yaml.safe_dump(document, sort_keys=False, width=100)


def _document(text: str, source: str) -> dict:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(source, "(unreadable)", f"a sweep file in YAML ({error})") from None
    if not isinstance(document, dict):
        raise ConfigError(source, type(document).__name__, "a sweep file: a mapping of settings")
    unknown = sorted(set(document) - set(KEYS))
    missing = [
        key
        for key in ("format", "script", "preset", "base", "points", "seeds")
        if key not in document
    ]
    if unknown or missing:
        raise ConfigError(
            f"{source}: {(unknown or missing)[0]}",
            "unknown key" if unknown else "missing",
            f"the keys of a sweep file: {', '.join(KEYS)}",
        )
    if document["format"] != FORMAT:
        raise ConfigError(f"{source}: format", document["format"], f"{FORMAT}")
    return document


def load_sweep(text: str, source: str, script: types.ModuleType) -> SweepSpec:
    """The sweep a file describes, for the script running it; raises ConfigError naming the
    file (`source`) and the key when the file is not a sweep file of this script."""
    document = _document(text, source)
    name = Path(script.__file__).stem
    if document["script"] != name:
        raise ConfigError(
            f"{source}: script",
            document["script"],
            f"{name} (this file is for python sweeps/{document['script']}.py)",
        )
    spec = experiment_spec(script, document["preset"], None)
    spec.base, spec.points, spec.seeds = document["base"], document["points"], document["seeds"]
    spec.__post_init__()  # the sweep's own copies, as a script's grids get
    for setting in FILE_SETTINGS:
        if setting in document:
            setattr(spec, setting, document[setting])
    if spec.seed_rounds is not None:
        spec.seed_rounds = tuple(spec.seed_rounds)
    return spec


def read_sweep_file(path: str, script: types.ModuleType) -> SweepSpec:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError("--config", path, f"a readable sweep file ({error.strerror})") from None
    return load_sweep(text, path, script)


def logged_sweep(tracking_uri: str, parent_run_id: str, script: types.ModuleType) -> SweepSpec:
    """The sweep a parent run logged (`--from-run`), read from the tracking store."""
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    client = MlflowClient(tracking_uri)
    source = f"--from-run {parent_run_id}"
    try:
        client.get_run(parent_run_id)
    except MlflowException:
        raise ConfigError("--from-run", parent_run_id, "the id of a sweep's parent run") from None
    try:
        local = client.download_artifacts(parent_run_id, SWEEP_FILE_ARTIFACT)
    except (MlflowException, OSError):
        raise ConfigError(
            "--from-run",
            parent_run_id,
            f"a parent run that logged {SWEEP_FILE_ARTIFACT} (sweeps from version 0.2.0 on)",
        ) from None
    return load_sweep(Path(local).read_text(encoding="utf-8"), source, script)
