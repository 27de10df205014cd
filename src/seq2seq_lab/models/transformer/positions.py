"""Position information for the Transformer: absolute tables added to the embeddings, or relative
position representations inside self-attention.

Shapes: Q query positions, K key positions, N positions, D model width, E width of one head.

- Sinusoidal (Vaswani et al. 2017, section 3.5): PE(pos, 2i) = sin(pos / 10000^(2i/D)),
  PE(pos, 2i+1) = cos(pos / 10000^(2i/D)); fixed, precomputed once.
- Learned absolute positions: one trained D-vector per position (Gehring et al. 2017).
- Relative (Shaw et al. 2018, arXiv 1803.02155, section 3.2): a_ij^K = w^K_clip(j-i, k),
  a_ij^V = w^V_clip(j-i, k) with clip(x, k) = max(-k, min(k, x)), learned w^K, w^V in
  R^{(2k+1) x E} shared by the heads of one layer.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import torch
from torch import Tensor, nn

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.attention.scaled_dot_product import RelativeEmbeddings


class AbsolutePositions(nn.Module, ABC):
    """Base of the absolute tables: rows ``start .. start + length`` of a [max_positions, D] table.

    The table is sized once (``model.max_positions``); test sentences may be longer than any
    training sentence, so size it generously. Asking past its end is a clear config error.
    """

    def __init__(self, *, max_positions: int) -> None:
        super().__init__()
        self.max_positions = max_positions

    @abstractmethod
    def table(self) -> Tensor:
        """The whole [max_positions, D] table."""

    def forward(self, start: int, length: int) -> Tensor:
        """The encodings of positions start .. start + length - 1, [N, D]."""
        if start + length > self.max_positions:
            raise ConfigError(
                f"a sequence of {start + length} positions exceeds "
                f"model.max_positions={self.max_positions}; raise model.max_positions"
            )
        return self.rows(start, start + length)

    def rows(self, start: int, stop: int) -> Tensor:
        """Rows start .. stop - 1 of :meth:`table`."""
        return self.table()[start:stop]


class SinusoidalPositions(AbsolutePositions):
    """PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D))."""

    def __init__(self, *, d_model: int, max_positions: int) -> None:
        super().__init__(max_positions=max_positions)
        position = torch.arange(max_positions, dtype=torch.float32)[:, None]  # [N, 1]
        # 1 / 10000^(2i/D) for i = 0 .. D/2 - 1, computed in log space for precision
        inverse_freq = torch.exp(
            torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model)
        )
        pe = torch.zeros(max_positions, d_model)
        pe[:, 0::2] = torch.sin(position * inverse_freq)
        pe[:, 1::2] = torch.cos(position * inverse_freq[: d_model // 2])  # odd D: one cos fewer
        # not persistent: a function of the shape alone, so checkpoints do not carry it
        self.register_buffer("pe", pe, persistent=False)

    def table(self) -> Tensor:
        return self.pe


class LearnedPositions(AbsolutePositions):
    """One learned D-vector per absolute position: P = ``scale`` * W.

    The network's initialisation scheme sets ``scale`` and W's draw (network.py, ``init``):
    the tokens' sqrt(D) with W ~ N(0, D^-1/2) under ``paper``, so positions enter, and train
    under Adam, as the token embeddings do; 1 with a Xavier-uniform W under ``xavier``.
    """

    def __init__(self, *, d_model: int, max_positions: int, scale: float = 1.0) -> None:
        super().__init__(max_positions=max_positions)
        self.weight = nn.Parameter(torch.empty(max_positions, d_model))
        self.scale = scale
        nn.init.xavier_uniform_(self.weight)

    def table(self) -> Tensor:
        return self.rows(0, self.max_positions)

    def rows(self, start: int, stop: int) -> Tensor:
        # only the rows asked for are scaled: a decoding step asks for one
        rows = self.weight[start:stop]
        return rows * self.scale if self.scale != 1.0 else rows


ABSOLUTE_POSITIONS: dict[str, type[AbsolutePositions]] = {
    "sinusoidal": SinusoidalPositions,
    "learned": LearnedPositions,
}


class RelativePositions(nn.Module):
    """Shaw et al.'s clipped relative position embeddings a_ij^K, a_ij^V for one layer."""

    def __init__(self, *, head_dim: int, max_relative_position: int) -> None:
        super().__init__()
        if max_relative_position < 1:
            raise ConfigError(
                f"model.max_relative_position={max_relative_position} must be at least 1"
            )
        self.max_relative_position = max_relative_position
        self.keys = nn.Embedding(2 * max_relative_position + 1, head_dim)  # w^K
        self.values = nn.Embedding(2 * max_relative_position + 1, head_dim)  # w^V

    def forward(self, n_queries: int, n_keys: int) -> RelativeEmbeddings:
        """a^K, a^V [Q, K, E]; the queries are the last Q of the K positions (Q == K for a whole
        sequence, Q == 1 for one incremental decoding step)."""
        device = self.keys.weight.device
        key_pos = torch.arange(n_keys, device=device)
        query_pos = key_pos[n_keys - n_queries :]
        k = self.max_relative_position
        # j - i clipped to [-k, k], shifted to the row index 0 .. 2k of the tables: [Q, K]
        distance = (key_pos[None, :] - query_pos[:, None]).clamp(-k, k) + k
        return RelativeEmbeddings(keys=self.keys(distance), values=self.values(distance))
