"""TransformerNetwork: causality, padding, cached == uncached decoding (every positions variant),
beam-state reordering, tied embeddings, initialisation, configuration errors, overfitting."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from seq2seq_lab.config import build_network
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID
from seq2seq_lab.decoding.beam import beam_search
from seq2seq_lab.decoding.greedy import greedy_search
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.state import expand_index
from seq2seq_lab.models.transformer.network import TransformerNetwork
from seq2seq_lab.models.transformer.state import CachedDecoderState

V = 24
POSITIONS = ["sinusoidal", "learned", "relative", "none"]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors gain nothing from a second thread, and on a loaded machine threads wait on
    each other: run this module single-threaded, then restore the setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def tiny(**overrides) -> TransformerNetwork:
    args = dict(
        src_vocab_size=V, tgt_vocab_size=V, d_model=16, heads=2, d_ff=32,
        encoder_layers=2, decoder_layers=2, dropout=0.0, max_relative_position=3,
    )  # fmt: skip
    args.update(overrides)
    return build_network("transformer", **args).eval()


def source_batch(b: int = 3, s: int = 7, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded sources ending with EOS; row 1 is shorter."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, V, (b, s), generator=g)
    lengths = torch.full((b,), s)
    lengths[1] = s - 3
    mask = torch.arange(s)[None, :] < lengths[:, None]
    src[torch.arange(b), lengths - 1] = EOS_ID
    return src.masked_fill(~mask, PAD_ID), mask


def target_input(b: int = 3, t: int = 6, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    tgt = torch.randint(4, V, (b, t), generator=g)
    tgt[:, 0] = BOS_ID
    return tgt


@pytest.mark.parametrize("positions", POSITIONS)
def test_output_at_t_ignores_later_target_tokens(positions: str) -> None:
    torch.manual_seed(0)
    net = tiny(positions=positions, norm="post")
    src, mask = source_batch()
    tgt = target_input()
    logits = net.teacher_forced(src, mask, tgt).logits
    for t in range(1, tgt.size(1)):
        changed = tgt.clone()
        changed[:, t:] = torch.randint(4, V, changed[:, t:].shape)
        again = net.teacher_forced(src, mask, changed).logits
        torch.testing.assert_close(again[:, :t], logits[:, :t])
        assert not torch.allclose(again[:, t:], logits[:, t:])


def test_source_padding_content_is_ignored() -> None:
    torch.manual_seed(1)
    net = tiny()
    src, mask = source_batch()
    tgt = target_input()
    changed = src.masked_fill(~mask, 5)  # other ids where the mask says padding
    torch.testing.assert_close(
        net.teacher_forced(changed, mask, tgt).logits, net.teacher_forced(src, mask, tgt).logits
    )


def _stepwise_logits(net: TransformerNetwork, src, mask, tgt, kv_cache: bool):
    net.kv_cache = kv_cache
    state = net.init_state(net.encode(src, mask))
    logits, attention = [], []
    for t in range(tgt.size(1)):
        out = net.step(tgt[:, t], state)
        state = out.state
        logits.append(out.logits)
        attention.append(out.attention)
    return torch.stack(logits, 1), torch.stack(attention, 1)


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("positions", POSITIONS)
def test_cached_steps_equal_uncached_steps_and_teacher_forcing(positions: str, norm: str) -> None:
    torch.manual_seed(2)
    net = tiny(positions=positions, norm=norm)
    src, mask = source_batch()
    tgt = target_input()
    cached, cached_attention = _stepwise_logits(net, src, mask, tgt, kv_cache=True)
    uncached, uncached_attention = _stepwise_logits(net, src, mask, tgt, kv_cache=False)
    torch.testing.assert_close(cached, uncached, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(cached_attention, uncached_attention, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(
        cached, net.teacher_forced(src, mask, tgt).logits, atol=1e-5, rtol=1e-5
    )
    # the returned attention is a distribution over the real source tokens
    torch.testing.assert_close(cached_attention.sum(-1), torch.ones(3, tgt.size(1)))
    assert (cached_attention[1, :, 4:] == 0).all()


@pytest.mark.parametrize("positions", POSITIONS)
def test_greedy_and_beam_search_identical_with_and_without_cache(positions: str) -> None:
    torch.manual_seed(3)
    net = tiny(positions=positions)
    src, mask = source_batch(b=4, s=6)
    results = {}
    for kv_cache in (True, False):
        net.kv_cache = kv_cache
        greedy = greedy_search(net, src, mask, max_len_a=0.0, max_len_b=12, min_len=12)
        beam = beam_search(
            net, src, mask, beam_size=3, length_penalty=1.0, max_len_a=1.0, max_len_b=4, min_len=0
        )
        results[kv_cache] = (greedy.tokens, beam.tokens)
    assert all(len(row) == 12 for row in results[True][0])  # length forced, EOS ignored
    assert results[True] == results[False]


def test_reorder_beams_moves_caches_and_keeps_cross_attention_keys() -> None:
    torch.manual_seed(4)
    net = tiny()
    src, mask = source_batch(b=2)
    state = net.init_state(net.encode(src, mask)).select(expand_index(2, 2))  # 4 rows
    assert isinstance(state, CachedDecoderState)
    for token in (BOS_ID, 5, 6):
        state = net.step(torch.full((4,), token), state).state
    assert state.steps == 3
    order = torch.tensor([1, 1, 3, 2])  # beams stay inside their sentence's group
    reordered = state.reorder_beams(order)
    for before, after in zip(state.cache, reordered.cache):
        torch.testing.assert_close(after.k, before.k[order])
        torch.testing.assert_close(after.v, before.v[order])
    assert all(a is b for a, b in zip(reordered.cross, state.cross))  # static: untouched
    assert reordered.src_mask is state.src_mask


def test_tied_embeddings() -> None:
    untied = tiny()
    decoder = tiny(tie_embeddings="decoder")
    both = tiny(tie_embeddings="all")
    assert untied.output.weight is not untied.tgt_embed.weight
    assert decoder.output.weight is decoder.tgt_embed.weight
    assert decoder.src_embed.weight is not decoder.tgt_embed.weight
    assert both.output.weight is both.tgt_embed.weight is both.src_embed.weight
    n_params = [sum(p.numel() for p in net.parameters()) for net in (untied, decoder, both)]
    assert n_params[0] - n_params[1] == n_params[1] - n_params[2] == V * 16
    with pytest.raises(ConfigError, match=r"model\.tie_embeddings=all needs one joint"):
        tiny(tie_embeddings="all", tgt_vocab_size=V + 1)


def test_xavier_uniform_matrices_and_zero_biases() -> None:
    torch.manual_seed(5)
    net = tiny(d_model=32, d_ff=64, positions="learned")
    for name, p in net.named_parameters():
        if p.dim() > 1:
            fan_out, fan_in = p.shape
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            assert p.abs().max() <= bound, name
            # a uniform(-a, a) sample has std a / sqrt(3)
            assert abs(p.std().item() - bound / math.sqrt(3)) < 0.15 * bound, name
        elif name.endswith("bias"):
            assert (p == 0).all(), name


def test_embeddings_scaled_by_sqrt_d_model() -> None:
    torch.manual_seed(6)
    net = tiny(positions="none")
    tokens = torch.tensor([[5, 6, 7]])
    embedded = net._embed(net.tgt_embed, net.tgt_positions, tokens, start=0)
    torch.testing.assert_close(embedded, net.tgt_embed(tokens) * 4.0)


def test_sequence_longer_than_max_positions_is_a_clear_error() -> None:
    net = tiny(max_positions=8)
    src, mask = source_batch(s=7)
    net.teacher_forced(src, mask, target_input(t=8))  # exactly fits
    with pytest.raises(ConfigError, match=r"9 positions exceeds model\.max_positions=8"):
        net.teacher_forced(src, mask, target_input(t=9))
    relative = tiny(max_positions=8, positions="relative")
    relative.teacher_forced(src, mask, target_input(t=20))  # relative positions need no table


@pytest.mark.parametrize(
    ("key", "value"),
    [("positions", "rotary"), ("tie_embeddings", "encoder"), ("norm", "sandwich")],
)
def test_bad_choices_name_their_config_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=rf"model\.{key}='{value}'"):
        tiny(**{key: value})


def test_overfits_a_tiny_batch() -> None:
    torch.manual_seed(7)
    net = tiny(d_model=32, heads=4, d_ff=64, dropout=0.1).train()
    src, mask = source_batch(b=4, s=6, seed=10)
    gold = torch.randint(4, V, (4, 5), generator=torch.Generator().manual_seed(11))
    tgt_in = torch.cat([torch.full((4, 1), BOS_ID), gold], dim=1)
    tgt_out = torch.cat([gold, torch.full((4, 1), EOS_ID)], dim=1)
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3, betas=(0.9, 0.98))
    first = None
    for _ in range(200):
        logits = net(src, mask, tgt_in).logits
        loss = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1))
        first = loss.item() if first is None else first
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    net.eval()
    with torch.no_grad():
        logits = net(src, mask, tgt_in).logits
    final = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1)).item()
    assert first > 2.5 and final < 0.02
    hyps = greedy_search(net, src, mask, max_len_a=0.0, max_len_b=10, min_len=0)
    assert hyps.tokens == gold.tolist()
