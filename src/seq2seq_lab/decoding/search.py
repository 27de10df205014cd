"""The decode entry point: greedy search for beam size 1, beam search otherwise.

It takes source tensors and :class:`DecodingSettings`, so decoding imports nothing from the
data pipeline or Lightning; callers pass ``batch.src, batch.src_mask``.
"""

from __future__ import annotations

from torch import Tensor

from seq2seq_lab.decoding.beam import beam_search
from seq2seq_lab.decoding.greedy import greedy_search
from seq2seq_lab.decoding.hypotheses import Hypotheses
from seq2seq_lab.decoding.settings import DecodingSettings
from seq2seq_lab.models.network import Seq2SeqNetwork


def decode(
    network: Seq2SeqNetwork,
    src: Tensor,
    src_mask: Tensor,
    settings: DecodingSettings,
    *,
    return_attention: bool = False,
) -> Hypotheses:
    """Hypotheses for src [B, S] (src_mask [B, S] True on real tokens).

    Beam size 1 runs greedy search, which picks the same tokens as a one-hypothesis beam and
    is cheaper; its scores are then plain log-probabilities (length_penalty ranks nothing when
    there is a single hypothesis).
    """
    if settings.beam_size == 1:
        return greedy_search(
            network,
            src,
            src_mask,
            max_len_a=settings.max_len_a,
            max_len_b=settings.max_len_b,
            min_len=settings.min_len,
            return_attention=return_attention,
        )
    return beam_search(
        network,
        src,
        src_mask,
        beam_size=settings.beam_size,
        length_penalty=settings.length_penalty,
        max_len_a=settings.max_len_a,
        max_len_b=settings.max_len_b,
        min_len=settings.min_len,
        return_attention=return_attention,
    )
