"""Multi-head attention (Vaswani et al. 2017, arXiv 1706.03762, section 3.2.2).

Shapes: B batch, Q query positions, K key positions, D model width, H heads, E = D / H.

    head_i    = Attention(Q W_i^Q, K W_i^K, V W_i^V)
    MultiHead = Concat(head_1, ..., head_h) W^O

with W_i^Q, W_i^K, W_i^V in R^{D x E} and W^O in R^{H E x D}. The H per-head projections are
stored side by side as one D x D matrix each (column block i is W_i^Q), so one product projects
every head at once.

Keys and values are projected separately from the attention itself (:meth:`project_kv`) so that an
incremental decoder can project the encoder output once per sentence (cross-attention) and write
one position per step into a preallocated cache (self-attention, :class:`KeyValueCache`).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import torch
from torch import Tensor, nn

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.attention.scaled_dot_product import (
    RelativeEmbeddings,
    ScaledDotProductAttention,
)
from seq2seq_lab.models.state import BatchState, Filled


@dataclasses.dataclass(frozen=True)
class AttentionOptions:
    """The ``model.attention`` config node of the Transformer.

    scale: divide the scores by sqrt(d_k) (False is the unscaled E5 ablation).
    dropout: dropout on the attention weights while training (0 follows the paper: residual
        and embedding dropout only, which the blocks apply separately).
    The values live in conf/model/transformer.yaml.
    """

    scale: bool
    dropout: float


@dataclasses.dataclass
class KeyValue(BatchState):
    """Projected keys and values of one attention layer, heads split: two [B, H, K, E]."""

    k: Tensor
    v: Tensor

    @property
    def length(self) -> int:
        return self.k.size(2)


# the buffers of a KeyValueCache hold data at positions 0 .. length-1 of dim 1 (see state.py)
_FILLED = {"filled": Filled(dim=2, length="length")}


@dataclasses.dataclass
class KeyValueCache(BatchState):
    """Self-attention keys/values of an incremental decoder, written in place.

    Two [B, H, capacity, E] buffers (the heads-split layout attention takes) of which positions
    0 .. length-1 hold data. They are allocated by the first :meth:`append` (which knows B,
    dtype and device) for ``capacity`` positions, the most the caller said it will feed; each
    append writes its positions in place, and attention reads the filled prefix (:meth:`filled`:
    views, no copy). Beam search's ``reorder_beams`` moves, in place, only the filled prefix of
    the rows whose beam changed (``filled`` metadata, see ``models/state.py``). Appending past
    the capacity reallocates at twice the size, so an unknown (0) or short capacity costs a few
    copies of the prefix instead of an error.

    Appends and reorders write into buffers shared with the state they start from: that state
    is consumed. Under autograd (scheduled sampling trains through decoding steps) appends are
    out of place instead, since backward needs the keys/values earlier steps attended over.
    """

    k: Tensor | None = dataclasses.field(metadata=_FILLED)  # [B, H, capacity, E]
    v: Tensor | None = dataclasses.field(metadata=_FILLED)
    length: int  # positions written
    capacity: int  # positions the buffers hold (or will, once allocated)

    @classmethod
    def reserve(cls, capacity: int) -> KeyValueCache:
        """An empty cache for ``capacity`` positions, allocated by the first append."""
        return cls(k=None, v=None, length=0, capacity=capacity)

    def append(self, new: KeyValue) -> KeyValueCache:
        """The cache with ``new``'s positions [B, H, N, E] written after the filled ones."""
        end = self.length + new.length
        new_k, new_v = new.k, new.v
        if torch.is_grad_enabled() and (new_k.requires_grad or new_v.requires_grad):
            # out of place: backward needs the keys/values that earlier steps attended over
            if self.k is not None and self.v is not None:
                new_k = torch.cat([self.k[:, :, : self.length], new_k], dim=2)
                new_v = torch.cat([self.v[:, :, : self.length], new_v], dim=2)
            return KeyValueCache(k=new_k, v=new_v, length=end, capacity=end)
        cache = self if end <= self.capacity and self.k is not None else self._grown(new_k, end)
        assert cache.k is not None and cache.v is not None
        cache.k.narrow(2, self.length, new.length).copy_(new_k)  # in place: length .. end-1
        cache.v.narrow(2, self.length, new.length).copy_(new_v)
        return KeyValueCache(k=cache.k, v=cache.v, length=end, capacity=cache.capacity)

    def _grown(self, new_k: Tensor, end: int) -> KeyValueCache:
        """Buffers for at least ``end`` positions (the capacity reserved, or twice the old one)
        holding a copy of the filled prefix; ``new_k`` [B, H, N, E] gives B, H, E, dtype and
        device."""
        capacity = max(end, self.capacity if self.k is None else 2 * self.capacity)
        b, h, _, e = new_k.shape
        k, v = new_k.new_empty(b, h, capacity, e), new_k.new_empty(b, h, capacity, e)
        if self.k is not None and self.v is not None:
            k[:, :, : self.length] = self.k[:, :, : self.length]
            v[:, :, : self.length] = self.v[:, :, : self.length]
        return KeyValueCache(k=k, v=v, length=self.length, capacity=capacity)

    def filled(self) -> KeyValue:
        """Views of the positions written so far, [B, H, length, E] each."""
        assert self.k is not None and self.v is not None, "nothing appended yet"
        return KeyValue(k=self.k.narrow(2, 0, self.length), v=self.v.narrow(2, 0, self.length))


