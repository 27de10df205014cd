"""What a decoder returns, and the length limits every decoder applies."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class Hypotheses:
    """One output per source sentence, in batch order.

    ``tokens[b]`` are target ids without BOS and EOS; ``scores[b]`` the total log-probability
    (greedy) or the length-normalised score that ranked it (beam); ``attention[b]`` the source
    attention of each emitted step, ``[len(tokens[b]) + 1 (EOS, if emitted), S_b]``, or None
    when the network has no attention or it was not requested. ``n_best[b]`` (beam search):
    every hypothesis the search finalised for sentence b as (score, tokens), best first, so
    ``n_best[b][0] == (scores[b], tokens[b])``; None from greedy search, which keeps one.
    """

    tokens: list[list[int]]
    scores: list[float]
    attention: list[Tensor] | None = None
    n_best: list[list[tuple[float, list[int]]]] | None = None


def max_output_lengths(src_mask: Tensor, max_len_a: float, max_len_b: int) -> Tensor:
    """Per-sentence output limit a*|x| + b, counting EOS (fairseq's max_len_a/max_len_b)."""
    src_len = src_mask.sum(dim=1).to(torch.float32)
    return (max_len_a * src_len + max_len_b).floor().clamp(min=1).to(torch.long)


def gnmt_length_penalty(length: Tensor | int, alpha: float) -> Tensor | float:
    """Wu et al. 2016 (GNMT): lp(Y) = ((5 + |Y|) / 6) ** alpha; scores are divided by it."""
    return ((5.0 + length) / 6.0) ** alpha
