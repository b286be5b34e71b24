import os
from pathlib import Path

import pytest

# The hubs are unreachable here: fail fast instead of waiting on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "xnli").is_dir():
        pytest.skip(f"the shared data samples are not at {SHARED_DATA}")
    return SHARED_DATA