class AttentionOutput(NamedTuple):
    output: Tensor  # [B, Q, D]
    weights: Tensor | None  # [B, H, Q, K] per head, or None when not asked for

    @property
    def averaged_weights(self) -> Tensor | None:
        """Weights averaged over the heads, [B, Q, K] (rows still sum to 1)."""
        return None if self.weights is None else self.weights.mean(dim=1)


class MultiHeadAttention(nn.Module):
    """Concat(head_1..head_h) W^O with head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V.

    d_k = d_v = d_model / heads; ``scale`` and ``dropout`` are those of the
    :class:`ScaledDotProductAttention` inside. Call it as ``mha(query, source)`` for ordinary use,
    or ``mha.attend(query, kv)`` with keys/values projected earlier by :meth:`project_kv`.
    """

    def __init__(
        self, *, d_model: int, heads: int, scale: bool = True, dropout: float = 0.0
    ) -> None:
        super().__init__()
        if heads < 1 or d_model % heads != 0:
            raise ConfigError(
                f"model.heads={heads} must divide model.d_model={d_model} "
                "(each head gets d_model / heads dimensions)"
            )
        self.d_model, self.heads, self.head_dim = d_model, heads, d_model // heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attention = ScaledDotProductAttention(scale=scale, dropout=dropout)

    def _split_heads(self, x: Tensor) -> Tensor:
        b, n, _ = x.shape
        # [B, N, D] -> [B, N, H, E] -> [B, H, N, E]: one attention per head
        return x.view(b, n, self.heads, self.head_dim).transpose(1, 2)

    def project_kv(self, source: Tensor) -> KeyValue:
        """source [B, K, D] -> keys and values, heads split, [B, H, K, E] each."""
        return KeyValue(
            k=self._split_heads(self.w_k(source)), v=self._split_heads(self.w_v(source))
        )

    def attend(
        self,
        query: Tensor,
        kv: KeyValue,
        *,
        key_mask: Tensor | None = None,
        causal: bool = False,
        need_weights: bool = False,
        relative: RelativeEmbeddings | None = None,
    ) -> AttentionOutput:
        """query [B, Q, D] against projected ``kv``; ``key_mask`` [B, K] True on real keys;
        ``causal`` hides later keys (requires Q == K); ``relative`` [Q, K, E] Shaw terms."""
        q = self._split_heads(self.w_q(query))
        # [B, K] -> [B, 1, 1, K]: the same keys are visible to every head and every query
        mask = None if key_mask is None else key_mask[:, None, None, :]
        heads, weights = self.attention(
            q, kv.k, kv.v, mask=mask, causal=causal, need_weights=need_weights, relative=relative
        )
        b, _, n_q, _ = heads.shape
        # [B, H, Q, E] -> [B, Q, H, E] -> [B, Q, D]: Concat(head_1..head_h)
        merged = heads.transpose(1, 2).reshape(b, n_q, self.d_model)
        return AttentionOutput(self.w_o(merged), weights)

    def forward(
        self,
        query: Tensor,
        source: Tensor,
        *,
        key_mask: Tensor | None = None,
        causal: bool = False,
        need_weights: bool = False,
        relative: RelativeEmbeddings | None = None,
    ) -> AttentionOutput:
        """query [B, Q, D] attends over source [B, K, D] (the same tensor for self-attention)."""
        return self.attend(
            query,
            self.project_kv(source),
            key_mask=key_mask,
            causal=causal,
            need_weights=need_weights,
            relative=relative,
        )
