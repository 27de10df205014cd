"""The Transformer's encoder memory and its two decoder states (with and without a cache).

Shapes: B batch (B*K rows under beam search), S source length, t target positions consumed so
far, D model width, H heads, E = D / H.

Fields marked static depend on the source sentence alone: ``reorder_beams`` leaves them as they
are and only ``select`` (expanding B sentences to B*K rows) indexes them.
"""

from __future__ import annotations

import dataclasses

from torch import Tensor

from seq2seq_lab.models.attention.multi_head import KeyValue, KeyValueCache
from seq2seq_lab.models.state import BatchState

STATIC = {"static": True}


@dataclasses.dataclass
class TransformerMemory(BatchState):
    """The encoder output."""

    states: Tensor = dataclasses.field(metadata=STATIC)  # [B, S, D]
    src_mask: Tensor = dataclasses.field(metadata=STATIC)  # [B, S] True on real tokens


@dataclasses.dataclass
class CachedDecoderState(BatchState):
    """Incremental decoding (``model.kv_cache=true``): each step feeds one token.

    ``cross`` holds every decoder layer's cross-attention keys/values, projected once per
    sentence; ``cache`` every layer's self-attention keys/values of the t positions so far, in
    buffers preallocated for the output length limit: each step writes one position in place,
    and beam search moves the filled positions of the rows whose beam changed, in place.
    """

    src_mask: Tensor = dataclasses.field(metadata=STATIC)  # [B, S]
    cross: list[KeyValue] = dataclasses.field(metadata=STATIC)  # per layer, [B, H, S, E] each
    cache: list[KeyValueCache]  # per layer, [B, capacity, H, E] buffers, t positions filled

    @property
    def steps(self) -> int:
        """Target positions consumed so far (the position of the next token)."""
        return self.cache[0].length


@dataclasses.dataclass
class PrefixDecoderState(BatchState):
    """Decoding without a cache (``model.kv_cache=false``): each step reruns the whole decoder,
    cross-attention projections included, over the tokens fed so far. The reference that the
    cached path is tested and benchmarked against."""

    memory: TransformerMemory = dataclasses.field(metadata=STATIC)
    prefix: Tensor  # [B, t] tokens fed so far (BOS first)
