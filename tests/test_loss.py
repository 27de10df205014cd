"""The training loss (training/loss.py): torch's label-smoothed cross entropy to the bit, its
NLL from the same log-softmax, and the formula on a worked example."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from seq2seq_lab.training.loss import smoothed_cross_entropy

PAD = 0


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.3])
def test_bit_identical_to_torch_cross_entropy(epsilon):
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(257, 1000, generator=generator, requires_grad=True)
    gold = torch.randint(1, 1000, (257,), generator=generator)
    gold[::5] = PAD
    expected = F.cross_entropy(
        logits, gold, ignore_index=PAD, label_smoothing=epsilon, reduction="sum"
    )
    expected.backward()
    expected_grad, logits.grad = logits.grad.clone(), None
    with torch.no_grad():
        expected_nll = F.cross_entropy(logits, gold, ignore_index=PAD, reduction="sum")

    loss, nll = smoothed_cross_entropy(logits, gold, epsilon=epsilon, ignore_index=PAD)
    loss.backward()
    assert torch.equal(loss, expected)
    assert torch.equal(logits.grad, expected_grad)
    assert torch.equal(nll, expected_nll)
    assert not nll.requires_grad


def test_worked_example():
    """Two positions over V = 3, the second padding: p = softmax(0, ln 2, ln 5) = (1, 2, 5)/8,
    gold 1: nll = ln 4; smooth = -(ln 1/8 + ln 2/8 + ln 5/8) / 3;
    loss = 0.8 nll + 0.2 smooth (epsilon 0.2); the padding position counts nowhere."""
    logits = torch.tensor([[0.0, math.log(2), math.log(5)], [9.0, -3.0, 1.0]])
    gold = torch.tensor([1, PAD])
    loss, nll = smoothed_cross_entropy(logits, gold, epsilon=0.2, ignore_index=PAD)
    smooth = -(math.log(1 / 8) + math.log(2 / 8) + math.log(5 / 8)) / 3
    assert nll.item() == pytest.approx(math.log(4), rel=1e-6)
    assert loss.item() == pytest.approx(0.8 * math.log(4) + 0.2 * smooth, rel=1e-6)
