"""Local attention (Luong et al. 2015, arXiv 1508.04025, section 3.2): attend to a window.

Shapes: B batch, T queries, S source positions, Dq query width.

A local mechanism wraps any scorer (dot, general, concat, ...): at target position t it picks a
centre p_t, keeps the source positions with |s - p_t| <= D (D = ``window_size``), and takes the
softmax of the wrapped scores over that window only; positions outside the window (and padding)
get exactly zero weight. Positions are 0-based on both sides (the first target word is t = 0, the
first source word s = 0) and every window is clipped to the real tokens of its row.
"""

from __future__ import annotations

from abc import abstractmethod

import torch
from torch import Tensor, nn

from seq2seq_lab.models.attention.base import AttentionScorer, masked_softmax


class LocalAttention(AttentionScorer):
    """Base of the local mechanisms: window |s - p_t| <= D around a centre p_t, softmax inside.

    a_t(s) = softmax_{s in window}(score(s_t, h_s))
    """

    def __init__(self, *, scorer: AttentionScorer, window_size: int) -> None:
        super().__init__()
        if window_size < 1:
            raise ValueError(f"local attention needs window_size >= 1, got {window_size}")
        self.scorer = scorer
        self.window_size = window_size

    def precompute_keys(self, keys: Tensor) -> Tensor:
        return self.scorer.precompute_keys(keys)

    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        return self.scorer.score(query, projected_keys)

    @abstractmethod
    def centre(self, query: Tensor, lengths: Tensor, position: int) -> Tensor:
        """query [B, T, Dq], real source lengths [B] -> window centres p_t [B, T] (float)."""

    def _offsets(
        self, scores: Tensor, query: Tensor, key_mask: Tensor, position: int
    ) -> tuple[Tensor, Tensor]:
        """(s - p_t) [B, T, S] and the window mask [B, T, S] (inside the window and real)."""
        lengths = key_mask.sum(-1)  # [B]
        p = self.centre(query, lengths, position)  # [B, T]
        s = torch.arange(scores.size(-1), device=scores.device, dtype=p.dtype)  # [S]
        offset = s - p[..., None]  # [S] - [B, T, 1] -> [B, T, S]
        window = (offset.abs() <= self.window_size) & key_mask[:, None, :]
        return offset, window

    def normalize(self, scores: Tensor, query: Tensor, key_mask: Tensor, position: int) -> Tensor:
        _, window = self._offsets(scores, query, key_mask, position)
        return masked_softmax(scores, window)


class LocalMonotonicAttention(LocalAttention):
    """Local-m: monotonic alignment, p_t = t (clipped to the last real source position, so
    targets longer than their source still see a non-empty window)."""

    def centre(self, query: Tensor, lengths: Tensor, position: int) -> Tensor:
        B, T, _ = query.shape
        t = torch.arange(position, position + T, device=query.device)  # [T]
        last = (lengths - 1)[:, None]  # [B, 1]
        return torch.minimum(t[None, :].expand(B, T), last).to(query.dtype)  # [B, T]


class LocalPredictiveAttention(LocalAttention):
    """Local-p: predicted centre and a Gaussian-weighted window.

    p_t = (S_b - 1) * sigmoid(v_p^T tanh(W_p s_t))      (S_b: real length of row b)
    a_t(s) = softmax_{s in window}(score(s_t, h_s)) * exp(-(s - p_t)^2 / (2 sigma^2)),
    sigma = D / 2.

    Luong writes p_t = S * sigmoid(...) with 1-based positions; with 0-based positions the
    factor S - 1 lets the centre reach exactly the first and the last token. As in the paper the
    Gaussian is applied after the softmax and the weights are not renormalised (they sum to at
    most 1); the Gaussian is what carries the gradient to W_p and v_p.
    """

    def __init__(self, *, scorer: AttentionScorer, window_size: int, query_size: int) -> None:
        super().__init__(scorer=scorer, window_size=window_size)
        self.W_p = nn.Linear(query_size, query_size, bias=False)
        self.v_p = nn.Linear(query_size, 1, bias=False)

    def centre(self, query: Tensor, lengths: Tensor, position: int) -> Tensor:
        fraction = torch.sigmoid(self.v_p(torch.tanh(self.W_p(query)))).squeeze(-1)  # [B, T]
        return (lengths - 1)[:, None].to(query.dtype) * fraction

    def normalize(self, scores: Tensor, query: Tensor, key_mask: Tensor, position: int) -> Tensor:
        offset, window = self._offsets(scores, query, key_mask, position)
        sigma = self.window_size / 2
        gaussian = torch.exp(-offset.pow(2) / (2 * sigma**2))  # [B, T, S]
        return masked_softmax(scores, window) * gaussian
