"""The alignment figures (analysis/alignment.py): by hand on fixed weights, independent of
padding on a real network, none for a network without attention."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from seq2seq_lab.analysis.alignment import alignment_figures, pair_batches
from seq2seq_lab.config import build_network
from seq2seq_lab.data.batching import EncodedPair, collate
from seq2seq_lab.models.network import ForwardOutput

V = 12


class FixedAttention(nn.Module):
    """Returns the weights a test writes, whatever the input (no logits are looked at)."""

    def __init__(self, weights: torch.Tensor) -> None:
        super().__init__()
        self.weights = weights

    def forward(self, src, src_mask, tgt_in) -> ForwardOutput:
        return ForwardOutput(logits=torch.zeros(*tgt_in.shape, V), attention=self.weights)


def one_sentence(src_words: int, tgt_words: int):
    """One pair: S = src_words + 1 positions (EOS), T = tgt_words + 1 target tokens (EOS)."""
    return collate([EncodedPair(0, [4] * src_words, [5] * tgt_words)])


def test_attention_fixed_on_eos_is_one_position_at_the_end():
    batch = one_sentence(4, 3)  # S = 5, T = 4
    weights = torch.zeros(1, 4, 5)
    weights[0, :, 4] = 1.0
    figures = alignment_figures(FixedAttention(weights), [batch])
    assert figures.normalised_entropy == 0.0
    assert figures.max_weight == 1.0
    assert figures.on_end == 1.0
    assert figures.end_mass == 1.0
    assert figures.distinct == pytest.approx(1 / 4)
    assert (figures.tokens, figures.sentences) == (4, 1)


def test_a_monotone_alignment_moves_and_uniform_attention_has_entropy_one():
    batch = one_sentence(4, 3)  # S = 5, T = 4
    diagonal = torch.zeros(1, 4, 5)
    for t in range(4):
        diagonal[0, t, t + 1] = 1.0  # positions 1, 2, 3, 4: the last two are 3 (word) and 4 (EOS)
    figures = alignment_figures(FixedAttention(diagonal), [batch])
    assert figures.distinct == 1.0
    assert figures.on_end == pytest.approx(2 / 4)

    uniform = torch.full((1, 4, 5), 1 / 5)
    figures = alignment_figures(FixedAttention(uniform), [batch])
    assert figures.normalised_entropy == pytest.approx(1.0)
    assert figures.max_weight == pytest.approx(1 / 5)
    assert figures.end_mass == pytest.approx(2 / 5)


def test_two_peaks_by_hand():
    # S = 3: weights (0.5, 0.25, 0.25) -> H = 1.5 log 2, normalised by log 3
    batch = one_sentence(2, 0)  # T = 1 (EOS only)
    weights = torch.tensor([[[0.5, 0.25, 0.25]]])
    figures = alignment_figures(FixedAttention(weights), [batch])
    assert figures.normalised_entropy == pytest.approx(1.5 * math.log(2) / math.log(3))
    assert figures.on_end == 0.0  # position 0 is not among the last two of three
    assert figures.end_mass == pytest.approx(0.5)


def test_figures_do_not_depend_on_padding_or_batching():
    torch.manual_seed(0)
    net = build_network(
        "luong", src_vocab_size=V, tgt_vocab_size=V, hidden_size=16, embedding_dim=8, dropout=0.0
    )
    generator = torch.Generator().manual_seed(1)
    pairs = [
        EncodedPair(
            i,
            torch.randint(4, V, (int(n),), generator=generator).tolist(),
            torch.randint(4, V, (int(m),), generator=generator).tolist(),
        )
        for i, (n, m) in enumerate(zip([3, 9, 5, 12, 1], [4, 2, 10, 6, 3]))
    ]
    together = alignment_figures(net, [collate(pairs)])
    one_by_one = alignment_figures(net, [collate([pair]) for pair in pairs])
    sorted_pairs = alignment_figures(net, pair_batches(pairs, batch_size=2))
    for other in (one_by_one, sorted_pairs):
        for name in ("normalised_entropy", "max_weight", "on_end", "end_mass", "distinct"):
            assert getattr(other, name) == pytest.approx(getattr(together, name), abs=1e-6)
        assert (other.tokens, other.sentences) == (together.tokens, together.sentences)
    assert net.training  # restored after the measurement


def test_a_network_without_attention_has_no_figures():
    net = build_network(
        "plain", src_vocab_size=V, tgt_vocab_size=V, hidden_size=8, embedding_dim=8, dropout=0.0
    )
    assert alignment_figures(net, [one_sentence(3, 3)]) is None
