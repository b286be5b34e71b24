"""What a sweep was run from, as tags on its runs: MLflow's own system tags (source, git
commit, user: `mlflow.start_run` sets them, `MlflowClient.create_run` does not) and the
versions of the libraries that decide its results. Reads package metadata only: no torch."""

from __future__ import annotations

from importlib import metadata
from typing import Mapping

from xlt_schema.tracking_store import redact

# The libraries whose versions change a trial's numbers or how it is tracked.
LIBRARIES = ("xlt-sweeps", "torch", "transformers", "tokenizers", "ray", "mlflow", "scipy")
VERSION_TAG_PREFIX = "xlt.version."
SOURCE_PREFIX = "mlflow.source."


def library_versions() -> dict[str, str]:
    """`xlt.version.<library>` -> the installed version ("not installed" when absent)."""
    versions = {}
    for library in LIBRARIES:
        try:
            versions[VERSION_TAG_PREFIX + library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            versions[VERSION_TAG_PREFIX + library] = "not installed"
    return versions


def system_tags() -> dict[str, str]:
    """MLflow's system tags of this process (a remote's URL without its credentials: a git
    remote may hold a token) and the library versions."""
    from mlflow.tracking.context.registry import resolve_tags
    from mlflow.utils.mlflow_tags import MLFLOW_GIT_REPO_URL

    tags = resolve_tags()
    if MLFLOW_GIT_REPO_URL in tags:
        tags[MLFLOW_GIT_REPO_URL] = redact(tags[MLFLOW_GIT_REPO_URL])
    return {**tags, **library_versions()}


def inherited_source_tags(parent_tags: Mapping[str, str]) -> dict[str, str]:
    """The parent run's MLflow source tags (`mlflow.source.*`, `mlflow.user`), for its
    trial runs."""
    from mlflow.utils.mlflow_tags import MLFLOW_USER

    return {
        key: value
        for key, value in parent_tags.items()
        if key.startswith(SOURCE_PREFIX) or key == MLFLOW_USER
    }
