"""Luong's score functions (Luong et al. 2015, arXiv 1508.04025, section 3.1, eq. 8 and 9).

Shapes: B batch, T queries, S source positions, Dq query width, Dk key width, P positions.

The query is the *current* decoder state s_t (Luong computes it before attending). Luong's
"concat" score is :class:`~seq2seq_lab.models.attention.additive.ConcatAdditiveAttention`.
Luong's scores are not scaled. ``scaled=True`` divides dot and general by sqrt(Dq), as the
Transformer's scaled dot product does, a named departure from the paper: unscaled, the general
score's softmax saturated onto the source's end within 200 updates on Multi30k (E1's Luong seeds
1-2, Adam at lr 1e-3 and 5e-4), scaled it did not in the same probes
(experiments/e1_attention/README.md); 1/sqrt(Dq) keeps scores of unit-variance vectors near
unit variance (architectures.md, scaled dot product).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from seq2seq_lab.models.attention.base import AttentionScorer


class DotAttention(AttentionScorer):
    """Dot score: e_{t,i} = s_t^T h_i (``scaled``: s_t^T h_i / sqrt(Dq)). No parameters; s_t
    and h_i must have the same size.

    With the keys/values given separately this is the general query/key/value attention of
    architectures.md section 4: score(q, k_n) = q^T k_n, result = sum_n alpha_n v_n.
    """

    def __init__(self, *, query_size: int, key_size: int, scaled: bool = False) -> None:
        super().__init__()
        if query_size != key_size:
            raise ValueError(
                f"dot attention needs query size == key size, got {query_size} and {key_size}"
            )
        self.factor = 1 / math.sqrt(query_size) if scaled else 1.0

    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        scores = torch.bmm(query, projected_keys.transpose(1, 2))  # [B,T,D] x [B,D,S] -> [B,T,S]
        return scores * self.factor if self.factor != 1.0 else scores


class GeneralAttention(AttentionScorer):
    """General (bilinear) score: e_{t,i} = s_t^T W_m h_i (``scaled``: s_t^T W_m h_i / sqrt(Dq)).

    W_m h_i depends on the source only: :meth:`precompute_keys` applies W_m once per sentence,
    then each step is a dot product with the projected keys.

    Initial W_m ~ U(-b, b) with b = ``init_scale`` / sqrt(Dk): ``init_scale`` 1 is PyTorch's
    nn.Linear default; Luong et al. draw every parameter from U(-0.1, 0.1) (section 4.1).
    """

    def __init__(
        self, *, query_size: int, key_size: int, scaled: bool = False, init_scale: float = 1.0
    ) -> None:
        super().__init__()
        self.W_m = nn.Linear(key_size, query_size, bias=False)
        if init_scale != 1.0:
            # scaling nn.Linear's draw, not redrawing: a seed's other parameters stay the same
            with torch.no_grad():
                self.W_m.weight.mul_(init_scale)
        self.factor = 1 / math.sqrt(query_size) if scaled else 1.0

    def precompute_keys(self, keys: Tensor) -> Tensor:
        return self.W_m(keys)  # [B, S, Dk] -> [B, S, Dq]

    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        scores = torch.bmm(query, projected_keys.transpose(1, 2))  # [B,T,Dq]x[B,Dq,S] -> [B,T,S]
        return scores * self.factor if self.factor != 1.0 else scores


class LocationAttention(AttentionScorer):
    """Location-based score: alpha_t = softmax(W_a s_t); the keys are not looked at.

    W_a maps the state to one score per source *position*, so it has a fixed number of rows,
    ``max_positions``. Positions past it reuse the last row, so sentences longer than any seen
    in training (the E1 length study) still decode instead of failing.
    """

    def __init__(self, *, query_size: int, max_positions: int) -> None:
        super().__init__()
        if max_positions < 1:
            raise ValueError(f"max_positions must be >= 1, got {max_positions}")
        self.max_positions = max_positions
        self.W_a = nn.Linear(query_size, max_positions)

    def score(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        S = projected_keys.size(1)
        scores = self.W_a(query)  # [B, T, P]
        positions = torch.arange(S, device=query.device).clamp(max=self.max_positions - 1)
        return scores.index_select(-1, positions)  # [B, T, P] -> [B, T, S]
