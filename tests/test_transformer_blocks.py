"""Where the LayerNorm sits (post-LN vs pre-LN), the FFN formula and the blocks' structure."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq_lab.config import build_network
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.attention.multi_head import AttentionOptions, AttentionOutput
from seq2seq_lab.models.transformer.blocks import EncoderBlock
from seq2seq_lab.models.transformer.sublayers import (
    FeedForward,
    PostNormResidual,
    PreNormResidual,
    residual_class,
)

D = 8


def _stub(x: Tensor) -> Tensor:
    """A stand-in sub-layer, deliberately not LayerNorm-friendly."""
    return 3.0 * x.flip(-1) + 1.0


def _randomise_norm(norm: nn.LayerNorm) -> None:
    # non-trivial gain and bias, so that a misplaced LayerNorm cannot go unnoticed
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)


def test_pre_norm_residual_is_x_plus_f_of_layernorm_x() -> None:
    torch.manual_seed(0)
    residual = PreNormResidual(d_model=D, dropout=0.3).eval()
    _randomise_norm(residual.norm)
    x = torch.randn(2, 5, D)
    torch.testing.assert_close(residual(x, _stub), x + _stub(residual.norm(x)))
    assert PreNormResidual.final_norm


def test_post_norm_residual_is_layernorm_of_x_plus_f_x() -> None:
    torch.manual_seed(1)
    residual = PostNormResidual(d_model=D, dropout=0.3).eval()
    _randomise_norm(residual.norm)
    x = torch.randn(2, 5, D)
    torch.testing.assert_close(residual(x, _stub), residual.norm(x + _stub(x)))
    assert not PostNormResidual.final_norm


class _ZeroAttention(nn.Module):
    """Self-attention stub that contributes nothing, so the FFN wrapping can be checked."""

    def forward(self, query: Tensor, source: Tensor, **_: object) -> AttentionOutput:
        return AttentionOutput(torch.zeros_like(query), None)


class _StubFFN(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return _stub(x)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_encoder_block_places_layernorm_by_norm(norm: str) -> None:
    torch.manual_seed(2)
    block = EncoderBlock(
        d_model=D,
        heads=2,
        d_ff=16,
        dropout=0.0,
        residual=residual_class(norm),
        ffn_activation="relu",
        attention=AttentionOptions(scale=True, dropout=0.0),
        max_relative_position=None,
    ).eval()
    block.self_attn = _ZeroAttention()
    block.ffn = _StubFFN()
    _randomise_norm(block.self_attn_residual.norm)
    _randomise_norm(block.ffn_residual.norm)
    x = torch.randn(2, 5, D)
    out = block(x, torch.ones(2, 5, dtype=torch.bool)).x
    ln_attn, ln_ffn = block.self_attn_residual.norm, block.ffn_residual.norm
    if norm == "pre":  # x1 = x + 0; out = x1 + f(LN(x1))
        expected = x + _stub(ln_ffn(x))
    else:  # x1 = LN(x + 0); out = LN(x1 + f(x1))
        x1 = ln_attn(x)
        expected = ln_ffn(x1 + _stub(x1))
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_one_norm_placement_everywhere_and_final_norm_iff_pre(norm: str) -> None:
    net = build_network(
        "transformer", src_vocab_size=10, tgt_vocab_size=10, d_model=D, heads=2, d_ff=16,
        encoder_layers=2, decoder_layers=3, norm=norm,
    )  # fmt: skip
    expected_class = PreNormResidual if norm == "pre" else PostNormResidual
    residuals = [m for m in net.modules() if isinstance(m, (PreNormResidual, PostNormResidual))]
    assert len(residuals) == 2 * 2 + 3 * 3
    assert all(type(m) is expected_class for m in residuals)
    if norm == "pre":
        assert isinstance(net.encoder_norm, nn.LayerNorm)
        assert isinstance(net.decoder_norm, nn.LayerNorm)
    else:
        assert net.encoder_norm is None and net.decoder_norm is None
    layer_norms = [m for m in net.modules() if isinstance(m, nn.LayerNorm)]
    assert len(layer_norms) == len(residuals) + (2 if norm == "pre" else 0)


@pytest.mark.parametrize(
    ("activation", "fn"), [("relu", F.relu), ("silu", F.silu), ("gelu", F.gelu)]
)
def test_feed_forward_formula(activation: str, fn) -> None:
    torch.manual_seed(3)
    ffn = FeedForward(d_model=D, d_ff=16, activation=activation)
    x = torch.randn(2, 3, D)
    expected = fn(x @ ffn.w_1.weight.T + ffn.w_1.bias) @ ffn.w_2.weight.T + ffn.w_2.bias
    torch.testing.assert_close(ffn(x), expected)


def test_bad_choices_name_their_config_key() -> None:
    with pytest.raises(ConfigError, match=r"model\.ffn_activation='tanh'"):
        FeedForward(d_model=D, d_ff=16, activation="tanh")
    with pytest.raises(ConfigError, match=r"model\.norm='sandwich' must be one of post\|pre"):
        residual_class("sandwich")
