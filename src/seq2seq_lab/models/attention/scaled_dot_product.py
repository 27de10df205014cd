"""Scaled dot-product attention (Vaswani et al. 2017, arXiv 1706.03762, eq. 1).

Shapes: B batch, H heads, Q query positions, K key positions, E width of one head (d_k = d_v).

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

With relative position representations (Shaw et al. 2018, arXiv 1803.02155, eqs. 3-4), a_ij^K and
a_ij^V (one E-vector per query/key pair, shared by the heads) enter the keys and the values:

    e_ij = q_i . (k_j + a_ij^K) / sqrt(d_k)        z_i = sum_j alpha_ij (v_j + a_ij^V)

Masks are boolean and follow torch's convention: True where a query may attend to a key.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class RelativeEmbeddings(NamedTuple):
    """Shaw et al.'s a^K and a^V for every (query, key) pair: two [Q, K, E] tensors."""

    keys: Tensor
    values: Tensor


class ScaledDotProductAttention(nn.Module):
    """softmax(Q K^T / sqrt(d_k)) V over pre-split heads, with an explicit and a fused path.

    ``scale=False`` drops the division by sqrt(d_k) (the E5 ablation): the variance of q.k grows
    with d_k, so unscaled scores saturate the softmax.

    The explicit path is written from the formula and returns the weights [B, H, Q, K]; it is
    taken when weights are asked for or relative positions are used. Otherwise the call goes
    through ``torch.nn.functional.scaled_dot_product_attention`` (fused kernels, no [Q, K] weight
    tensor kept for backward beyond what the kernel needs). The two agree to float precision.
    A query whose keys are all masked gets an all-zero weight row (and output) in both paths,
    instead of the NaN that softmax over -inf alone would give.
    """

    def __init__(self, *, scale: bool = True, dropout: float = 0.0) -> None:
        super().__init__()
        self.scale = scale
        self.dropout = dropout

    def forward(
        self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        *,
        mask: Tensor | None = None,
        causal: bool = False,
        need_weights: bool = False,
        relative: RelativeEmbeddings | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """q [B, H, Q, E], k and v [B, H, K, E]; ``mask`` bool, broadcastable to [B, H, Q, K];
        ``causal`` hides key j > i from query i (top-left aligned, so use it with Q == K).

        Returns the output [B, H, Q, E] and the weights [B, H, Q, K] (None on the fused path).
        """
        dropout = self.dropout if self.training else 0.0
        if not need_weights and relative is None:
            out = F.scaled_dot_product_attention(
                q,
                k,
                v,
                attn_mask=mask,
                dropout_p=dropout,
                is_causal=causal,
                scale=None if self.scale else 1.0,
            )
            return out, None

        # e_ij = q_i . k_j (+ q_i . a_ij^K): one matrix product scores every query against every key
        scores = q @ k.transpose(-2, -1)  # [B, H, Q, K]
        if relative is not None:
            # q [B,H,Q,E] . a^K [Q,K,E] for each (i, j): batched over i as [Q, B*H, E] @ [Q, E, K]
            b, h, n_q, e = q.shape
            rel = q.permute(2, 0, 1, 3).reshape(n_q, b * h, e) @ relative.keys.transpose(-2, -1)
            scores = scores + rel.reshape(n_q, b, h, -1).permute(1, 2, 0, 3)  # back to [B,H,Q,K]
        if self.scale:
            scores = scores / math.sqrt(q.size(-1))
        if causal:
            visible = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device).tril()
            mask = visible if mask is None else mask & visible
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        if mask is not None:
            # a fully masked row is NaN after the softmax (0/0); zeroing every masked entry makes it
            # all-zero, as the fused kernel does, and leaves the other rows unchanged
            weights = weights.masked_fill(~mask, 0.0)
        attended = F.dropout(weights, p=dropout) if dropout > 0.0 else weights
        out = attended @ v  # [B, H, Q, E]
        if relative is not None:
            # sum_j alpha_ij a_ij^V, batched over i as [Q, B*H, K] @ [Q, K, E]
            b, h, n_q, n_k = attended.shape
            rel = attended.permute(2, 0, 1, 3).reshape(n_q, b * h, n_k) @ relative.values
            out = out + rel.reshape(n_q, b, h, -1).permute(1, 2, 0, 3)  # back to [B,H,Q,E]
        return out, weights
