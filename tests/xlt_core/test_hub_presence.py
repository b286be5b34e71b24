"""Hub data checked before Ray starts (xlt_core/data/hub_presence.py, from the sweep's
pre-flight `runner.check_sweep`): a missing data set, or one the unreachable hub cannot give
and the cache does not hold, is refused in one line naming it and `--data-dir`. The hub is
unreachable here: a stand-in client plays it."""

import dataclasses

import httpx2
import huggingface_hub.constants
import pytest
from huggingface_hub.errors import OfflineModeIsEnabled, RepositoryNotFoundError

from sweeps import ear_xnli
from sweeps.cli import resolve_paths
from sweeps.running.runner import check_sweep
from sweeps.spec.experiment import experiment_spec
from xlt_core.config import TrialConfig
from xlt_core.data import hub_presence
from xlt_core.errors import DataError


class StandInHub:
    """`dataset_info` as the hub answers: present, missing, or not reachable at all."""

    def __init__(self, present=(), unreachable=None):
        self.present, self.unreachable, self.asked = set(present), unreachable, []

    def dataset_info(self, repo_id, timeout=None):
        self.asked.append(repo_id)
        if self.unreachable is not None:
            raise self.unreachable
        if repo_id not in self.present:
            response = httpx2.Response(404, request=httpx2.Request("GET", "https://hub/x"))
            raise RepositoryNotFoundError("404 Repository Not Found", response=response)
        return object()


@pytest.fixture
def hub(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets-cache"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    hub_presence.dataset_problem.cache_clear()
    stand_in = StandInHub()
    monkeypatch.setattr(hub_presence, "hub_client", lambda: stand_in)
    yield stand_in
    hub_presence.dataset_problem.cache_clear()


def _hub_spec():
    spec = experiment_spec(ear_xnli, "smoke", None)
    return resolve_paths(dataclasses.replace(spec, base={**spec.base, "data_source": "hub"}))


def test_a_sweep_on_missing_hub_data_is_refused_before_ray(hub):
    hub.present = {"nyu-mll/multi_nli"}
    with pytest.raises(DataError) as refused:
        check_sweep(_hub_spec())
    message = str(refused.value)
    assert message.startswith("hub data set facebook/xnli (task=xnli) is not on the hub")
    assert "--data-dir DIR (data_source=local" in message and "\n" not in message
    assert hub.asked == ["nyu-mll/multi_nli", "facebook/xnli"]  # once each for 3 configs


def test_present_hub_data_passes(hub):
    hub.present = {"nyu-mll/multi_nli", "facebook/xnli"}
    check_sweep(_hub_spec())


@pytest.mark.parametrize(
    "error", [OfflineModeIsEnabled("offline"), httpx2.ConnectError("no route")]
)
def test_an_unreachable_hub_is_said_naming_the_data_set(hub, error):
    hub.unreachable = error
    config = TrialConfig(task="pawsx", data_source="hub")
    with pytest.raises(DataError) as refused:
        hub_presence.check_hub_data(config)
    assert str(refused.value).startswith(
        f"hub data set google-research-datasets/paws-x (task=pawsx) cannot be reached "
        f"({type(error).__name__}) and is not in the local cache; connect to the hub, or"
    )


def test_an_unreachable_hub_with_the_data_set_cached_passes(hub, tmp_path):
    hub.unreachable = OfflineModeIsEnabled("offline")
    (tmp_path / "datasets-cache" / "google-research-datasets___paws-x").mkdir(parents=True)
    hub_presence.check_hub_data(TrialConfig(task="pawsx", data_source="hub"))


def test_synthetic_and_local_data_ask_no_hub(hub):
    assert hub_presence.hub_datasets(TrialConfig(task="xnli")) == ()
    check_sweep(resolve_paths(experiment_spec(ear_xnli, "smoke", None)))
    assert hub.asked == []
