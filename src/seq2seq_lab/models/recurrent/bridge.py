"""Bridges: encoder final state -> decoder initial state (``model.bridge``: bridge|last|zero).

Shapes: B batch, Le / Ld encoder / decoder layers, dirs encoder directions, He encoder hidden
width per direction, Hd decoder hidden width.

Every bridge first gives each encoder layer one vector by concatenating its directions,
[Le*dirs, B, He] -> [Le, B, dirs*He] (for Bahdanau's bidirectional encoder that holds ->h_S
and <-h_1, the state the paper initialises its decoder from), then matches the layer count:
equal counts map layer to layer; otherwise every decoder layer starts from the top encoder
layer (the most processed summary of the source). An LSTM's h and c go through the same
mapping, each with its own parameters.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch
from torch import Tensor, nn

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.recurrent.state import RNNHidden


def merge_directions(h: Tensor, directions: int) -> Tensor:
    """[Le*dirs, B, He] (PyTorch's layer-major layout) -> [Le, B, dirs*He]."""
    layers_dirs, B, He = h.shape
    h = h.view(layers_dirs // directions, directions, B, He)  # [Le, dirs, B, He]
    return h.transpose(1, 2).reshape(layers_dirs // directions, B, directions * He)


def match_layers(h: Tensor, decoder_layers: int) -> Tensor:
    """[Le, B, D] -> [Ld, B, D]: layer to layer, or the top layer repeated when Le != Ld."""
    if h.size(0) == decoder_layers:
        return h
    return h[-1:].expand(decoder_layers, -1, -1).contiguous()


class Bridge(nn.Module, ABC):
    """Base: applies :meth:`transform` to each part of the state (h, or h and c of an LSTM)."""

    def __init__(self, *, directions: int, decoder_layers: int) -> None:
        super().__init__()
        self.directions = directions
        self.decoder_layers = decoder_layers

    @abstractmethod
    def transform(self, part: int, h: Tensor) -> Tensor:
        """h [Ld, B, dirs*He] of state part ``part`` (0 = h, 1 = c) -> [Ld, B, Hd]."""

    def forward(self, final: RNNHidden) -> RNNHidden:
        parts = final if isinstance(final, tuple) else (final,)
        mapped = tuple(
            self.transform(
                i, match_layers(merge_directions(h, self.directions), self.decoder_layers)
            )
            for i, h in enumerate(parts)
        )
        return mapped if isinstance(final, tuple) else mapped[0]


class LinearBridge(Bridge):
    """``bridge``: s_0 = tanh(W_b [->h_S ; <-h_1] + b_b) per layer (Bahdanau et al. 2015 use
    tanh(W_s <-h_1); JoeyNMT's bridge uses both directions). LSTM: its own W_b for c."""

    def __init__(
        self, *, directions: int, decoder_layers: int, input_size: int, output_size: int, parts: int
    ) -> None:
        super().__init__(directions=directions, decoder_layers=decoder_layers)
        self.layers = nn.ModuleList(nn.Linear(input_size, output_size) for _ in range(parts))

    def transform(self, part: int, h: Tensor) -> Tensor:
        return torch.tanh(self.layers[part](h))


class LastStateBridge(Bridge):
    """``last``: s_0 = the encoder's final state as is (Sutskever et al. 2014: the thought
    vector). Needs dirs*He == Hd."""

    def __init__(
        self, *, directions: int, decoder_layers: int, input_size: int, output_size: int, parts: int
    ) -> None:
        super().__init__(directions=directions, decoder_layers=decoder_layers)
        if input_size != output_size:
            raise ConfigError(
                f"model.bridge=last copies the encoder's final state ({input_size} wide with "
                f"model.bidirectional=true) into the decoder ({output_size} wide); use "
                "model.bridge=bridge or model.bidirectional=false"
            )

    def transform(self, part: int, h: Tensor) -> Tensor:
        return h


class ZeroBridge(Bridge):
    """``zero``: s_0 = 0; the decoder learns about the source through attention only."""

    def __init__(
        self, *, directions: int, decoder_layers: int, input_size: int, output_size: int, parts: int
    ) -> None:
        super().__init__(directions=directions, decoder_layers=decoder_layers)
        self.output_size = output_size

    def transform(self, part: int, h: Tensor) -> Tensor:
        return h.new_zeros(h.size(0), h.size(1), self.output_size)


BRIDGES: dict[str, type[Bridge]] = {
    "bridge": LinearBridge,
    "last": LastStateBridge,
    "zero": ZeroBridge,
}
