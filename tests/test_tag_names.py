"""Every tag this project sets is under `xlt.` (MLflow's own stay `mlflow.*`): the tag-name
constants of every module that writes tags, and the tags a trial and a report write."""

import importlib

import xlt_schema
from xlt_core.config import TrialConfig

# The modules that name tags (runs, model versions, experiments).
TAG_MODULES = (
    "xlt_schema",
    "sweeps.running.runner",
    "sweeps.running.search_phases",
    "sweeps.records.tracking",
    "sweeps.running.trainable",
    "sweeps.records.run_context",
    "analysis.mlflow_ui",
    "analysis.model_registry",
    "analysis.sequential",
)


def _tag_constants() -> dict[str, str]:
    names = {}
    for module_name in TAG_MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if isinstance(value, str) and (name.endswith("_TAG") or name.endswith("_TAG_PREFIX")):
                names[f"{module_name}.{name}"] = value
    return names


def _ours_or_mlflows(key: str) -> bool:
    return key.startswith((xlt_schema.TAG_PREFIX, "mlflow."))  # "mlflow.": MLflow's own


def test_every_tag_constant_is_under_xlt_or_mlflow():
    constants = _tag_constants()
    assert len(constants) > 30  # the scan found the constants (a renamed suffix would hide them)
    assert {name: key for name, key in constants.items() if not _ours_or_mlflows(key)} == {}


def test_tag_constants_name_distinct_tags():
    by_key: dict[str, set[str]] = {}
    for name, key in _tag_constants().items():
        by_key.setdefault(key, set()).add(name.rsplit(".", 1)[1])
    assert {key: names for key, names in by_key.items() if len(names) > 1} == {}


def test_a_trials_tags_are_all_ours():
    from sweeps.running.trainable import trial_tags  # imports Ray: here, not for the whole module

    config = TrialConfig.from_dict({"method": "ear", "adaptation": "none"})
    tags = trial_tags(config, "grid")
    assert tags and all(key.startswith(xlt_schema.TAG_PREFIX) for key in tags)
