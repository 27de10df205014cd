"""Attention entropy per layer and head (E5: scaled vs unscaled dot-product attention).

For one query with attention weights alpha over its visible keys,

    H = -sum_j alpha_j log alpha_j     (nats; 0 = all weight on one key, log K = uniform)

averaged over the real (non-padding) queries of a batch. Without the 1/sqrt(d_k) scaling the
scores have variance ~d_k, the softmax saturates and H collapses toward 0 as d_k grows
(Vaswani et al. 2017, section 3.2.1).

Works on any network with ``trace(src, src_mask, tgt_in)`` (``TransformerTrace``); no Lightning.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from seq2seq_lab.analysis.trace import trace_batch
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.specials import PAD_ID


def query_entropy(weights: Tensor) -> Tensor:
    """H = -sum_j alpha_j log alpha_j over the last (key) dimension, in nats."""
    # 0 log 0 = 0: masked keys have weight exactly 0
    plogp = torch.where(weights > 0, weights * weights.clamp_min(1e-30).log(), 0.0)
    return -plogp.sum(dim=-1)


def _entropy_per_head(weights: Tensor, query_mask: Tensor) -> list[float]:
    """weights [B, H, Q, K], query_mask [B, Q] -> mean entropy of each head's real queries."""
    entropy = query_entropy(weights)  # [B, H, Q]
    mask = query_mask[:, None, :].expand_as(entropy)  # same queries for every head
    per_head = (entropy * mask).sum(dim=(0, 2)) / mask.sum(dim=(0, 2)).clamp_min(1)
    return per_head.tolist()


def attention_entropy(network: nn.Module, batch: Batch) -> dict[str, list[list[float]]]:
    """{"encoder.self_attn": [[head 0, head 1, ...] for each layer], "decoder.self_attn": ...,
    "decoder.cross_attn": ...} on one batch, without dropout (eval mode; mode restored)."""
    trace = trace_batch(network, batch)
    src_queries, tgt_queries = batch.src_mask, batch.tgt_out != PAD_ID
    return {
        "encoder.self_attn": [_entropy_per_head(w, src_queries) for w in trace.encoder_self],
        "decoder.self_attn": [_entropy_per_head(w, tgt_queries) for w in trace.decoder_self],
        "decoder.cross_attn": [_entropy_per_head(w, tgt_queries) for w in trace.decoder_cross],
    }


def mean_entropy(entropies: dict[str, list[list[float]]]) -> dict[str, float]:
    """The mean over layers and heads of each entry of :func:`attention_entropy`."""
    return {
        name: sum(sum(layer) for layer in layers) / sum(len(layer) for layer in layers)
        for name, layers in entropies.items()
    }
