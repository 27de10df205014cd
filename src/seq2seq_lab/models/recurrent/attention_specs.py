"""``model.attention`` of the attention families -> an attention module.

The config gives plain keys (``model.attention.form=concat``, ``model.attention.score=dot``,
``model.attention.window=local_p``) so a scalar override on the command line is all it takes;
the sizes come from the network. The values live in conf/model/{bahdanau,luong}.yaml; missing
or unknown keys and unknown values raise a ConfigError listing the valid ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.attention.additive import (
    ConcatAdditiveAttention,
    FeedForwardAttention,
    SeparateAdditiveAttention,
)
from seq2seq_lab.models.attention.base import AttentionScorer
from seq2seq_lab.models.attention.local import LocalMonotonicAttention, LocalPredictiveAttention
from seq2seq_lab.models.attention.multiplicative import (
    DotAttention,
    GeneralAttention,
    LocationAttention,
)
from seq2seq_lab.models.recurrent.choices import choose, with_keys

# The keys of model.attention for each family
BAHDANAU_ATTENTION = ("form",)
LUONG_ATTENTION = ("score", "scaled", "init_scale", "window", "window_size", "max_positions")

# builder(query_size Dq, key_size Dk, options) -> scorer
Builder = Callable[[int, int, Mapping[str, Any]], AttentionScorer]

ADDITIVE_FORMS: dict[str, Builder] = {
    "concat": lambda q, k, o: ConcatAdditiveAttention(query_size=q, key_size=k, hidden_size=q),
    "separate": lambda q, k, o: SeparateAdditiveAttention(query_size=q, key_size=k, hidden_size=q),
    "feedforward": lambda q, k, o: FeedForwardAttention(query_size=q, key_size=k),
}

LUONG_SCORES: dict[str, Builder] = {
    "dot": lambda q, k, o: DotAttention(query_size=q, key_size=k, scaled=o["scaled"]),
    "general": lambda q, k, o: GeneralAttention(
        query_size=q, key_size=k, scaled=o["scaled"], init_scale=o["init_scale"]
    ),
    "concat": lambda q, k, o: ConcatAdditiveAttention(query_size=q, key_size=k, hidden_size=q),
    "location": lambda q, k, o: LocationAttention(query_size=q, max_positions=o["max_positions"]),
}

# wrap(scorer, query_size Dq, options) -> mechanism
WINDOWS: dict[str, Callable[[AttentionScorer, int, Mapping[str, Any]], AttentionScorer]] = {
    "global": lambda scorer, q, o: scorer,
    "local_m": lambda scorer, q, o: LocalMonotonicAttention(
        scorer=scorer, window_size=o["window_size"]
    ),
    "local_p": lambda scorer, q, o: LocalPredictiveAttention(
        scorer=scorer, window_size=o["window_size"], query_size=q
    ),
}


def bahdanau_attention(
    spec: Mapping[str, Any], *, query_size: int, key_size: int
) -> AttentionScorer:
    """``model.attention.form``: concat | separate | feedforward (attention width = Dq)."""
    options = with_keys("model.attention", spec, BAHDANAU_ATTENTION)
    build = choose("model.attention.form", options["form"], ADDITIVE_FORMS)
    return build(query_size, key_size, options)


def luong_attention(spec: Mapping[str, Any], *, query_size: int, key_size: int) -> AttentionScorer:
    """``model.attention.score``: dot | general | concat | location; ``scaled``: dot and
    general divided by sqrt(Dq) (not Luong's; multiplicative.py says why);
    ``model.attention.window``: global | local_m | local_p, with half-width ``window_size``;
    ``max_positions``: rows of the location score's W_a; ``init_scale``: the general score's
    initial W_m ~ U(+-init_scale / sqrt(Dk)) (1: PyTorch's default)."""
    options = with_keys("model.attention", spec, LUONG_ATTENTION)
    build = choose("model.attention.score", options["score"], LUONG_SCORES)
    wrap = choose("model.attention.window", options["window"], WINDOWS)
    if options["score"] == "dot" and query_size != key_size:
        raise ConfigError(
            f"model.attention.score=dot needs encoder outputs as wide as the decoder state "
            f"(model.hidden_size={query_size}), but model.bidirectional=true makes them "
            f"{key_size}; use model.attention.score=general or model.bidirectional=false"
        )
    if not isinstance(options["scaled"], bool):
        raise ConfigError(f"model.attention.scaled={options['scaled']!r} must be true or false")
    if options["scaled"] and options["score"] not in ("dot", "general"):
        raise ConfigError(
            f"model.attention.scaled=true divides the dot and general scores by sqrt(Dq); "
            f"model.attention.score={options['score']} has no such scale: set scaled=false"
        )
    scale = options["init_scale"]
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
        raise ConfigError(f"model.attention.init_scale={scale!r} must be a positive number")
    if scale != 1 and options["score"] != "general":
        raise ConfigError(
            f"model.attention.init_scale={scale} scales the general score's W_m; "
            f"model.attention.score={options['score']} has none: set init_scale=1.0"
        )
    for key in ("window_size", "max_positions"):
        if not isinstance(options[key], int) or options[key] < 1:
            raise ConfigError(f"model.attention.{key}={options[key]!r} must be a positive integer")
    return wrap(build(query_size, key_size, options), query_size, options)
