"""Layer representation similarity: how much consecutive blocks change the token states.

For blocks l and l+1 of one stack, with h_l(x) the output of block l at token x,

    sim(l, l+1) = mean over real (non-padding) tokens x of cos(h_l(x), h_{l+1}(x))

Values near 1 for the last blocks mean those blocks barely change the representation: the
"representation collapse" of deep pre-LN stacks (Liu et al. 2020, arXiv 2004.08249).

Works on any network with ``trace(src, src_mask, tgt_in)`` returning per-block states
(``TransformerTrace``); no Lightning here.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from seq2seq_lab.analysis.trace import trace_batch
from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.specials import PAD_ID


def _consecutive_similarity(states: list[Tensor], mask: Tensor) -> list[float]:
    """states: per block [B, N, D]; mask [B, N] True on real tokens -> one value per pair."""
    values = []
    for lower, upper in zip(states, states[1:]):
        cosine = F.cosine_similarity(lower, upper, dim=-1)  # [B, N]
        values.append(float(cosine[mask].mean()))
    return values


def layer_similarity(network: nn.Module, batch: Batch) -> dict[str, list[float]]:
    """{"encoder": [sim(0, 1), sim(1, 2), ...], "decoder": [...]} on one batch, without
    dropout (eval mode; the network's mode is restored)."""
    trace = trace_batch(network, batch)
    return {
        "encoder": _consecutive_similarity(trace.encoder_states, batch.src_mask),
        "decoder": _consecutive_similarity(trace.decoder_states, batch.tgt_out != PAD_ID),
    }
