"""The checks a trial's settings and data pass before any training: `check_supported`,
`check_resources` (cheap: languages, files, parallel data, model depth, the synonym table)
and `read_data` (every local file, for a sweep's pre-flight).

The sweep driver runs them for every configuration before Ray starts, and never trains: so
this module, and what it imports, leaves torch and transformers to the trial (a test checks
it in a fresh interpreter).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import types
from collections.abc import Mapping
from pathlib import Path

from xlt_core.config import TINY_MODEL, TrialConfig
from xlt_core.data.loading import load_synonyms
from xlt_core.data.parallel import check_parallel
from xlt_core.errors import ConfigError
from xlt_core.tasks import TASKS

CONFIG_FILE = "config.json"  # a pretrained model's settings, as `from_pretrained` names it
# eflomal, the word aligner of the adjustment stage, is an extra: it compiles from source.
ADJUST_EXTRA = "pip install 'xlt-sweeps[adjust]'"


def check_aligner(config: TrialConfig) -> None:
    """Refuse an adjusted configuration where eflomal is not installed: its trials would
    each fail at their alignment step, after Ray started."""
    if config.adjusted and importlib.util.find_spec("eflomal") is None:
        raise ConfigError(
            "adaptation",
            config.adaptation,
            f"an install with eflomal, the word aligner of the adjustment stage ({ADJUST_EXTRA})",
        )


def check_supported(config: TrialConfig) -> None:
    """Refuse a method or an adaptation the task does not support, naming what it does."""
    task = TASKS[config.task]
    for field, value, supported in (
        ("method", config.method, task.objectives),
        ("adaptation", config.adaptation, task.adaptations),
    ):
        if value not in supported:
            raise ConfigError(
                field, value, f"task={task.name} supports {field} {', '.join(supported)}"
            )


def check_resources(config: TrialConfig) -> None:
    """Checks that need the file system (data, languages, the model's depth): cheap, and
    run before any training so that a bad sweep fails in seconds."""
    check_supported(config)
    TASKS[config.task].check(config)
    check_parallel(config)
    if "layer" in config.hyperparameter_names():
        depth = model_depth(config)
        if config.objective.layer > depth:
            raise ConfigError(
                "layer",
                config.objective.layer,
                f"a layer between 1 and {depth} ({config.model} has {depth})",
            )
    positions = model_max_positions(config)
    if positions is not None and config.max_seq_length > positions:
        raise ConfigError(
            "max_seq_length",
            config.max_seq_length,
            f"a value between 8 and {positions} ({config.model} takes {positions} positions)",
        )
    if config.uses_synonyms:
        path = config.synonym_path()
        if path is not None and not path.is_file():
            raise ConfigError(
                "synonyms",
                str(path),
                "a JSON neighbour table {word: [neighbours]} that exists "
                "(e.g. counterfitted_neighbors.json)",
            )


def read_data(config: TrialConfig) -> None:
    """Read every local file the trial will read (seconds), so that a corrupt line stops a
    sweep before Ray starts; hub data is left to the trial."""
    if config.data_source == "local":
        TASKS[config.task].read(config)
    load_synonyms(config)


def model_depth(config: TrialConfig) -> int:
    """Number of transformer layers, read from the model's config (cheap: no weights)."""
    if config.model == TINY_MODEL:
        return config.tiny_layers
    try:
        fields = model_config_fields(config.model)
    except (OSError, ValueError) as error:
        raise ConfigError(
            "model", config.model, f"a hub id or a local directory with a config.json ({error})"
        ) from None
    depth = fields.get("num_hidden_layers")
    if not isinstance(depth, int):
        raise ConfigError(
            "model", config.model, "a model whose config.json gives num_hidden_layers"
        )
    return depth


def model_max_positions(config: TrialConfig) -> int | None:
    """The longest input a pretrained model takes, from its config (RoBERTa-style models number
    positions after the padding index: XLM-R's 514 embeddings take 512 tokens); None for the
    tiny model (TrialConfig.validate bounds it) or a config that cannot be read here (the
    trial's own loading then says why)."""
    if config.model == TINY_MODEL:
        return None
    try:
        fields = model_config_fields(config.model)
    except (OSError, ValueError):
        return None
    positions = fields.get("max_position_embeddings")
    if positions and "roberta" in fields.get("model_type", ""):
        positions -= (fields.get("pad_token_id") or 0) + 1
    return positions


@functools.cache
def model_config_fields(model: str) -> Mapping:
    """A pretrained model's config.json as read-only fields: from a local directory, else the
    hub (through huggingface_hub's cache and HF_HUB_OFFLINE, as `from_pretrained` reads it).
    Not transformers' AutoConfig: importing it imports torch, which the driver leaves to the
    trials. Cached: every configuration of a sweep names the same model. Raises OSError or
    ValueError when it cannot be read."""
    directory = Path(model).expanduser()
    if directory.is_dir():
        path = directory / CONFIG_FILE
    elif directory.is_absolute() or model.startswith((".", "~")):
        raise FileNotFoundError(f"no directory {directory}")
    else:
        path = hub_config_file(model)
    with open(path, encoding="utf-8") as handle:
        fields = json.load(handle)
    if not isinstance(fields, dict):
        raise ValueError(f"{path} holds no JSON object")
    return types.MappingProxyType(fields)


def hub_config_file(model: str) -> Path:
    """The hub model's config.json in the local cache, downloaded when not there (or stale)."""
    # Imported here: a sweep of the tiny model needs no hub client.
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    try:
        return Path(hf_hub_download(model, CONFIG_FILE))
    except EntryNotFoundError as error:  # not an OSError in every huggingface_hub version
        raise OSError(str(error)) from error
