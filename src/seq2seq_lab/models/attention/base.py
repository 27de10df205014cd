"""The one interface of the recurrent-model attention mechanisms (Bahdanau, Luong, local).

Shapes: B batch, T queries (decoder steps), S source (key) positions, Dq query width,
Dk key width, Dv value width.

Every mechanism is ``attention(query, keys, values, key_mask) -> (context, weights)``:

- ``query`` is one decoder state per row, [B, Dq], or a block of T states, [B, T, Dq]
  (Luong without input feeding attends for every target position in one product);
- ``keys`` [B, S, Dk] and ``values`` [B, S, Dv] (the encoder states; Bahdanau and Luong
  attention use the same tensor for both);
- ``key_mask`` [B, S] bool, True on real source tokens. Padding is masked *before* the softmax,
  so it gets exactly zero weight and its keys/values cannot change the result.

It returns ``context`` [B, Dv] (or [B, T, Dv]) and ``weights`` [B, S] (or [B, T, S]).

A mechanism splits into :meth:`AttentionScorer.precompute_keys` (the part of the score that
depends on the source only, e.g. W_1 h_i, computed once per sentence and kept in the decoder
state as a static field) and :meth:`AttentionScorer.score` (the per-step part).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

import torch
from torch import Tensor, nn


class AttentionOutput(NamedTuple):
    context: Tensor  # [B, Dv] or [B, T, Dv]: sum_i alpha_i v_i
    weights: Tensor  # [B, S] or [B, T, S]: alpha, zero on padding


def masked_softmax(scores: Tensor, mask: Tensor) -> Tensor:
    """softmax over the last dim of ``scores`` restricted to ``mask`` (broadcastable bool).

    Masked positions are filled with -inf first, so their weight is exactly 0. Every row must
    keep at least one position (a source always has its EOS; local windows are built so).
    """
    return scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)


class AttentionScorer(nn.Module, ABC):
    """Base class: score every key for every query, softmax over keys, weighted sum of values.

    alpha_{t,i} = exp(e_{t,i}) / sum_j exp(e_{t,j}),   c_t = sum_i alpha_{t,i} v_i

    Subclasses define the score e_{t,i} = score(q_t, k_i) (their docstring gives the formula) and,
    where part of it depends on the keys alone, :meth:`precompute_keys`. :meth:`normalize` turns
    scores into weights (a masked softmax; local attention restricts it to a window).
    """

    def precompute_keys(self, keys: Tensor) -> Tensor:
        """keys [B, S, Dk] -> whatever :meth:`score` needs from the source (default: the keys).

        Called once per sentence; decoders keep the result in their state as a static field.
        """
        return keys

    @abstractmethod
    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        """query [B, T, Dq], projected_keys (from :meth:`precompute_keys`) -> scores [B, T, S]."""

    def normalize(self, scores: Tensor, query: Tensor, key_mask: Tensor, position: int) -> Tensor:
        """scores [B, T, S] -> weights [B, T, S]; global attention: softmax over real keys."""
        return masked_softmax(scores, key_mask[:, None, :])

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor,
        key_mask: Tensor,
        *,
        projected_keys: Tensor | None = None,
        position: int = 0,
    ) -> AttentionOutput:
        """See the module docstring. ``projected_keys`` is the cached
        :meth:`precompute_keys` of ``keys`` (computed here when None); ``position`` is the target
        position of the first query (only local-m attention, centred at p_t = t, uses it)."""
        single = query.dim() == 2
        if single:
            query = query.unsqueeze(1)  # [B, Dq] -> [B, 1, Dq]: one code path for both
        if projected_keys is None:
            projected_keys = self.precompute_keys(keys)
        scores = self.score(query, projected_keys)  # [B, T, S]
        weights = self.normalize(scores, query, key_mask, position)  # [B, T, S]
        context = torch.bmm(weights, values)  # [B, T, S] x [B, S, Dv] -> [B, T, Dv]
        if single:
            return AttentionOutput(context.squeeze(1), weights.squeeze(1))
        return AttentionOutput(context, weights)
