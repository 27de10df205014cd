"""What the three recurrent families share: encoder, bridge, target embedding, output layer.

Shapes: B batch, S source length, T target length, E embedding width, H hidden width,
V target vocabulary.

The families differ only in their decoder (what enters the RNN, whether and when it attends)
and subclass :class:`RecurrentNetwork`; everything else is built and run here, once.
"""

from __future__ import annotations

from torch import Tensor, nn

from seq2seq_lab.data.specials import PAD_ID
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.network import Seq2SeqNetwork
from seq2seq_lab.models.recurrent.bridge import BRIDGES
from seq2seq_lab.models.recurrent.choices import choose, make_rnn
from seq2seq_lab.models.recurrent.encoder import RNNEncoder
from seq2seq_lab.models.recurrent.state import RNNHidden, RNNMemory


class RecurrentNetwork(Seq2SeqNetwork):
    """Base of plain seq2seq, Bahdanau and Luong (the options below are ``model.<name>``).

    - ``cell`` lstm | gru | rnn, for the encoder and the decoder;
    - ``num_layers`` decoder layers; ``encoder_num_layers`` (None: the same);
    - ``hidden_size`` H of the decoder and of each encoder direction;
    - ``embedding_dim`` E of the source and target embeddings;
    - ``dropout`` on embeddings, between stacked layers and before the output layer;
    - ``bidirectional`` encoder (outputs 2H wide); ``reverse_source`` (Sutskever's trick);
    - ``bridge`` bridge | last | zero: encoder final state -> decoder initial state;
    - ``tie_embeddings``: the output layer reuses the target embedding matrix, logits = E o_t
      (Press & Wolf 2017); the decoder's output features are H wide, so it needs H == E.

    Subclasses take these options as ``**options`` (their own come first in their signature),
    build ``self.decoder_rnn`` (their input width differs) and the decoder methods. The values
    live once, in ``conf/model/_recurrent.yaml`` and each family's ``conf/model/<name>.yaml``.
    """

    def __init__(
        self,
        *,
        src_vocab_size: int,
        tgt_vocab_size: int,
        teacher_forcing_ratio: float,
        cell: str,
        num_layers: int,
        encoder_num_layers: int | None,
        hidden_size: int,
        embedding_dim: int,
        dropout: float,
        bidirectional: bool,
        reverse_source: bool,
        bridge: str,
        tie_embeddings: bool,
    ) -> None:
        super().__init__(
            src_vocab_size=src_vocab_size,
            tgt_vocab_size=tgt_vocab_size,
            teacher_forcing_ratio=teacher_forcing_ratio,
        )
        encoder_num_layers = num_layers if encoder_num_layers is None else encoder_num_layers
        for key, value in [
            ("num_layers", num_layers),
            ("encoder_num_layers", encoder_num_layers),
            ("hidden_size", hidden_size),
            ("embedding_dim", embedding_dim),
        ]:
            if value < 1:
                raise ConfigError(f"model.{key}={value} must be a positive integer")
        if not 0.0 <= dropout < 1.0:
            raise ConfigError(f"model.dropout={dropout} must be in [0, 1)")
        bridge_class = choose("model.bridge", bridge, BRIDGES)
        if tie_embeddings and hidden_size != embedding_dim:
            raise ConfigError(
                f"model.tie_embeddings=true needs model.hidden_size ({hidden_size}) == "
                f"model.embedding_dim ({embedding_dim})"
            )
        self.cell = cell
        self.hidden_size = hidden_size
        self.embedding_dim = embedding_dim
        self.num_layers = num_layers

        self.encoder = RNNEncoder(
            vocab_size=src_vocab_size,
            embedding_dim=embedding_dim,
            hidden_size=hidden_size,
            num_layers=encoder_num_layers,
            cell=cell,
            bidirectional=bidirectional,
            dropout=dropout,
            reverse_source=reverse_source,
        )
        self.memory_size = self.encoder.output_size  # Dk: width of h_i (2H if bidirectional)
        self.bridge = bridge_class(
            directions=self.encoder.directions,
            decoder_layers=num_layers,
            input_size=self.memory_size,
            output_size=hidden_size,
            parts=2 if cell == "lstm" else 1,  # an LSTM state is (h, c)
        )
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, embedding_dim, padding_idx=PAD_ID)
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(hidden_size, tgt_vocab_size)
        if tie_embeddings:
            self.output.weight = self.tgt_embedding.weight  # both [V, E], E == H

    def encode(self, src: Tensor, src_mask: Tensor) -> RNNMemory:
        outputs, final = self.encoder(src, src_mask)
        return RNNMemory(final=final, outputs=outputs, src_mask=src_mask)

    def initial_hidden(self, memory: RNNMemory) -> RNNHidden:
        """Decoder s_0 from the encoder's final states, through the configured bridge."""
        return self.bridge(memory.final)

    def embed_target(self, tokens: Tensor) -> Tensor:
        """tokens [B] or [B, T] -> embeddings [B, E] or [B, T, E] (dropout applied)."""
        return self.dropout(self.tgt_embedding(tokens))

    def output_logits(self, features: Tensor) -> Tensor:
        """Decoder output features [..., H] -> logits [..., V] (dropout, then W_y)."""
        return self.output(self.dropout(features))

    def make_decoder_rnn(self, input_size: int) -> nn.RNNBase:
        """The decoder RNN (cell, width, depth and dropout of the options) on ``input_size``."""
        return make_rnn(
            cell=self.cell,
            input_size=input_size,
            hidden_size=self.hidden_size,
            num_layers=self.num_layers,
            dropout=self.dropout.p,
        )
