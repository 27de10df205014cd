"""TEMPORARY stand-in until the decoding branch merges."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from seq2seq_lab.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class DecodingSettings:
    beam_size: int
    length_penalty: float
    max_len_a: float
    max_len_b: int
    min_len: int

    @classmethod
    def from_config(cls, mapping: Mapping[str, Any], key: str) -> DecodingSettings:
        names = {f.name for f in dataclasses.fields(cls)}
        for name in mapping:
            if name not in names:
                raise ConfigError(
                    f"{key}.{name}: unknown, expected one of {', '.join(sorted(names))}"
                )
        return cls(**mapping)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
