"""Hub data checked before a sweep starts Ray: every data set a trial of `data_source=hub`
is sure to read (its task's training and evaluation sets, the adjustment's parallel data)
must be on the hub (a cheap metadata call, no download) or, when the hub cannot be reached
(offline, HF_HUB_OFFLINE), already in the local cache. Otherwise one line names the data set
and the local alternative, instead of every trial failing after Ray started.

QA's evaluation sets depend on the settings (xquad, mlqa, tydiqa): only its training set is
checked here; a missing evaluation set still fails the trials.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from xlt_core.config import TrialConfig
from xlt_core.data import ner, pawsx, squad, tatoeba, xnli
from xlt_core.data.parallel import HUB_PREFIX
from xlt_core.errors import DataError

HUB_TIMEOUT_S = 10.0
# What every trial of a task reads from the hub (the loaders' own ids).
TASK_HUB_DATASETS = {
    "xnli": (xnli.MULTINLI_HUB_ID, xnli.HUB_ID),
    "pawsx": (pawsx.HUB_ID,),
    "ner": (ner.HUB_ID,),
    "qa": (squad.SQUAD_HUB_ID,),
    "xsr": (tatoeba.HUB_ID,),
}
LOCAL_ALTERNATIVE = (
    "connect to the hub, or read local files instead: --data-dir DIR (data_source=local, the "
    "XTREME layout, e.g. xnli/train-en.tsv)"
)


def hub_datasets(config: TrialConfig) -> tuple[str, ...]:
    """The hub data sets `config` is sure to read; none unless data_source=hub (parallel
    data named `hub:<id>` included)."""
    datasets = TASK_HUB_DATASETS.get(config.task, ()) if config.data_source == "hub" else ()
    parallel = config.parallel_data or ""
    if config.adjusted and parallel.startswith(HUB_PREFIX):
        datasets += (parallel[len(HUB_PREFIX) :],)
    return datasets


def check_hub_data(config: TrialConfig) -> None:
    """Raise DataError naming the first hub data set of `config` that is neither on the hub
    nor, the hub unreachable, in the local cache."""
    for dataset in hub_datasets(config):
        problem = dataset_problem(dataset)
        if problem is not None:
            raise DataError(
                f"hub data set {dataset} (task={config.task}) {problem}; {LOCAL_ALTERNATIVE}"
            )


@functools.cache  # a sweep's configurations share their data sets: one call each
def dataset_problem(dataset: str) -> str | None:
    """None when `dataset` is on the hub or cached; else what is wrong, in a few words."""
    from httpx2 import TransportError  # huggingface_hub's HTTP client: no route, timeout
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        hub_client().dataset_info(dataset, timeout=HUB_TIMEOUT_S)
    except RepositoryNotFoundError:
        return "is not on the hub (or is private)"
    except (OSError, TransportError) as error:  # OSError: offline mode, an HTTP error
        if is_cached(dataset):
            return None
        return f"cannot be reached ({type(error).__name__}) and is not in the local cache"
    return None


def hub_client():
    """The hub's API client (a function, so that tests can replace the hub)."""
    from huggingface_hub import HfApi

    return HfApi()


def is_cached(dataset: str) -> bool:
    """Whether a download of `dataset` is in huggingface_hub's or `datasets`' cache."""
    from huggingface_hub import constants

    datasets_cache = os.environ.get("HF_DATASETS_CACHE") or Path(constants.HF_HOME) / "datasets"
    return (Path(constants.HF_HUB_CACHE) / f"datasets--{dataset.replace('/', '--')}").is_dir() or (
        Path(datasets_cache) / dataset.replace("/", "___")
    ).is_dir()
