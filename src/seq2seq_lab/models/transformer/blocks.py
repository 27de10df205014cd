"""Transformer encoder and decoder blocks (Vaswani et al. 2017, section 3.1), composed from the
sub-layers in ``sublayers.py``; the norm placement (post-LN or pre-LN) is the injected
``residual`` class, the same for every block of a network.

Shapes: B batch, S source length, T target positions in this call, K key positions, D model
width, H heads.

    encoder block:  x = Residual(x, SelfAttention(bidirectional, source padding masked))
                    x = Residual(x, FFN)
    decoder block:  x = Residual(x, SelfAttention(causal))
                    x = Residual(x, CrossAttention(queries x, keys/values = encoder output))
                    x = Residual(x, FFN)

With ``max_relative_position`` set, each block's self-attention adds Shaw et al.'s relative
position embeddings to its keys and values (cross-attention has none, as in the paper).
"""

from __future__ import annotations

from typing import NamedTuple

from torch import Tensor, nn

from seq2seq_lab.models.attention.multi_head import (
    AttentionOptions,
    KeyValue,
    KeyValueCache,
    MultiHeadAttention,
)
from seq2seq_lab.models.transformer.positions import RelativePositions
from seq2seq_lab.models.transformer.sublayers import FeedForward, Residual


class EncoderBlockOutput(NamedTuple):
    x: Tensor  # [B, S, D]
    self_weights: Tensor | None  # [B, H, S, S] when asked for


class DecoderBlockOutput(NamedTuple):
    x: Tensor  # [B, T, D]
    cache: KeyValueCache | None  # with ``past``: the self-attention cache, this position written
    self_weights: Tensor | None  # [B, H, T, K] when asked for
    cross_weights: Tensor | None  # [B, H, T, S] when asked for


def _relative_positions(
    d_model: int, heads: int, max_relative_position: int | None
) -> RelativePositions | None:
    if max_relative_position is None:
        return None
    return RelativePositions(head_dim=d_model // heads, max_relative_position=max_relative_position)


class EncoderBlock(nn.Module):
    """Self-attention over the source, then the FFN, each inside a residual wrapping."""

    def __init__(
        self,
        *,
        d_model: int,
        heads: int,
        d_ff: int,
        dropout: float,
        residual: type[Residual],
        ffn_activation: str,
        attention: AttentionOptions,
        max_relative_position: int | None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(
            d_model=d_model, heads=heads, scale=attention.scale, dropout=attention.dropout
        )
        self.self_attn_residual = residual(d_model=d_model, dropout=dropout)
        self.ffn = FeedForward(d_model=d_model, d_ff=d_ff, activation=ffn_activation)
        self.ffn_residual = residual(d_model=d_model, dropout=dropout)
        self.relative = _relative_positions(d_model, heads, max_relative_position)

    def named_sublayers(self) -> list[tuple[str, nn.Module]]:
        """The sub-layers whose weights the diagnostics report, in order."""
        return [("self_attn", self.self_attn), ("ffn", self.ffn)]

    def forward(
        self, x: Tensor, src_mask: Tensor, *, need_weights: bool = False
    ) -> EncoderBlockOutput:
        """x [B, S, D], src_mask [B, S] True on real tokens (padding keys are hidden)."""
        h = self.self_attn_residual.before(x)
        relative = None if self.relative is None else self.relative(x.size(1), x.size(1))
        attended = self.self_attn(
            h, h, key_mask=src_mask, need_weights=need_weights, relative=relative
        )
        x = self.self_attn_residual.after(x, attended.output)
        x = self.ffn_residual(x, self.ffn)
        return EncoderBlockOutput(x, attended.weights)


class DecoderBlock(nn.Module):
    """Causal self-attention, cross-attention over the encoder output, then the FFN.

    Called on the whole target (``past=None``: causal mask, fused kernel; no cache is
    returned) or on the new position of one incremental step (``past`` = the self-attention
    cache of the earlier positions; the new position's keys/values are written into it in place
    and the query attends over the filled positions, all visible, so no mask is needed). The
    returned ``cache`` is ``past`` with this call's position written. ``cross`` holds the
    encoder output's keys/values, projected once per sentence by ``cross_attn.project_kv``.
    """

    def __init__(
        self,
        *,
        d_model: int,
        heads: int,
        d_ff: int,
        dropout: float,
        residual: type[Residual],
        ffn_activation: str,
        attention: AttentionOptions,
        max_relative_position: int | None,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(
            d_model=d_model, heads=heads, scale=attention.scale, dropout=attention.dropout
        )
        self.self_attn_residual = residual(d_model=d_model, dropout=dropout)
        self.cross_attn = MultiHeadAttention(
            d_model=d_model, heads=heads, scale=attention.scale, dropout=attention.dropout
        )
        self.cross_attn_residual = residual(d_model=d_model, dropout=dropout)
        self.ffn = FeedForward(d_model=d_model, d_ff=d_ff, activation=ffn_activation)
        self.ffn_residual = residual(d_model=d_model, dropout=dropout)
        self.relative = _relative_positions(d_model, heads, max_relative_position)

    def named_sublayers(self) -> list[tuple[str, nn.Module]]:
        """The sub-layers whose weights the diagnostics report, in order."""
        return [("self_attn", self.self_attn), ("cross_attn", self.cross_attn), ("ffn", self.ffn)]

    def forward(
        self,
        x: Tensor,
        cross: KeyValue,
        src_mask: Tensor,
        *,
        past: KeyValueCache | None = None,
        need_weights: bool = False,
    ) -> DecoderBlockOutput:
        """x [B, T, D] (T = 1 with ``past``), cross [B, H, S, D/H], src_mask [B, S]."""
        assert past is None or x.size(1) == 1, "an incremental step feeds one position"
        h = self.self_attn_residual.before(x)
        kv = self.self_attn.project_kv(h)
        cache = None
        if past is not None:
            cache = past.append(kv)  # position t written in place
            kv = cache.filled()  # keys/values of positions 0 .. t, the query is position t
        relative = None if self.relative is None else self.relative(x.size(1), kv.length)
        attended = self.self_attn.attend(
            h, kv, causal=past is None, need_weights=need_weights, relative=relative
        )
        x = self.self_attn_residual.after(x, attended.output)

        h = self.cross_attn_residual.before(x)
        crossed = self.cross_attn.attend(h, cross, key_mask=src_mask, need_weights=need_weights)
        x = self.cross_attn_residual.after(x, crossed.output)

        x = self.ffn_residual(x, self.ffn)
        return DecoderBlockOutput(x, cache, attended.weights, crossed.weights)
