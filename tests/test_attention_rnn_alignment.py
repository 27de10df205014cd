"""Learned behaviour: on the reverse task, Bahdanau and Luong attention become anti-diagonal."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from seq2seq_lab.config import build_network
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID

V = 14  # 10 words + 4 specials, shared by source and target


pytestmark = pytest.mark.usefixtures("one_thread")


def reverse_batch(n: int, generator: torch.Generator):
    """x_1..x_L EOS -> x_L..x_1 EOS, L in 4..8, random words."""
    lengths = torch.randint(4, 9, (n,), generator=generator)
    S = int(lengths.max()) + 1
    src, tgt_in, tgt_out = (torch.full((n, S), PAD_ID) for _ in range(3))
    for b, L in enumerate(lengths.tolist()):
        words = torch.randint(4, V, (L,), generator=generator)
        src[b, :L], src[b, L] = words, EOS_ID
        tgt_in[b, 0], tgt_in[b, 1 : L + 1] = BOS_ID, words.flip(0)
        tgt_out[b, :L], tgt_out[b, L] = words.flip(0), EOS_ID
    return src, src != PAD_ID, tgt_in, tgt_out, lengths


@pytest.mark.parametrize(
    "family,extra",
    [
        ("bahdanau", {}),  # bidirectional GRU, separate additive attention
        ("luong", {"input_feeding": False}),  # LSTM, general score, batched path
        ("luong", {"input_feeding": True}),
    ],
    ids=["bahdanau", "luong", "luong-input-feeding"],
)
def test_attention_learns_the_mirrored_alignment(family, extra):
    torch.manual_seed(0)
    net = build_network(
        family,
        src_vocab_size=V,
        tgt_vocab_size=V,
        hidden_size=32,
        embedding_dim=16,
        dropout=0.0,
        **extra,
    )
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    train = torch.Generator().manual_seed(0)
    for _ in range(300):
        src, src_mask, tgt_in, tgt_out, _ = reverse_batch(32, train)
        logits = net(src, src_mask, tgt_in).logits
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    src, src_mask, tgt_in, _, lengths = reverse_batch(64, torch.Generator().manual_seed(99))
    net.eval()
    with torch.no_grad():
        attention = net.teacher_forced(src, src_mask, tgt_in).attention  # [B, T, S]
    hits = total = 0
    for b, L in enumerate(lengths.tolist()):
        # target word t (0-based) is source word L-1-t: the anti-diagonal
        peaks = attention[b, :L].argmax(-1)
        hits += int((peaks == torch.arange(L - 1, -1, -1)).sum())
        total += L
    assert hits / total > 0.75, f"only {hits}/{total} target words attend to their mirror"
