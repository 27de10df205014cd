"""Shared RNN encoder: source reversal, packed (bi)directional sequences, bridges."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lab.data.specials import EOS_ID, PAD_ID
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.recurrent.bridge import (
    LastStateBridge,
    LinearBridge,
    ZeroBridge,
    merge_directions,
)
from seq2seq_lab.models.recurrent.encoder import RNNEncoder
from seq2seq_lab.models.recurrent.reversal import reversal_index, reverse_source

V = 12


def padded_batch(lengths, seed=0):
    """Random rows of the given real lengths (EOS last), right-padded."""
    g = torch.Generator().manual_seed(seed)
    S = max(lengths)
    src = torch.full((len(lengths), S), PAD_ID)
    for b, n in enumerate(lengths):
        src[b, : n - 1] = torch.randint(4, V, (n - 1,), generator=g)
        src[b, n - 1] = EOS_ID
    return src, src != PAD_ID


def encoder(cell="lstm", bidirectional=True, layers=2, reverse=False):
    torch.manual_seed(0)
    return RNNEncoder(
        vocab_size=V,
        embedding_dim=5,
        hidden_size=6,
        num_layers=layers,
        cell=cell,
        bidirectional=bidirectional,
        dropout=0.0,
        reverse_source=reverse,
    ).eval()


def test_reversal_reverses_only_the_words_keeping_eos_and_padding():
    src = torch.tensor(
        [[5, 6, 7, EOS_ID, PAD_ID, PAD_ID], [5, 6, 7, 8, 9, EOS_ID], [EOS_ID, 0, 0, 0, 0, 0]]
    )
    reversed_src = reverse_source(src, src != PAD_ID)
    expected = torch.tensor(
        [[7, 6, 5, EOS_ID, PAD_ID, PAD_ID], [9, 8, 7, 6, 5, EOS_ID], [EOS_ID, 0, 0, 0, 0, 0]]
    )
    assert torch.equal(reversed_src, expected)
    index = reversal_index(src != PAD_ID)
    assert torch.equal(index.gather(1, index), torch.arange(6).expand(3, 6))  # own inverse


@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn"])
def test_packed_bidirectional_encoder_ignores_padding(cell):
    """A padded row gives the same outputs and final states as the same row alone."""
    enc = encoder(cell)
    src, mask = padded_batch([7, 4, 2])
    out = enc(src, mask)
    for b, n in enumerate([7, 4, 2]):
        alone = enc(src[b : b + 1, :n], mask[b : b + 1, :n])
        torch.testing.assert_close(out.outputs[b, :n], alone.outputs[0])
        assert torch.all(out.outputs[b, n:] == 0)
        finals = out.final if cell == "lstm" else (out.final,)
        finals_alone = alone.final if cell == "lstm" else (alone.final,)
        for f, f_alone in zip(finals, finals_alone, strict=True):
            torch.testing.assert_close(f[:, b], f_alone[:, 0])


def test_reverse_source_encodes_reversed_words_and_returns_outputs_in_source_order():
    src, mask = padded_batch([6, 3])
    plain, reversing = encoder(reverse=False), encoder(reverse=True)
    reversing.load_state_dict(plain.state_dict())
    by_hand = plain(reverse_source(src, mask), mask)
    out = reversing(src, mask)
    index = reversal_index(mask)
    torch.testing.assert_close(
        out.outputs, by_hand.outputs.gather(1, index[:, :, None].expand(-1, -1, 12))
    )
    torch.testing.assert_close(out.final[0], by_hand.final[0])


def test_merge_directions_pairs_forward_last_with_backward_first():
    """[L*2, B, H] -> [L, B, 2H]: ->h of the last real token and <-h of the first token."""
    enc = encoder("gru", layers=2)
    src, mask = padded_batch([5, 3])
    out = enc(src, mask)
    merged = merge_directions(out.final, 2)  # [2, B, 12]
    for b, n in enumerate([5, 3]):
        top = out.outputs[b]  # top layer outputs [S, 12]
        torch.testing.assert_close(merged[-1, b], torch.cat([top[n - 1, :6], top[0, 6:]]))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("enc_layers,dec_layers", [(2, 2), (2, 1), (1, 3)])
def test_bridges_map_encoder_final_state_to_decoder_layers(cell, enc_layers, dec_layers):
    parts = 2 if cell == "lstm" else 1
    B, He, Hd = 3, 6, 7
    final = tuple(torch.randn(enc_layers * 2, B, He) for _ in range(parts))
    final = final if parts == 2 else final[0]
    kwargs = dict(directions=2, decoder_layers=dec_layers, input_size=2 * He, parts=parts)
    linear = LinearBridge(**kwargs, output_size=Hd)
    zero = ZeroBridge(**kwargs, output_size=Hd)
    for bridge in (linear, zero):
        out = bridge(final)
        out_parts = out if parts == 2 else (out,)
        assert isinstance(out, tuple) == (parts == 2)
        assert all(p.shape == (dec_layers, B, Hd) for p in out_parts)
    assert all(torch.all(p == 0) for p in (zero(final) if parts == 2 else (zero(final),)))
    h = final[0] if parts == 2 else final
    merged = merge_directions(h, 2)
    source = merged if enc_layers == dec_layers else merged[-1:].expand(dec_layers, -1, -1)
    expected = torch.tanh(linear.layers[0](source))
    got = linear(final)[0] if parts == 2 else linear(final)
    torch.testing.assert_close(got, expected)


def test_last_bridge_copies_and_refuses_mismatched_sizes():
    h = torch.randn(2, 3, 6)
    bridge = LastStateBridge(directions=1, decoder_layers=2, input_size=6, output_size=6, parts=1)
    assert torch.equal(bridge(h), h)
    with pytest.raises(ConfigError, match="model.bridge=last"):
        LastStateBridge(directions=2, decoder_layers=1, input_size=12, output_size=6, parts=1)
