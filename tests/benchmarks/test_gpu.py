"""The GPU check (`python -m benchmarks --only gpu`): without CUDA it is skipped, and with
--quick its whole path (matmul rate, the three objectives' MFU, the evaluation, 1, 2 and 4
trials sharing a declared GPU through Ray) runs on the CPU at tiny sizes. Nothing here
asserts on a timing."""

import re
import sys
from pathlib import Path

import pytest
import torch
from quick_runs import run_quick

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks.common import DEFAULT_DATA_DIR, Settings  # noqa: E402
from benchmarks.gpu import gpu_check  # noqa: E402

# A figure line: name, figure, unit; e.g. "gpu eval examples/s (...)   1234  ex/s ...".
FIGURE = r"(?P<figure>[0-9.]+)\s+{unit}\s"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device runs the check")
def test_without_cuda_the_check_is_skipped_unless_quick(tmp_path):
    (result,) = gpu_check(Settings(False, DEFAULT_DATA_DIR, tmp_path))
    assert result.figure is None and "no CUDA device" in result.note


def figure(out: str, name: str, unit: str) -> float:
    found = re.search(re.escape(name) + r".*?\s" + FIGURE.format(unit=re.escape(unit)), out)
    assert found, f"no line {name!r} in:\n{out}"
    return float(found.group("figure"))


@pytest.mark.slow
def test_quick_gpu_check_runs_its_whole_path_on_the_cpu():
    out = run_quick("--only", "gpu").stdout
    assert figure(out, "gpu dense matmul rate (float32 cpu)", "GFLOP/s") > 0
    for method in ("finetune", "ear", "adv"):
        # The trials' batch: 32 rows.
        assert figure(out, f"mfu step {method} (quick, 32 ", "s") > 0
        assert figure(out, f"mfu {method} (achieved / matmul rate)", "%") > 0
    assert "mfu rs_rp" not in out  # the three objectives the issue names, no more
    assert figure(out, "gpu eval examples/s (quick, 200 ", "ex/s") > 0
    # Ray schedules K trials of 1/K GPU each on the one declared GPU.
    for trials, share in ((1, "1"), (2, "0.5"), (4, "0.25")):
        where = f"gpu sharing examples/s ({trials} ear trial(s), {share} GPU + "
        assert figure(out, where, "ex/s") > 0
        assert figure(out, f"gpu sharing peak memory per trial ({trials} trials)", "GiB") > 0
    assert "on cpu" in out
