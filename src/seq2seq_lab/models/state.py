"""Batch-indexed state: the encoder memory and decoder state every decoder carries between steps.

Beam search keeps B*K rows (K hypotheses for each of B sentences) and, at every step, picks which
row each new hypothesis continues from. Every tensor in the state must follow that choice, so each
state is a dataclass whose tensor fields are re-indexed together by :meth:`BatchState.select`.

Field metadata (``dataclasses.field(metadata=...)``):

- ``batch_dim``: the dimension that indexes the batch (default 0; an LSTM's ``(layers, B, H)``
  hidden state uses 1).
- ``static``: the tensor is a function of the source sentence alone (encoder memory, keys
  projected once per sentence, the padding mask). Rows of one sentence's beam are identical, so
  :meth:`reorder_beams`, which only permutes rows *within* a sentence's group, leaves it alone;
  :meth:`select` (used to expand a batch to B*K rows) still indexes it.

Fields may hold tensors, ``None``, nested ``BatchState`` objects, or lists/tuples of those.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import torch
from torch import Tensor

S = TypeVar("S", bound="BatchState")


def _index(value: Any, index: Tensor, dim: int, skip_static: bool) -> Any:
    if value is None:
        return None
    if isinstance(value, Tensor):
        return value.index_select(dim, index)
    if isinstance(value, BatchState):
        return value._indexed(index, skip_static)
    if isinstance(value, list | tuple):
        return type(value)(_index(v, index, dim, skip_static) for v in value)
    raise TypeError(f"cannot batch-index a state field of type {type(value).__name__}")


@dataclasses.dataclass
class BatchState:
    """Base class of encoder memories and decoder states (see the module docstring)."""

    def _indexed(self: S, index: Tensor, skip_static: bool) -> S:
        changes = {}
        for f in dataclasses.fields(self):
            if skip_static and f.metadata.get("static", False):
                continue
            value = getattr(self, f.name)
            if isinstance(value, int | float | bool | str):
                continue
            changes[f.name] = _index(value, index, f.metadata.get("batch_dim", 0), skip_static)
        return dataclasses.replace(self, **changes)

    def select(self: S, index: Tensor) -> S:
        """Rows ``index`` of every tensor, static ones included (expanding B to B*K rows)."""
        return self._indexed(index, skip_static=False)

    def reorder_beams(self: S, index: Tensor) -> S:
        """Rows ``index`` of the per-step tensors; ``index`` must stay inside each sentence's
        group of K rows, so static (per-sentence) tensors are left as they are."""
        return self._indexed(index, skip_static=True)


def expand_index(batch_size: int, beam_size: int, device: torch.device | None = None) -> Tensor:
    """Index that repeats each of ``batch_size`` rows ``beam_size`` times: [0,0,..,1,1,..]."""
    return torch.arange(batch_size, device=device).repeat_interleave(beam_size)
