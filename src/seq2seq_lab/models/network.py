"""The contract every model family implements; decoding, training and analysis use only this.

Shapes: B batch, S source length, T target length, V target vocabulary, D model width.

A family is a plain ``nn.Module`` (no Lightning) that implements fairseq's incremental-decoder
contract in four methods:

- ``encode(src, src_mask) -> memory``: run the encoder once per batch.
- ``init_state(memory, max_length) -> state``: the decoder state before the first target
  token; ``max_length`` is the most steps the caller will take (greedy and beam search pass
  their output length limit, None when unknown), so that a family can size buffers once (the
  Transformer's key/value caches). More steps than that must still work.
- ``step(prev_tokens, state) -> StepOutput``: one decoder step for every row of the batch.
- ``teacher_forced(src, src_mask, tgt_in) -> ForwardOutput``: the whole shifted gold target at
  once (training). Families whose decoder can run over all positions in one call (Transformer,
  Luong without input feeding) override it; the default loops over :meth:`step`.

``memory`` and ``state`` are :class:`~seq2seq_lab.models.state.BatchState` dataclasses, so
greedy and beam search never need to know which family they drive.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, NamedTuple

import torch
from torch import Tensor, nn

from seq2seq_lab.data.specials import BOS_ID, EOS_ID, PAD_ID
from seq2seq_lab.models.state import BatchState


class StepOutput(NamedTuple):
    logits: Tensor  # [B, V] unnormalised scores of the next token
    state: BatchState  # the decoder state after consuming prev_tokens
    attention: Tensor | None  # [B, S] source attention of this step (None without attention)


class ForwardOutput(NamedTuple):
    logits: Tensor  # [B, T, V]
    attention: Tensor | None  # [B, T, S] source attention per target position, or None


class Seq2SeqNetwork(nn.Module, ABC):
    """Base class of the model families (see the module docstring for the contract).

    Subclasses set ``family`` (the name used by ``model=...`` and checked when a checkpoint is
    loaded) and take the vocabulary sizes as keyword arguments: sizes flow from the data.
    ``teacher_forcing_ratio`` < 1 makes training steps feed the model's own predictions
    part of the time (1.0 is pure teacher forcing). Constructors have no defaults: every
    option's one home is its family's file in ``conf/model/``.
    """

    family: ClassVar[str]

    def __init__(
        self, *, src_vocab_size: int, tgt_vocab_size: int, teacher_forcing_ratio: float
    ) -> None:
        super().__init__()
        if not 0.0 <= teacher_forcing_ratio <= 1.0:
            raise ValueError(
                f"model.teacher_forcing_ratio must be in [0, 1], got {teacher_forcing_ratio}"
            )
        self.src_vocab_size = src_vocab_size
        self.tgt_vocab_size = tgt_vocab_size
        self.teacher_forcing_ratio = teacher_forcing_ratio
        self.pad_id, self.bos_id, self.eos_id = PAD_ID, BOS_ID, EOS_ID

    @abstractmethod
    def encode(self, src: Tensor, src_mask: Tensor) -> BatchState:
        """src [B, S] token ids, src_mask [B, S] True on real tokens -> encoder memory."""

    @abstractmethod
    def init_state(self, memory: BatchState, max_length: int | None = None) -> BatchState:
        """Decoder state before the first target token (BOS is fed by the first step), for
        at most ``max_length`` steps when the caller knows it (a sizing hint, not a limit)."""

    @abstractmethod
    def step(self, prev_tokens: Tensor, state: BatchState) -> StepOutput:
        """prev_tokens [B] (BOS at the first step) -> logits of the next token, new state."""

    def teacher_forced(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> ForwardOutput:
        """Logits for every position of the gold-prefixed target ``tgt_in`` [B, T]."""
        return self.stepwise(src, src_mask, tgt_in, teacher_forcing_ratio=1.0)

    def forward(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> ForwardOutput:
        """Training/scoring forward pass; samples its own inputs only while training."""
        ratio = self.teacher_forcing_ratio if self.training else 1.0
        if ratio >= 1.0:
            return self.teacher_forced(src, src_mask, tgt_in)
        return self.stepwise(src, src_mask, tgt_in, ratio)

    def stepwise(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor, teacher_forcing_ratio: float
    ) -> ForwardOutput:
        """Decode step by step; with probability 1 - ratio a step is fed the model's own
        previous argmax instead of the gold token (scheduled sampling, Bengio et al. 2015)."""
        state = self.init_state(self.encode(src, src_mask), max_length=tgt_in.size(1))
        logits, attention = [], []
        prev = tgt_in[:, 0]
        for t in range(tgt_in.size(1)):
            out = self.step(prev, state)
            state = out.state
            logits.append(out.logits)
            attention.append(out.attention)
            if t + 1 < tgt_in.size(1):
                prev = tgt_in[:, t + 1]
                if teacher_forcing_ratio < 1.0:
                    own = out.logits.argmax(-1)
                    use_own = torch.rand(prev.shape, device=prev.device) >= teacher_forcing_ratio
                    prev = torch.where(use_own, own, prev)
        stacked_attention = None if attention[0] is None else torch.stack(attention, dim=1)
        return ForwardOutput(torch.stack(logits, dim=1), stacked_attention)
