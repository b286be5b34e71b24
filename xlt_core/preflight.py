"""The checks a trial's settings and data pass before any training: `check_supported`,
`check_resources` (cheap: languages, files, parallel data, model depth, the synonym table)
and `read_data` (every local file, for a sweep's pre-flight).

The sweep driver runs them for every configuration before Ray starts, and never trains: so
this module, and what it imports, leaves torch and transformers to the trial (a test checks
it in a fresh interpreter).
"""

from __future__ import annotations

from xlt_core.config import TINY_MODEL, TrialConfig
from xlt_core.data.loading import load_synonyms
from xlt_core.data.parallel import check_parallel
from xlt_core.errors import ConfigError
from xlt_core.tasks import TASKS


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
        if config.layer > depth:
            raise ConfigError(
                "layer", config.layer, f"a layer between 1 and {depth} ({config.model} has {depth})"
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
    from transformers import AutoConfig  # only a pretrained model's depth needs it

    try:
        model_config = AutoConfig.from_pretrained(config.model)
    except (OSError, ValueError) as error:
        raise ConfigError(
            "model", config.model, f"a hub id or a local directory with a config.json ({error})"
        ) from None
    return model_config.num_hidden_layers


def model_max_positions(config: TrialConfig) -> int | None:
    """The longest input a pretrained model takes, from its config (RoBERTa-style models number
    positions after the padding index: XLM-R's 514 embeddings take 512 tokens); None for the
    tiny model (TrialConfig.validate bounds it) or a config that cannot be read here (the
    trial's own loading then says why)."""
    if config.model == TINY_MODEL:
        return None
    from transformers import AutoConfig

    try:
        model_config = AutoConfig.from_pretrained(config.model)
    except (OSError, ValueError):
        return None
    positions = getattr(model_config, "max_position_embeddings", None)
    if positions and "roberta" in model_config.model_type:
        positions -= (model_config.pad_token_id or 0) + 1
    return positions
