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
- ``filled``: a :class:`Filled`. The tensor is a preallocated buffer written in place (an
  incremental decoder's key/value cache, sized for the output length limit): only its first
  ``n`` positions along ``Filled.dim`` hold data, ``n`` being the state's int field named by
  ``Filled.length``; the rest is capacity not yet written. :meth:`select` copies those ``n``
  positions into a new buffer of the same capacity. :meth:`reorder_beams` moves them *in
  place*, and only in the rows whose source row is another one: the state it is called on is
  consumed (its buffers now hold the reordered rows), as is the state a step writes into.

Fields may hold tensors, ``None``, nested ``BatchState`` objects, or lists/tuples of those.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import torch
from torch import Tensor

S = TypeVar("S", bound="BatchState")


@dataclasses.dataclass(frozen=True)
class Filled:
    """``filled`` field metadata: the buffer holds data at positions 0 .. n-1 along ``dim``,
    ``n`` the value of the state's int field named ``length`` (see the module docstring)."""

    dim: int
    length: str


class _Rows:
    """The index of one ``select``/``reorder_beams`` call; the rows it moves to another row
    are found once per call (on first use) and shared by every buffer of the state."""

    def __init__(self, index: Tensor) -> None:
        self.index = index
        self._moved: tuple[Tensor, Tensor] | None = None

    def moved(self) -> tuple[Tensor, Tensor]:
        """(targets, sources): the rows i with index[i] != i, and index[i] for those rows."""
        if self._moved is None:
            rows = torch.arange(self.index.numel(), device=self.index.device)
            targets = (self.index != rows).nonzero().squeeze(1)
            self._moved = (targets, self.index.index_select(0, targets))
        return self._moved


def _index(value: Any, rows: _Rows, dim: int, reorder: bool) -> Any:
    if value is None:
        return None
    if isinstance(value, Tensor):
        return value.index_select(dim, rows.index)
    if isinstance(value, BatchState):
        return value._indexed(rows, reorder)
    if isinstance(value, list | tuple):
        return type(value)(_index(v, rows, dim, reorder) for v in value)
    raise TypeError(f"cannot batch-index a state field of type {type(value).__name__}")


def _index_filled(
    buffer: Tensor, rows: _Rows, dim: int, filled: int, along: int, reorder: bool
) -> Tensor:
    """Rows ``rows`` (along ``dim``) of the first ``filled`` positions (along ``along``) of
    ``buffer``: in place under ``reorder``, else in a new buffer of the same capacity."""
    prefix = buffer.narrow(along, 0, filled)
    if reorder:
        targets, sources = rows.moved()
        if targets.numel() > 0:
            # the sources are gathered before any target is written: swaps are safe
            prefix.index_copy_(dim, targets, prefix.index_select(dim, sources))
        return buffer
    shape = list(buffer.shape)
    shape[dim] = rows.index.numel()
    selected = buffer.new_empty(shape)  # same capacity; positions >= filled stay unwritten
    selected.narrow(along, 0, filled).copy_(prefix.index_select(dim, rows.index))
    return selected


@dataclasses.dataclass
class BatchState:
    """Base class of encoder memories and decoder states (see the module docstring)."""

    def _indexed(self: S, rows: _Rows, reorder: bool) -> S:
        """``reorder``: reorder_beams (static fields stay, buffers are reordered in place)."""
        changes = {}
        for f in dataclasses.fields(self):
            if reorder and f.metadata.get("static", False):
                continue
            value = getattr(self, f.name)
            if isinstance(value, int | float | bool | str):
                continue
            dim = f.metadata.get("batch_dim", 0)
            filled: Filled | None = f.metadata.get("filled")
            if filled is not None and value is not None:
                n = getattr(self, filled.length)
                changes[f.name] = _index_filled(value, rows, dim, n, filled.dim, reorder)
            else:
                changes[f.name] = _index(value, rows, dim, reorder)
        return dataclasses.replace(self, **changes)

    def select(self: S, index: Tensor) -> S:
        """Rows ``index`` of every tensor, static ones included (expanding B to B*K rows), in
        new tensors: the state it is called on stays as it was."""
        return self._indexed(_Rows(index), reorder=False)

    def reorder_beams(self: S, index: Tensor) -> S:
        """Rows ``index`` of the per-step tensors; ``index`` must stay inside each sentence's
        group of K rows, so static (per-sentence) tensors are left as they are. Buffers
        (``filled``) are reordered in place, so the state it is called on is consumed."""
        return self._indexed(_Rows(index), reorder=True)


def expand_index(batch_size: int, beam_size: int, device: torch.device | None = None) -> Tensor:
    """Index that repeats each of ``batch_size`` rows ``beam_size`` times: [0,0,..,1,1,..]."""
    return torch.arange(batch_size, device=device).repeat_interleave(beam_size)
