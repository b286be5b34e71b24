"""The MFU case's FLOP count: the formula against a hand count and against torch's own
counter, each objective's counted passes, and the case's lines (`--quick`)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import scaled_timeout, what_went_wrong
from transformers import BertConfig, BertForSequenceClassification

REPO = Path(__file__).resolve().parents[2]
# `benchmarks` is a folder of the repository, not an installed package.
sys.path.insert(0, str(REPO))

from benchmarks.common import DEFAULT_DATA_DIR, Settings  # noqa: E402
from benchmarks.mfu import counted_flops, matmul_rate, step_flops  # noqa: E402
from benchmarks.workload import Trainer, batch_width, xnli_workload  # noqa: E402

TINY = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2}
TINY.update(intermediate_size=16, num_labels=3, vocab_size=50, attn_implementation="eager")


def hand_count(layers, d, f, heads, labels, rows, width) -> int:
    """Every matmul of a BERT sequence classifier's forward pass listed by its shape
    (m x k times k x n: 2·m·k·n FLOPs), times 3 for forward + backward."""
    tokens, head_dim = rows * width, d // heads

    def mm(m, k, n):
        return 2 * m * k * n

    per_layer = (
        3 * mm(tokens, d, d)  # query, key, value
        + rows * heads * mm(width, head_dim, width)  # scores: Q Kᵀ per row and head
        + rows * heads * mm(width, width, head_dim)  # probabilities times V
        + mm(tokens, d, d)  # attention output
        + mm(tokens, d, f)  # feed-forward up
        + mm(tokens, f, d)  # feed-forward down
    )
    head = mm(rows, d, d) + mm(rows, d, labels)  # pooler and classifier on [CLS]
    return 3 * (layers * per_layer + head)


def test_the_formula_is_the_hand_count():
    config = BertConfig(**TINY)
    for rows, width in ((1, 1), (2, 5), (4, 16)):
        assert step_flops(config, rows, width) == hand_count(2, 8, 16, 2, 3, rows, width)
    wider = BertConfig(**{**TINY, "num_hidden_layers": 3, "intermediate_size": 40})
    assert step_flops(wider, 3, 7) == hand_count(3, 8, 40, 2, 3, 3, 7)


def test_the_formula_is_what_torch_counts_for_forward_and_backward():
    """Tolerance 1%: torch's counter takes the same matmuls (today they agree exactly)."""
    torch.manual_seed(0)
    config = BertConfig(**TINY)
    model = BertForSequenceClassification(config)
    rows, width = 3, 12
    ids = torch.randint(0, config.vocab_size, (rows, width))

    def forward_backward():
        model(input_ids=ids, labels=torch.tensor([0, 1, 2])).loss.backward()

    assert counted_flops(forward_backward) == pytest.approx(
        step_flops(config, rows, width), rel=0.01
    )


def test_each_objective_step_counts_its_own_passes(tmp_path):
    """A whole training step of the quick model (the case's own counting): fine-tuning is the
    formula, EAR's batch of originals and copies twice its rows, ADV's ascent one forward
    pass more (its gradient stops at the perturbation: less than a backward pass)."""
    workload = xnli_workload(Settings(True, DEFAULT_DATA_DIR, tmp_path), wide_vocabulary=True)
    model = workload.base_model(quick=True)
    trainer, indices = Trainer(model, workload.config), [0, 1, 2, 3]
    counts, widths = {}, {}
    for method in ("finetune", "ear", "adv"):
        objective, training_set = workload.objective(method, model.config.num_hidden_layers)
        counts[method] = counted_flops(trainer.step, objective, training_set, indices)
        widths[method] = batch_width(training_set, indices)
    assert counts["finetune"] == step_flops(model.config, 4, widths["finetune"])
    assert counts["ear"] == step_flops(model.config, 8, widths["ear"])
    assert 4 / 3 < counts["adv"] / counts["finetune"] < 1.5


def test_the_matmul_rate_is_the_best_of_the_sizes():
    rate, size = matmul_rate(torch.device("cpu"), torch.float32, (16, 32), repeats=2)
    assert rate > 0 and size in (16, 32)


@pytest.mark.slow
def test_quick_mfu_case_prints_every_objective():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "mfu"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled_timeout(300),
    )
    assert done.returncode == 0, what_went_wrong(done)
    assert "dense matmul rate (float32 cpu)" in done.stdout
    for method in ("finetune", "ear", "adv", "rs_rp", "rs_da"):
        for line in (f"mfu step {method} (quick", f"mfu achieved {method}", f"mfu {method} ("):
            assert line in done.stdout, line
    assert "1.00 x the fine-tuning formula" in done.stdout
