"""TEMPORARY stand-in until the decoding branch merges."""

from __future__ import annotations

from seq2seq_lab.decoding.beam import beam_search
from seq2seq_lab.decoding.greedy import greedy_search


def decode(network, src, src_mask, settings, *, return_attention=False):
    s = settings
    if s.beam_size == 1:
        return greedy_search(
            network,
            src,
            src_mask,
            max_len_a=s.max_len_a,
            max_len_b=s.max_len_b,
            min_len=s.min_len,
            return_attention=return_attention,
        )
    return beam_search(
        network,
        src,
        src_mask,
        beam_size=s.beam_size,
        length_penalty=s.length_penalty,
        max_len_a=s.max_len_a,
        max_len_b=s.max_len_b,
        min_len=s.min_len,
        return_attention=return_attention,
    )
