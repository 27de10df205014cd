"""Encoder memory and decoder states of the recurrent families (see models/state.py).

Shapes: B batch, S source length, L layers, H hidden width, Dk encoder output width.

An RNN's hidden state is ``Tensor`` [L, B, H] (GRU, vanilla RNN) or the LSTM pair ``(h, c)``;
both index the batch on dim 1, hence ``batch_dim: 1``.
"""

from __future__ import annotations

import dataclasses

from torch import Tensor

from seq2seq_lab.models.state import BatchState

RNNHidden = Tensor | tuple[Tensor, Tensor]  # [L, B, H], or (h, c) for an LSTM

_LAYERS = {"batch_dim": 1}  # (L, B, H) tensors
_STATIC = {"static": True}  # a function of the source sentence alone


def top_layer(hidden: RNNHidden) -> Tensor:
    """The last layer's hidden state s_t [B, H] (h of an LSTM's (h, c))."""
    h = hidden[0] if isinstance(hidden, tuple) else hidden
    return h[-1]


@dataclasses.dataclass
class RNNMemory(BatchState):
    """What :class:`~seq2seq_lab.models.recurrent.encoder.RNNEncoder` leaves for the decoder."""

    # encoder final state of every layer and direction [L*dirs, B, H] (the "thought vector")
    final: RNNHidden = dataclasses.field(metadata={**_LAYERS, **_STATIC})
    outputs: Tensor = dataclasses.field(metadata=_STATIC)  # [B, S, Dk] h_1..h_S, in source order
    src_mask: Tensor = dataclasses.field(metadata=_STATIC)  # [B, S] True on real tokens


@dataclasses.dataclass
class RNNDecoderState(BatchState):
    """Plain seq2seq: the decoder RNN's state and nothing else."""

    hidden: RNNHidden = dataclasses.field(metadata=_LAYERS)


@dataclasses.dataclass
class AttentionDecoderState(BatchState):
    """Bahdanau/Luong: RNN state, the source the decoder attends to, and per-step extras."""

    hidden: RNNHidden = dataclasses.field(metadata=_LAYERS)
    memory: Tensor = dataclasses.field(metadata=_STATIC)  # [B, S, Dk] keys = values h_i
    keys: Tensor = dataclasses.field(metadata=_STATIC)  # attention.precompute_keys(memory)
    src_mask: Tensor = dataclasses.field(metadata=_STATIC)  # [B, S]
    feed: Tensor | None = None  # [B, H] Luong's input feeding: s~_{t-1} (None without it)
    t: int = 0  # target position of the next step (local-m centres its window on it)
