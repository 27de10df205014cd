"""Decoding settings and their validation.

Their values live once, in ``conf/decoding/`` (``module.val_decoding`` and
``module.test_decoding`` of the train config); configs, checkpoints and results.json hold
them as plain dicts. :meth:`DecodingSettings.from_config` turns such a dict into settings and
:meth:`DecodingSettings.to_dict` back. Neither this class nor greedy and beam search (which
take every setting as a required keyword) hold a second copy of a default.

Output length limit, counting EOS (fairseq's max_len_a / max_len_b):
    limit(x) = max(1, floor(max_len_a * |x| + max_len_b)),  |x| the source length with EOS.
Beam ranking (GNMT, Wu et al. 2016): score(y) = log P(y | x) / lp(y),
    lp(y) = ((5 + |y|) / 6) ** length_penalty,  |y| counting EOS when emitted.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from seq2seq_lab.errors import ConfigError

# The key a setting is reported under when it was not read from a named config section
# (constructed directly, or overridden by eval/translate's ``decoding.*``).
DEFAULT_KEY = "decoding"


@dataclasses.dataclass(frozen=True, kw_only=True)
class DecodingSettings:
    """How hypotheses are searched for (see the module docstring for the formulas).

    beam_size: K hypotheses kept per sentence; 1 is greedy search.
    length_penalty: GNMT's alpha; 0 ranks by plain log-probability. No effect when greedy.
    max_len_a, max_len_b: output limit a * |x| + b tokens, EOS included.
    min_len: EOS is forbidden while fewer than ``min_len`` tokens have been emitted.
    """

    beam_size: int
    length_penalty: float
    max_len_a: float
    max_len_b: int
    min_len: int

    def __post_init__(self) -> None:
        _check(self, DEFAULT_KEY)
        # alpha 1 from a command line is the same setting as 1.0; store floats so that
        # to_dict() writes one spelling of it
        for name in ("length_penalty", "max_len_a"):
            object.__setattr__(self, name, float(getattr(self, name)))

    @classmethod
    def from_config(cls, mapping: Mapping[str, Any], key: str) -> DecodingSettings:
        """Settings from a plain dict (a config section, or one stored in a checkpoint);
        errors name ``{key}.{setting}``; every setting must be given."""
        values = dict(mapping)
        for name in values:
            if name not in _NAMES:
                raise ConfigError(
                    f"{key}.{name}: unknown decoding setting, expected one of {', '.join(_NAMES)}"
                )
        missing = [name for name in _NAMES if name not in values]
        if missing:
            raise ConfigError(
                f"{key}.{missing[0]} is missing (the decoding settings are {', '.join(_NAMES)})"
            )
        _check_values(values, key)
        return cls(**values)

    def replace(self, **overrides: Any) -> DecodingSettings:
        """A copy with the non-None ``overrides`` applied (eval/translate's ``decoding.*``,
        where null keeps the checkpoint's value)."""
        return dataclasses.replace(self, **check_overrides(overrides))

    def to_dict(self) -> dict[str, Any]:
        """Every setting (results.json, checkpoints)."""
        return dataclasses.asdict(self)


_NAMES = tuple(f.name for f in dataclasses.fields(DecodingSettings))


def check_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The non-None ``overrides`` (eval/translate's ``decoding.*``), each name and value
    checked as :class:`DecodingSettings` checks them: a one-line ConfigError naming
    ``decoding.<setting>``, raised before a checkpoint is loaded."""
    changes = {name: value for name, value in overrides.items() if value is not None}
    for name in changes:
        if name not in _NAMES:
            raise ConfigError(
                f"{DEFAULT_KEY}.{name}: unknown decoding setting, "
                f"expected one of {', '.join(_NAMES)}"
            )
    _check_values(changes, DEFAULT_KEY)
    return changes


def _check(settings: DecodingSettings, key: str) -> None:
    _check_values({name: getattr(settings, name) for name in _NAMES}, key)


def _check_values(values: Mapping[str, Any], key: str) -> None:
    """One-line ConfigError naming ``{key}.{setting}`` for the first invalid value.

    max_len_b may be 0 (a limit of a * |x| alone): the limit is clamped to at least 1.
    """
    for name, minimum in (("beam_size", 1), ("max_len_b", 0), ("min_len", 0)):
        if name in values:
            value = values[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"{key}.{name} must be an integer >= {minimum}, got {value!r}")
    for name, minimum in (("length_penalty", None), ("max_len_a", 0.0)):
        if name in values:
            value = values[name]
            is_number = isinstance(value, int | float) and not isinstance(value, bool)
            if not is_number or not math.isfinite(value):
                raise ConfigError(f"{key}.{name} must be a finite number, got {value!r}")
            if minimum is not None and value < minimum:
                raise ConfigError(f"{key}.{name} must be >= {minimum:g}, got {value!r}")
