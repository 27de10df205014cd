"""Batched greedy and beam search, written once for every model family.

``decode(network, src, src_mask, settings)`` is the entry point; :class:`DecodingSettings`
validates the settings, whose values live in ``conf/decoding/``.
"""

from seq2seq_lab.decoding.beam import beam_search
from seq2seq_lab.decoding.greedy import greedy_search
from seq2seq_lab.decoding.hypotheses import Hypotheses
from seq2seq_lab.decoding.search import decode
from seq2seq_lab.decoding.settings import DecodingSettings

__all__ = ["DecodingSettings", "Hypotheses", "beam_search", "decode", "greedy_search"]
