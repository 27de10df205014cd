"""Global and local attention of Luong et al. 2015 (arXiv 1508.04025): ``model=luong``.

Shapes: B batch, S source length, T target length, E embedding width, H decoder hidden width,
Dk encoder output width (H with the default unidirectional encoder), V target vocabulary.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from seq2seq_lab.models.network import ForwardOutput, StepOutput
from seq2seq_lab.models.recurrent.attention_specs import luong_attention
from seq2seq_lab.models.recurrent.base import RecurrentNetwork
from seq2seq_lab.models.recurrent.state import AttentionDecoderState, RNNMemory


class LuongNetwork(RecurrentNetwork):
    """Attention on the *current* decoder state, applied after the recurrence.

    s_t  = RNN_dec(E y_{t-1}, s_{t-1})                 (input feeding: [E y_{t-1} ; s~_{t-1}])
    e_{t,i} = score(s_t, h_i)          (``model.attention.score``: dot | general | concat |
                                         location; ``model.attention.window``: global | local_m |
                                         local_p, see multiplicative.py and local.py)
    alpha_t = softmax(e_t);   c_t = sum_i alpha_{t,i} h_i
    s~_t = tanh(W_c [c_t ; s_t]);   P(y_t | y_<t, x) = softmax(W_y s~_t)

    ``input_feeding`` (paper, section 3.3) concatenates s~_{t-1} (zeros at t = 1) to the next
    input so the RNN knows its past alignment decisions. Without it the RNN does not depend on
    attention, and :meth:`teacher_forced` runs the RNN over the whole target in one call and
    attends for all T positions in one batched product; with it, training loops over positions
    like :meth:`step` but still applies the output layer once.
    """

    family = "luong"

    def __init__(
        self, *, input_feeding: bool, attention: Mapping[str, Any], **options: Any
    ) -> None:
        """``input_feeding``, ``attention`` (score, window, window_size, max_positions): see
        above; ``options``: see :class:`RecurrentNetwork`."""
        super().__init__(**options)
        H, E = self.hidden_size, self.embedding_dim
        self.attention = luong_attention(attention, query_size=H, key_size=self.memory_size)
        self.input_feeding = input_feeding
        self.decoder_rnn = self.make_decoder_rnn(E + (H if input_feeding else 0))
        self.combine = nn.Linear(self.memory_size + H, H, bias=False)  # W_c

    def init_state(self, memory: RNNMemory, max_length: int | None = None) -> AttentionDecoderState:
        hidden = self.initial_hidden(memory)
        B = memory.outputs.size(0)
        return AttentionDecoderState(
            hidden=hidden,
            memory=memory.outputs,
            keys=self.attention.precompute_keys(memory.outputs),  # once per sentence
            src_mask=memory.src_mask,
            feed=memory.outputs.new_zeros(B, self.hidden_size) if self.input_feeding else None,
        )

    def _attend(
        self, s: Tensor, state: AttentionDecoderState, position: int
    ) -> tuple[Tensor, Tensor]:
        """s_t [B, H] or [B, T, H] (queries from ``position`` on) -> s~_t and alpha_t."""
        context, weights = self.attention(
            s,
            state.memory,
            state.memory,
            state.src_mask,
            projected_keys=state.keys,
            position=position,
        )
        return torch.tanh(self.combine(torch.cat([context, s], dim=-1))), weights

    def _advance(
        self, y: Tensor, state: AttentionDecoderState
    ) -> tuple[Tensor, Tensor, AttentionDecoderState]:
        """One position: y = E y_{t-1} [B, E] -> s~_t [B, H], alpha_t [B, S], next state."""
        rnn_input = torch.cat([y, state.feed], dim=-1) if self.input_feeding else y
        outputs, hidden = self.decoder_rnn(rnn_input[:, None], state.hidden)  # [B, 1, H]
        attentional, weights = self._attend(outputs[:, 0], state, state.t)
        feed = attentional if self.input_feeding else None
        return (
            attentional,
            weights,
            dataclasses.replace(state, hidden=hidden, feed=feed, t=state.t + 1),
        )

    def step(self, prev_tokens: Tensor, state: AttentionDecoderState) -> StepOutput:
        attentional, weights, state = self._advance(self.embed_target(prev_tokens), state)
        return StepOutput(self.output_logits(attentional), state, weights)

    def teacher_forced(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> ForwardOutput:
        state = self.init_state(self.encode(src, src_mask))
        ys = self.embed_target(tgt_in)  # [B, T, E]
        if self.input_feeding:
            attentional, weights = [], []
            for t in range(tgt_in.size(1)):
                a, alpha, state = self._advance(ys[:, t], state)
                attentional.append(a)
                weights.append(alpha)
            attentional_all, weights_all = torch.stack(attentional, 1), torch.stack(weights, 1)
        else:
            # no feedback from attention: the RNN runs over all T positions in one call, then
            # all T queries attend in one batched product
            outputs, _ = self.decoder_rnn(ys, state.hidden)  # [B, T, H]
            attentional_all, weights_all = self._attend(outputs, state, 0)  # [B,T,H], [B,T,S]
        return ForwardOutput(self.output_logits(attentional_all), weights_all)
