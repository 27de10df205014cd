"""Config names -> building blocks of the recurrent families; bad names raise ConfigError.

Each choice is a table (name -> builder), never an if/elif ladder: a new cell type, bridge or
attention form is one entry here plus its class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from torch import nn

from seq2seq_lab.errors import ConfigError

T = TypeVar("T")

RNN_CELLS: dict[str, type[nn.RNNBase]] = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}


def choose(key: str, value: Any, options: Mapping[str, T]) -> T:
    """``options[value]``, or a ConfigError naming ``key`` and listing the valid values."""
    if value not in options:
        raise ConfigError(f"{key}={value!r} is not valid; expected one of: {', '.join(options)}")
    return options[value]


def with_keys(key: str, spec: Mapping[str, Any], keys: tuple[str, ...]) -> dict:
    """``spec`` as a dict holding exactly ``keys``; a missing or unknown key is a ConfigError
    (the values live in the config: conf/model/*.yaml)."""
    unknown = sorted(set(spec) - set(keys))
    if unknown:
        raise ConfigError(f"{key}.{unknown[0]} is not a valid key; expected: {', '.join(keys)}")
    missing = [k for k in keys if k not in spec]
    if missing:
        raise ConfigError(f"{key}.{missing[0]} is missing; expected: {', '.join(keys)}")
    return dict(spec)


def make_rnn(
    *,
    cell: str,
    input_size: int,
    hidden_size: int,
    num_layers: int,
    dropout: float,
    bidirectional: bool = False,
) -> nn.RNNBase:
    """A batch-first multi-layer RNN of type ``cell`` (``model.cell``: lstm | gru | rnn).

    ``dropout`` acts between stacked layers (PyTorch warns when there is only one layer, so it
    is passed only when there are several).
    """
    rnn_class: Callable[..., nn.RNNBase] = choose("model.cell", cell, RNN_CELLS)
    return rnn_class(
        input_size,
        hidden_size,
        num_layers=num_layers,
        dropout=dropout if num_layers > 1 else 0.0,
        bidirectional=bidirectional,
        batch_first=True,
    )
