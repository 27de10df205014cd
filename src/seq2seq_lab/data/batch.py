"""The one batch type every model is trained and evaluated on."""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import Tensor


@dataclass
class Batch:
    """A padded batch of sentence pairs.

    Shapes: B batch, S source length (with the final EOS), T target length + 1.
    """

    src: Tensor  # [B, S] source ids, x_1..x_n EOS, right-padded with PAD_ID
    src_mask: Tensor  # [B, S] bool, True on real tokens (EOS included)
    tgt_in: Tensor  # [B, T] BOS y_1..y_m, right-padded (decoder input, teacher forcing)
    tgt_out: Tensor  # [B, T] y_1..y_m EOS, right-padded (what the decoder must predict)
    index: Tensor  # [B] each pair's line number in its split, to restore corpus order

    @property
    def num_tgt_tokens(self) -> int:
        """Real target tokens (EOS included, padding excluded): the unit of throughput."""
        from seq2seq_lab.data.specials import PAD_ID

        return int((self.tgt_out != PAD_ID).sum())

    def to(self, device: str | torch.device) -> Batch:
        return Batch(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def __len__(self) -> int:
        return self.src.size(0)
