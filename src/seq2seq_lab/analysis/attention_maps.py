"""Cross-attention maps of chosen sentences: every decoder layer and head (PNG grid).

Shapes: B batch, L decoder layers, H heads, T target positions, S source positions.

Row t of a map is the query that predicts target token y_t (its input is y_{t-1}, BOS first),
so rows are labelled with the gold target tokens y_1 .. y_m EOS. The weights show which source
positions each head mixed, not why the model decided (architectures.md section 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor, nn

from seq2seq_lab.analysis.heatmap import plot_alignment_grid
from seq2seq_lab.analysis.trace import trace_batch
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.specials import PAD_ID


def cross_attention_maps(network: nn.Module, batch: Batch, rows: Sequence[int]) -> list[Tensor]:
    """For each batch row in ``rows``: its teacher-forced cross-attention [L, H, T, S], cut to
    its real target and source lengths (no dropout)."""
    trace = trace_batch(network, batch)
    stacked = torch.stack(trace.decoder_cross, dim=1)  # L x [B, H, T, S] -> [B, L, H, T, S]
    tgt_lengths = (batch.tgt_out != PAD_ID).sum(dim=1).tolist()
    src_lengths = batch.src_mask.sum(dim=1).tolist()
    return [stacked[r, :, :, : tgt_lengths[r], : src_lengths[r]] for r in rows]


def plot_cross_attention(
    maps: Tensor,
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    path: str | Path,
    title: str | None = None,
) -> Path:
    """A grid of one sentence's maps [L, H, T, S]: one row of panels per layer, one column per
    head, one shared colour scale. Returns the PNG path."""
    layers, heads = maps.shape[:2]
    return plot_alignment_grid(
        [maps[layer, head] for layer in range(layers) for head in range(heads)],
        src_tokens,
        tgt_tokens,
        path,
        titles=[f"layer {layer} head {head}" for layer in range(layers) for head in range(heads)],
        ncols=heads,
        title=title,
    )
