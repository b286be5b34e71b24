import os
from pathlib import Path

import pytest

# The hubs are unreachable here: fail fast instead of waiting on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

# The shared data samples beside the repository (`../shared/data` from its root).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def require_shared_data(*subdirs: str) -> Path:
    """SHARED_DATA, or skip the calling test naming the sample that is missing."""
    for subdir in subdirs:
        if not (SHARED_DATA / subdir).is_dir():
            pytest.skip(f"the shared data sample {SHARED_DATA / subdir} is missing")
    return SHARED_DATA


@pytest.fixture
def shared_data() -> Path:
    return require_shared_data("xnli")
