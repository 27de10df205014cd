"""RNNsearch: the RNN encoder-decoder with additive attention (Bahdanau et al. 2015,
arXiv 1409.0473): ``model=bahdanau``.

Shapes: B batch, S source length, T target length, E embedding width, H decoder hidden width,
Dk encoder output width (2H with the default bidirectional encoder), V target vocabulary.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from seq2seq_lab.models.network import ForwardOutput, StepOutput
from seq2seq_lab.models.recurrent.attention_specs import bahdanau_attention
from seq2seq_lab.models.recurrent.base import RecurrentNetwork
from seq2seq_lab.models.recurrent.state import AttentionDecoderState, RNNMemory, top_layer


class BahdanauNetwork(RecurrentNetwork):
    """Attention with the *previous* decoder state as the query, context fed into the RNN.

    e_{t,i} = a(s_{t-1}, h_i)                 (``model.attention.form``, see additive.py)
    alpha_t = softmax(e_t) over real source positions;  c_t = sum_i alpha_{t,i} h_i
    s_t     = RNN_dec([E y_{t-1} ; c_t], s_{t-1})
    o_t     = tanh(W_o [s_t ; c_t ; E y_{t-1}]);   P(y_t | y_<t, x) = softmax(W_y o_t)

    s_0 = bridge(encoder final states), so the first query is the bridged encoder state (the
    paper: s_0 = tanh(W_s <-h_1)). The paper's deep-output maxout layer is replaced by one tanh
    layer of width H. Every step depends on the last context, so training loops over the target
    positions; :meth:`teacher_forced` keeps only the recurrence in that loop and applies the
    output layers to all positions at once.
    """

    family = "bahdanau"

    def __init__(self, *, attention: Mapping[str, Any], **options: Any) -> None:
        """``attention``: ``model.attention.form``; ``options``: see :class:`RecurrentNetwork`."""
        super().__init__(**options)
        H, E = self.hidden_size, self.embedding_dim
        self.attention = bahdanau_attention(attention, query_size=H, key_size=self.memory_size)
        self.decoder_rnn = self.make_decoder_rnn(E + self.memory_size)  # [E y_{t-1} ; c_t]
        self.readout = nn.Linear(H + self.memory_size + E, H)

    def init_state(self, memory: RNNMemory, max_length: int | None = None) -> AttentionDecoderState:
        return AttentionDecoderState(
            hidden=self.initial_hidden(memory),
            memory=memory.outputs,
            keys=self.attention.precompute_keys(memory.outputs),  # once per sentence
            src_mask=memory.src_mask,
        )

    def _recur(
        self, y: Tensor, state: AttentionDecoderState
    ) -> tuple[Tensor, Tensor, Tensor, AttentionDecoderState]:
        """y = E y_{t-1} [B, E] -> s_t [B, H], c_t [B, Dk], alpha_t [B, S], next state."""
        context, weights = self.attention(
            top_layer(state.hidden),  # the query s_{t-1}
            state.memory,
            state.memory,
            state.src_mask,
            projected_keys=state.keys,
            position=state.t,
        )
        rnn_input = torch.cat([y, context], dim=-1)[:, None]  # [B, 1, E + Dk]
        outputs, hidden = self.decoder_rnn(rnn_input, state.hidden)
        return (
            outputs[:, 0],
            context,
            weights,
            dataclasses.replace(state, hidden=hidden, t=state.t + 1),
        )

    def _logits(self, s: Tensor, context: Tensor, y: Tensor) -> Tensor:
        """[..., H], [..., Dk], [..., E] -> logits [..., V] (one step or all T at once)."""
        return self.output_logits(torch.tanh(self.readout(torch.cat([s, context, y], dim=-1))))

    def step(self, prev_tokens: Tensor, state: AttentionDecoderState) -> StepOutput:
        y = self.embed_target(prev_tokens)  # [B, E]
        s, context, weights, state = self._recur(y, state)
        return StepOutput(self._logits(s, context, y), state, weights)

    def teacher_forced(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> ForwardOutput:
        state = self.init_state(self.encode(src, src_mask))
        ys = self.embed_target(tgt_in)  # [B, T, E]
        states, contexts, weights = [], [], []
        for t in range(tgt_in.size(1)):
            s, context, alpha, state = self._recur(ys[:, t], state)
            states.append(s)
            contexts.append(context)
            weights.append(alpha)
        # [B, T, H], [B, T, Dk], [B, T, E] -> logits [B, T, V] in one product
        logits = self._logits(torch.stack(states, 1), torch.stack(contexts, 1), ys)
        return ForwardOutput(logits, torch.stack(weights, 1))
