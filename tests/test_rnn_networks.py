"""Recurrent families through the Seq2SeqNetwork contract: fast paths == step paths, beam-search
state handling, padding, scheduled sampling, configuration errors."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lab.config import build_network, instantiate, model_config
from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.state import expand_index

SRC_V, TGT_V = 13, 11
TINY = dict(hidden_size=8, embedding_dim=6, dropout=0.0)

CONFIGS = {
    "plain-lstm": ("plain", {}),
    "seq2seq-gru-bi-bridge": (
        "plain",
        {"cell": "gru", "bidirectional": True, "bridge": "bridge"},
    ),
    "seq2seq-rnn-1to2-layers": (
        "plain",
        {"cell": "rnn", "encoder_num_layers": 1, "bridge": "bridge"},
    ),
    "bahdanau-separate": ("bahdanau", {}),
    "bahdanau-concat-lstm": ("bahdanau", {"cell": "lstm", "attention": {"form": "concat"}}),
    "bahdanau-feedforward-2layers": (
        "bahdanau",
        {"num_layers": 2, "attention": {"form": "feedforward"}},
    ),
    "bahdanau-zero-bridge-reversed": ("bahdanau", {"bridge": "zero", "reverse_source": True}),
    "luong-general-if": ("luong", {}),
    "luong-dot-noif": ("luong", {"input_feeding": False, "attention": {"score": "dot"}}),
    "luong-general-noif-bi-tied": (
        "luong",
        {
            "input_feeding": False,
            "bidirectional": True,
            "tie_embeddings": True,
            "hidden_size": 6,
        },
    ),
    "luong-concat-noif-gru": (
        "luong",
        {"input_feeding": False, "cell": "gru", "attention": {"score": "concat"}},
    ),
    "luong-location-noif": (
        "luong",
        {"input_feeding": False, "attention": {"score": "location", "max_positions": 4}},
    ),
    "luong-local_m-noif": (
        "luong",
        {"input_feeding": False, "attention": {"window": "local_m", "window_size": 1}},
    ),
    "luong-local_p-noif-2layers": (
        "luong",
        {
            "input_feeding": False,
            "num_layers": 2,
            "attention": {"window": "local_p", "window_size": 2},
        },
    ),
    "luong-local_p-if-reversed": (
        "luong",
        {"reverse_source": True, "attention": {"window": "local_p", "score": "dot"}},
    ),
}


def build(name, **overrides):
    family, kwargs = CONFIGS[name]
    torch.manual_seed(0)
    options = {**TINY, **kwargs, **overrides}
    return build_network(family, src_vocab_size=SRC_V, tgt_vocab_size=TGT_V, **options)


def make_batch(src_lengths=(6, 4, 2), tgt_len=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    S = max(src_lengths)
    src = torch.full((len(src_lengths), S), PAD_ID)
    for b, n in enumerate(src_lengths):
        src[b, : n - 1] = torch.randint(4, SRC_V, (n - 1,), generator=g)
        src[b, n - 1] = EOS_ID
    tgt_in = torch.randint(4, TGT_V, (len(src_lengths), tgt_len), generator=g)
    tgt_in[:, 0] = BOS_ID
    return src, src != PAD_ID, tgt_in


@pytest.mark.parametrize("name", list(CONFIGS))
def test_teacher_forced_equals_step_loop(name):
    """The fast teacher-forced path (one RNN call for plain seq2seq and Luong without input
    feeding, output layer once for all) equals the contract's step loop, dropout off."""
    net = build(name).eval()
    src, src_mask, tgt_in = make_batch()
    fast = net.teacher_forced(src, src_mask, tgt_in)
    slow = net.stepwise(src, src_mask, tgt_in, teacher_forcing_ratio=1.0)
    assert fast.logits.shape == (3, 5, TGT_V)
    torch.testing.assert_close(fast.logits, slow.logits, atol=1e-5, rtol=1e-5)
    if net.family == "plain":
        assert fast.attention is None and slow.attention is None
    else:
        assert fast.attention.shape == (3, 5, 6)
        torch.testing.assert_close(fast.attention, slow.attention, atol=1e-6, rtol=1e-5)
        assert torch.all(fast.attention[~src_mask[:, None, :].expand(-1, 5, -1)] == 0)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_padded_rows_decode_like_the_same_row_alone(name):
    net = build(name).eval()
    src, src_mask, tgt_in = make_batch()
    batched = net.teacher_forced(src, src_mask, tgt_in).logits
    n = int(src_mask[2].sum())
    alone = net.teacher_forced(src[2:, :n], src_mask[2:, :n], tgt_in[2:]).logits
    torch.testing.assert_close(batched[2:], alone, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_beam_state_expansion_and_reordering(name):
    """Beam search's use of the state: select() expands B -> B*K rows; reorder_beams() (which
    skips static per-sentence fields) must act like select() with the same within-group index,
    i.e. nothing that changes per step is marked static."""
    net = build(name).eval()
    src, src_mask, tgt_in = make_batch()
    K = 2
    with torch.no_grad():
        state = net.init_state(net.encode(src, src_mask))
        single = net.step(tgt_in[:, 0], state)
        expanded = state.select(expand_index(3, K))
        out = net.step(tgt_in[:, 0].repeat_interleave(K), expanded)
        torch.testing.assert_close(out.logits, single.logits.repeat_interleave(K, 0))
        swap = torch.tensor([1, 0, 2, 3, 5, 4])  # permutes rows within each sentence's group
        prev = torch.arange(4, 4 + 3 * K) % TGT_V
        a = net.step(prev, out.state.reorder_beams(swap))
        b = net.step(prev, out.state.select(swap))
        torch.testing.assert_close(a.logits, b.logits)
        a2 = net.step(prev, a.state)
        b2 = net.step(prev, b.state)
        torch.testing.assert_close(a2.logits, b2.logits)
        if net.family != "plain":
            assert a.attention.shape == (3 * K, 6)


@pytest.mark.parametrize("name", ["plain-lstm", "bahdanau-separate", "luong-local_p-noif-2layers"])
def test_every_parameter_gets_a_gradient(name):
    net = build(name).train()
    src, src_mask, tgt_in = make_batch()
    net(src, src_mask, tgt_in).logits.sum().backward()
    missing = [n for n, p in net.named_parameters() if p.grad is None or not p.grad.abs().sum()]
    assert not missing


@pytest.mark.parametrize("name", ["plain-lstm", "bahdanau-separate", "luong-dot-noif"])
def test_teacher_forcing_ratio_zero_feeds_own_predictions(name):
    """ratio 0 in training mode == a greedy loop feeding back the argmax (dropout is 0)."""
    net = build(name, teacher_forcing_ratio=0.0).train()
    src, src_mask, tgt_in = make_batch()
    logits = net(src, src_mask, tgt_in).logits
    state = net.init_state(net.encode(src, src_mask))
    prev, expected = tgt_in[:, 0], []
    for _ in range(tgt_in.size(1)):
        out = net.step(prev, state)
        state, prev = out.state, out.logits.argmax(-1)
        expected.append(out.logits)
    torch.testing.assert_close(logits, torch.stack(expected, 1))
    assert not torch.allclose(logits, net.teacher_forced(src, src_mask, tgt_in).logits)


def test_tied_embeddings_share_one_matrix():
    net = build("luong-general-noif-bi-tied")
    assert net.output.weight is net.tgt_embedding.weight
    assert net.family == "luong"
    assert build("plain-lstm").family == "plain"
    assert build("bahdanau-separate").family == "bahdanau"


@pytest.mark.parametrize(
    "family,kwargs,message",
    [
        ("plain", {"cell": "transformer"}, "model.cell='transformer'.*lstm, gru, rnn"),
        ("plain", {"bridge": "magic"}, "model.bridge='magic'.*bridge, last, zero"),
        ("plain", {"bidirectional": True, "bridge": "last"}, "model.bridge=last"),
        ("plain", {"tie_embeddings": True}, "model.tie_embeddings"),
        ("plain", {"dropout": 1.0}, "model.dropout"),
        ("plain", {"num_layers": 0}, "model.num_layers"),
        ("bahdanau", {"attention": {"form": "dot"}}, "concat, separate, feedforward"),
        ("bahdanau", {"attention": {"score": "dot"}}, "model.attention.score is not"),
        ("luong", {"attention": {"score": "cosine"}}, "dot, general, concat, location"),
        ("luong", {"attention": {"window": "local"}}, "global, local_m, local_p"),
        ("luong", {"attention": {"window_size": 0}}, "model.attention.window_size"),
        (
            "luong",
            {"bidirectional": True, "attention": {"score": "dot"}},
            "model.attention.score=dot.*model.bidirectional",
        ),
    ],
)
def test_bad_options_raise_config_errors_naming_the_key(family, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        build_network(family, src_vocab_size=SRC_V, tgt_vocab_size=TGT_V, **{**TINY, **kwargs})


@pytest.mark.parametrize("family,key", [("bahdanau", "form"), ("luong", "window_size")])
def test_a_missing_attention_key_is_named(family, key):
    """No second default hides in the code: a key the config lacks is an error."""
    options = model_config(family, **TINY)
    del options["attention"][key]
    with pytest.raises(ConfigError, match=f"model.attention.{key} is missing"):
        instantiate(options, key="model", src_vocab_size=SRC_V, tgt_vocab_size=TGT_V)
