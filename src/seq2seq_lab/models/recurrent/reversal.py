"""Sutskever et al.'s source reversal (arXiv 1409.3215, section 3.3), padding-aware.

Shapes: B batch, S source length.

[A, B, C, EOS, PAD] becomes [C, B, A, EOS, PAD]: only the real words of each row are reversed.
EOS stays last, so the encoder still ends on the end-of-sentence marker (its final state is
read right after it, as without reversal) and the first source word is the last word read,
next to the decoder's first step, which is the point of the trick. Padding stays at the end so
packed sequences keep working.
"""

from __future__ import annotations

import torch
from torch import Tensor


def reversal_index(src_mask: Tensor) -> Tensor:
    """[B, S] gather index that reverses positions 0..n-2 of each row (n = real length) and
    keeps the last real token (EOS) and the padding in place. It is its own inverse."""
    S = src_mask.size(1)
    lengths = src_mask.sum(dim=1, keepdim=True)  # [B, 1], EOS included
    positions = torch.arange(S, device=src_mask.device)[None, :]  # [1, S]
    words = positions < lengths - 1  # [B, S] the real tokens before EOS
    mirrored = lengths - 2 - positions  # position i <- n-2-i
    return torch.where(words, mirrored, positions.expand_as(mirrored))


def reverse_source(src: Tensor, src_mask: Tensor) -> Tensor:
    """src [B, S] with its words reversed row by row (EOS and padding kept in place)."""
    return src.gather(1, reversal_index(src_mask))
