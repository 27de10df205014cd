"""Additive attention (Bahdanau et al. 2015, arXiv 1409.0473, section 3.1 and appendix A.1.2).

Shapes: B batch, T queries, S source positions, Dq query width, Dk key width, A attention width.

Three forms of the alignment model a(s, h_i); all are scorers of
:class:`~seq2seq_lab.models.attention.base.AttentionScorer` (softmax over real keys, then the
weighted sum of the values).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from seq2seq_lab.models.attention.base import AttentionScorer


class ConcatAdditiveAttention(AttentionScorer):
    """Additive attention, concat form: e_{t,i} = v^T tanh(W [h_i ; s_t]).

    One matrix W over the concatenated key and query. Mathematically W [h; s] = W_h h + W_s s,
    so this is the separate form with a single bias; computed as written, though, it re-applies
    W to every key at every step (nothing is cached), which is what the E3 comparison contrasts
    with :class:`SeparateAdditiveAttention`. Luong's "concat" score v^T tanh(W [s_t ; h_i]) is
    the same function up to the order of W's columns, so ``model=luong`` uses this class too.
    """

    def __init__(self, *, query_size: int, key_size: int, hidden_size: int) -> None:
        super().__init__()
        self.W = nn.Linear(key_size + query_size, hidden_size)
        self.v = nn.Linear(hidden_size, 1, bias=False)

    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        B, T, _ = query.shape
        S = projected_keys.size(1)
        # every (query, key) pair side by side: [B, T, S, Dk + Dq]
        pairs = torch.cat(
            [projected_keys[:, None].expand(B, T, S, -1), query[:, :, None].expand(B, T, S, -1)],
            dim=-1,
        )
        return self.v(torch.tanh(self.W(pairs))).squeeze(-1)  # [B, T, S, 1] -> [B, T, S]


class SeparateAdditiveAttention(AttentionScorer):
    """Additive attention, separate form: e_{t,i} = v^T tanh(W_1 h_i + W_2 s_t).

    W_1 h_i does not depend on t: :meth:`precompute_keys` computes it once per sentence and the
    decoder state caches it (JoeyNMT re-projects the keys at every step; we do not).
    """

    def __init__(self, *, query_size: int, key_size: int, hidden_size: int) -> None:
        super().__init__()
        self.W1 = nn.Linear(key_size, hidden_size, bias=False)
        self.W2 = nn.Linear(query_size, hidden_size)  # the one bias of the form
        self.v = nn.Linear(hidden_size, 1, bias=False)

    def precompute_keys(self, keys: Tensor) -> Tensor:
        return self.W1(keys)  # [B, S, Dk] -> [B, S, A]

    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        # [B, 1, S, A] + [B, T, 1, A] -> [B, T, S, A]
        hidden = torch.tanh(projected_keys[:, None] + self.W2(query)[:, :, None])
        return self.v(hidden).squeeze(-1)  # [B, T, S]


class FeedForwardAttention(AttentionScorer):
    """Single-vector feed-forward scorer: e_{t,i} = tanh(w . [s_t ; h_i]).

    One learned vector w = [w_s ; w_h], so e_{t,i} = tanh(w_s . s_t + w_h . h_i); the key term
    w_h . h_i is computed once per sentence by :meth:`precompute_keys`. The cheapest additive
    variant (no hidden layer); tanh bounds the scores to [-1, 1], so its weights stay soft.
    """

    def __init__(self, *, query_size: int, key_size: int) -> None:
        super().__init__()
        self.w_query = nn.Linear(query_size, 1, bias=False)  # w_s
        self.w_key = nn.Linear(key_size, 1, bias=False)  # w_h

    def precompute_keys(self, keys: Tensor) -> Tensor:
        return self.w_key(keys).squeeze(-1)  # [B, S, Dk] -> [B, S]

    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        # [B, T, 1] + [B, 1, S] -> [B, T, S]
        return torch.tanh(self.w_query(query) + projected_keys[:, None, :])
