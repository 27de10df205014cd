"""The one recurrent encoder shared by plain seq2seq, Bahdanau and Luong.

Shapes: B batch, S source length, E embedding width, H hidden width per direction,
L layers, dirs = 2 if bidirectional else 1, Dk = dirs * H.
"""

from __future__ import annotations

from typing import NamedTuple

from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seq2seq_lab.data.specials import PAD_ID
from seq2seq_lab.models.recurrent.choices import make_rnn
from seq2seq_lab.models.recurrent.reversal import reversal_index
from seq2seq_lab.models.recurrent.state import RNNHidden


class EncoderOutput(NamedTuple):
    outputs: Tensor  # [B, S, Dk] h_i = [forward h_i ; backward h_i], zeros on padding
    final: RNNHidden  # [L*dirs, B, H] final state of every layer and direction (PyTorch layout)


class RNNEncoder(nn.Module):
    """Embeddings + multi-layer (bi)directional LSTM/GRU/vanilla RNN over packed sequences.

    h_i = RNN(x_i, h_{i-1}); bidirectional: h_i = [->h_i ; <-h_i] (Bahdanau et al. 2015, 3.2).

    Rows are packed by their real length, so padding never enters a state: the backward
    direction starts at the row's last real token and the final states are those of the real
    end of each row. With ``reverse_source`` the words are reversed before the RNN (see
    :mod:`~seq2seq_lab.models.recurrent.reversal`) and the outputs are put back in source
    order afterwards, so attention weights always index the original source positions.
    """

    def __init__(
        self,
        *,
        vocab_size: int,
        embedding_dim: int,
        hidden_size: int,
        num_layers: int,
        cell: str,
        bidirectional: bool,
        dropout: float,
        reverse_source: bool,
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=PAD_ID)
        self.dropout = nn.Dropout(dropout)
        self.rnn = make_rnn(
            cell=cell,
            input_size=embedding_dim,
            hidden_size=hidden_size,
            num_layers=num_layers,
            dropout=dropout,
            bidirectional=bidirectional,
        )
        self.reverse_source = reverse_source
        self.num_layers = num_layers
        self.directions = 2 if bidirectional else 1
        self.output_size = self.directions * hidden_size

    def forward(self, src: Tensor, src_mask: Tensor) -> EncoderOutput:
        S = src.size(1)
        if self.reverse_source:
            order = reversal_index(src_mask)  # [B, S], its own inverse
            src = src.gather(1, order)
        embedded = self.dropout(self.embedding(src))  # [B, S, E]
        lengths = src_mask.sum(dim=1).cpu()  # pack_padded_sequence wants CPU lengths
        packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
        packed_outputs, final = self.rnn(packed)  # final comes back in the batch's row order
        outputs, _ = pad_packed_sequence(packed_outputs, batch_first=True, total_length=S)
        if self.reverse_source:
            # back to source order: [B, S, Dk] rows gathered with the same index
            outputs = outputs.gather(1, order[:, :, None].expand_as(outputs))
        return EncoderOutput(outputs, final)
