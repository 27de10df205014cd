"""The Transformer's sub-layers: the position-wise feed-forward network and the two residual
wrappings (where the LayerNorm goes). Blocks (``blocks.py``) only compose these.

Shapes: B batch, N positions, D model width, F inner FFN width (d_ff).

- FFN(x) = act(x W_1 + b_1) W_2 + b_2 (Vaswani et al. 2017, eq. 2; act = ReLU there).
- post-LN (Vaswani et al. 2017): out = LayerNorm(x + Dropout(SubLayer(x)))
- pre-LN (Xiong et al. 2020, arXiv 2002.04745): out = x + Dropout(SubLayer(LayerNorm(x))),
  and a stack of pre-LN blocks ends with one more LayerNorm (``final_norm``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar

from torch import Tensor, nn

from seq2seq_lab.errors import ConfigError

ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "silu": nn.SiLU, "gelu": nn.GELU}


class FeedForward(nn.Module):
    """FFN(x) = act(x W_1 + b_1) W_2 + b_2, applied to every position alone; act is
    ``model.ffn_activation`` (relu | silu | gelu)."""

    def __init__(self, *, d_model: int, d_ff: int, activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ConfigError(
                f"model.ffn_activation={activation!r} must be one of {'|'.join(ACTIVATIONS)}"
            )
        self.w_1 = nn.Linear(d_model, d_ff)
        self.activation = ACTIVATIONS[activation]()
        self.w_2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        """x [B, N, D] -> [B, N, D] (through [B, N, F])."""
        return self.w_2(self.activation(self.w_1(x)))


class Residual(nn.Module, ABC):
    """A residual connection around one sub-layer, with a LayerNorm placed by the subclass.

    ``forward(x, sublayer)`` is the whole wrapping. Sub-layers that return more than a tensor
    (attention weights, a key/value cache) are wrapped by hand as
    ``after(x, sublayer(before(x)))``.
    """

    final_norm: ClassVar[bool]  # does a stack of blocks in this form end with a LayerNorm?

    def __init__(self, *, d_model: int, dropout: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    @abstractmethod
    def before(self, x: Tensor) -> Tensor:
        """The sub-layer's input."""

    @abstractmethod
    def after(self, x: Tensor, y: Tensor) -> Tensor:
        """The block's output given the residual input ``x`` and the sub-layer output ``y``."""

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        return self.after(x, sublayer(self.before(x)))


class PostNormResidual(Residual):
    """post-LN (the original Transformer): out = LayerNorm(x + Dropout(SubLayer(x)))."""

    final_norm = False

    def before(self, x: Tensor) -> Tensor:
        return x

    def after(self, x: Tensor, y: Tensor) -> Tensor:
        return self.norm(x + self.dropout(y))


class PreNormResidual(Residual):
    """pre-LN: out = x + Dropout(SubLayer(LayerNorm(x))); the residual path is never normalised,
    so the stack needs a final LayerNorm."""

    final_norm = True

    def before(self, x: Tensor) -> Tensor:
        return self.norm(x)

    def after(self, x: Tensor, y: Tensor) -> Tensor:
        return x + self.dropout(y)


NORM_PLACEMENTS: dict[str, type[Residual]] = {"post": PostNormResidual, "pre": PreNormResidual}


def residual_class(norm: str) -> type[Residual]:
    """The residual wrapping named by ``model.norm``."""
    if norm not in NORM_PLACEMENTS:
        raise ConfigError(f"model.norm={norm!r} must be one of {'|'.join(NORM_PLACEMENTS)}")
    return NORM_PLACEMENTS[norm]
