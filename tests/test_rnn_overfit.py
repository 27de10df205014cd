"""Each recurrent family can memorise a tiny batch: loss near 0 and exact greedy decoding."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from seq2seq_lab.config import build_network
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID

V = 12
MODELS = {
    "plain": ("plain", {"num_layers": 1}),
    "bahdanau": ("bahdanau", {}),
    "luong-input-feeding": ("luong", {"input_feeding": True}),
    "luong-no-input-feeding": ("luong", {"input_feeding": False}),
}


pytestmark = pytest.mark.usefixtures("one_thread")


def tiny_pairs(n=8, seed=0):
    """n random pairs of 2-5 words; the target is an arbitrary function of the source."""
    g = torch.Generator().manual_seed(seed)
    src_rows, tgt_rows = [], []
    for _ in range(n):
        words = torch.randint(4, V, (int(torch.randint(2, 6, (1,), generator=g)),), generator=g)
        src_rows.append(torch.cat([words, torch.tensor([EOS_ID])]))
        tgt_rows.append((words.flip(0)[:4] * 7) % (V - 4) + 4)  # reorder + relabel
    S, T = max(map(len, src_rows)), max(map(len, tgt_rows)) + 1
    src = torch.full((n, S), PAD_ID)
    tgt_in = torch.full((n, T), PAD_ID)
    tgt_out = torch.full((n, T), PAD_ID)
    for b, (s, t) in enumerate(zip(src_rows, tgt_rows, strict=True)):
        src[b, : len(s)] = s
        tgt_in[b, : len(t) + 1] = torch.cat([torch.tensor([BOS_ID]), t])
        tgt_out[b, : len(t) + 1] = torch.cat([t, torch.tensor([EOS_ID])])
    return src, src != PAD_ID, tgt_in, tgt_out


def greedy(net, src, src_mask, max_len):
    """Minimal greedy decoding through the contract (the shared decoders live elsewhere)."""
    state = net.init_state(net.encode(src, src_mask))
    prev = torch.full((src.size(0),), BOS_ID)
    tokens = []
    for _ in range(max_len):
        out = net.step(prev, state)
        state, prev = out.state, out.logits.argmax(-1)
        tokens.append(prev)
    return torch.stack(tokens, 1)


@pytest.mark.parametrize("name", list(MODELS))
def test_overfits_a_tiny_batch(name):
    family, extra = MODELS[name]
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
    src, src_mask, tgt_in, tgt_out = tiny_pairs()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    net.train()
    for _ in range(200):
        logits = net(src, src_mask, tgt_in).logits
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD_ID)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.01
    net.eval()
    with torch.no_grad():
        hyp = greedy(net, src, src_mask, tgt_out.size(1))
    real = tgt_out != PAD_ID
    assert torch.equal(hyp[real], tgt_out[real])
