"""Plain RNN encoder-decoder (Sutskever et al. 2014, arXiv 1409.3215; Cho et al. 2014,
arXiv 1406.1078): ``model=plain``.

Shapes: B batch, T target length, E embedding width, H hidden width, V target vocabulary.
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from seq2seq_lab.models.network import ForwardOutput, StepOutput
from seq2seq_lab.models.recurrent.base import RecurrentNetwork
from seq2seq_lab.models.recurrent.state import RNNDecoderState, RNNMemory


class PlainSeq2SeqNetwork(RecurrentNetwork):
    """Encoder-decoder without attention: the source reaches the decoder only through v.

    v = encoder final state (the "thought vector"; the encoder outputs are discarded)
    s_0 = bridge(v);  s_t = RNN_dec(E y_{t-1}, s_{t-1});  P(y_t | y_<t, x) = softmax(W_y s_t)

    The decoder never looks at the source again, so teacher forcing runs the decoder RNN over
    the whole shifted target in one call (:meth:`teacher_forced`); :meth:`step` is the same
    recurrence one token at a time, for decoding. Options: see :class:`RecurrentNetwork`.
    """

    family = "plain"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.decoder_rnn = self.make_decoder_rnn(self.embedding_dim)

    def init_state(self, memory: RNNMemory, max_length: int | None = None) -> RNNDecoderState:
        return RNNDecoderState(hidden=self.initial_hidden(memory))

    def step(self, prev_tokens: Tensor, state: RNNDecoderState) -> StepOutput:
        y = self.embed_target(prev_tokens)[:, None]  # [B, E] -> [B, 1, E]: a length-1 sequence
        outputs, hidden = self.decoder_rnn(y, state.hidden)  # [B, 1, H]
        return StepOutput(self.output_logits(outputs[:, 0]), RNNDecoderState(hidden=hidden), None)

    def teacher_forced(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> ForwardOutput:
        state = self.init_state(self.encode(src, src_mask))
        outputs, _ = self.decoder_rnn(self.embed_target(tgt_in), state.hidden)  # [B, T, H]
        return ForwardOutput(self.output_logits(outputs), None)
