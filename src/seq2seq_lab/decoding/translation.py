"""Translating lines of text with a network: batches of sources, each decoded with the
decoding settings, the output limited to what the network can emit (``source_limit``), a
warning for sources longer than the model's positions reach."""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import torch

from seq2seq_lab.decoding import DecodingSettings, Hypotheses, decode
from seq2seq_lab.decoding.hypotheses import max_output_lengths
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.models.network import Seq2SeqNetwork
from seq2seq_lab.training.module import Seq2SeqModule

log = logging.getLogger(__name__)


class Translations(NamedTuple):
    """The output of :func:`translate_lines`, one entry per input line, in input order."""

    lines: list[str]  # detokenised translations
    tokens: list[list[int]]  # target ids (no BOS/EOS)
    scores: list[float]  # the decoder's score of each (see Hypotheses.scores)
    truncated: list[int]  # 0-based indices of the inputs cut to ``source_limit`` tokens
    # every hypothesis the beam finalised, (score, detokenised), best first; greedy: the one
    n_best: list[list[tuple[float, str]]]


def position_tables(network: Seq2SeqNetwork) -> tuple[Any, Any] | None:
    """The (source, target) absolute position tables (``AbsolutePositions``, each with its
    ``max_positions``) of a network that has them (the Transformer's ``src_positions`` and
    ``tgt_positions``), else None."""
    src_table = getattr(network, "src_positions", None)
    tgt_table = getattr(network, "tgt_positions", None)
    return None if src_table is None or tgt_table is None else (src_table, tgt_table)


def source_limit(network: Seq2SeqNetwork, decoding: DecodingSettings) -> int | None:
    """The most source tokens (EOS included) ``network`` can translate under ``decoding``
    without running past its absolute position tables, or None when it has none (recurrent
    families; Transformer with relative or no positions).

    Two limits meet: the source table must hold the source, and the target table every
    position the search may feed, i.e. the output limit floor(a * |x| + b) of
    ``max_output_lengths`` (EOS included) must be at most ``model.max_positions``; the limit
    is therefore below ``max_positions`` when outputs may be longer than their source.
    """
    tables = position_tables(network)
    if tables is None:
        return None
    src_table, tgt_table = tables

    def output_fits(n: int) -> bool:
        mask = torch.ones(1, n, dtype=torch.bool)
        limit = max_output_lengths(mask, decoding.max_len_a, decoding.max_len_b)
        return int(limit) <= tgt_table.max_positions

    if not output_fits(1):
        raise ConfigError(
            f"decoding.max_len_a={decoding.max_len_a:g} and decoding.max_len_b="
            f"{decoding.max_len_b} let even an empty line's output run past "
            f"model.max_positions={tgt_table.max_positions}; lower decoding.max_len_b"
        )
    low, high = 1, src_table.max_positions  # output_fits(low) holds; the limit is monotone
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if output_fits(middle) else (low, middle - 1)
    return low


def translate_lines(
    module: Seq2SeqModule,
    datamodule: Any,
    lines: list[str],
    decoding: DecodingSettings,
    batch_size: int,
) -> Translations:
    """Translate raw source sentences in order, ``batch_size`` sentences per decoder call.

    A line longer than :func:`source_limit` is cut to its first tokens (and listed in
    ``truncated``) rather than failing the whole input; an empty (or blank) line is answered
    with an empty one, score 0, without decoding. Each sentence's output does not depend
    on ``batch_size`` or on its neighbours (tests/test_batch_invariance.py).
    """
    from seq2seq_lab.data.batching import source_batch

    if batch_size < 1:
        raise ConfigError(f"batch_size={batch_size}: expected a positive number")
    blank = [i for i, line in enumerate(lines) if not line.strip()]
    if blank:  # nothing to translate: an empty line, not whatever the decoder makes of none
        kept = [i for i in range(len(lines)) if i not in set(blank)]
        some = translate_lines(module, datamodule, [lines[i] for i in kept], decoding, batch_size)
        result = Translations([""] * len(lines), [[] for _ in lines], [0.0] * len(lines), [],
                              [[(0.0, "")] for _ in lines])  # fmt: skip
        for j, i in enumerate(kept):
            result.lines[i], result.tokens[i] = some.lines[j], some.tokens[j]
            result.scores[i], result.n_best[i] = some.scores[j], some.n_best[j]
        return result._replace(truncated=[kept[j] for j in some.truncated])
    network = module.network
    device = next(module.parameters()).device
    limit = source_limit(network, decoding)
    ids = [datamodule.encode_source(line) for line in lines]
    truncated: list[int] = []
    if limit is not None:
        for i, sentence in enumerate(ids):
            if len(sentence) + 1 > limit:  # + EOS, which source_batch appends
                ids[i] = sentence[: limit - 1]
                truncated.append(i)
    tokens: list[list[int]] = []
    scores: list[float] = []
    ranked: list[list[tuple[float, list[int]]]] = []
    for start in range(0, len(ids), batch_size):
        batch = source_batch(ids[start : start + batch_size]).to(device)
        hyps: Hypotheses = decode(network, batch.src, batch.src_mask, decoding)
        tokens.extend(hyps.tokens)
        scores.extend(hyps.scores)
        ranked.extend(hyps.n_best or [[(s, t)] for s, t in zip(hyps.scores, hyps.tokens)])
    detokenise = datamodule.tgt_tokenizer.decode
    texts = [detokenise(t) for t in tokens]
    n_best = [[(s, detokenise(t)) for s, t in hypotheses] for hypotheses in ranked]
    return Translations(texts, tokens, scores, truncated, n_best)


def truncation_warning(
    truncated: list[int], network: Seq2SeqNetwork, decoding: DecodingSettings, shown: int = 20
) -> str:
    """One line naming the (1-based) input lines that were cut, the first ``shown`` of them,
    and the limit they were cut to (:func:`source_limit`, without EOS)."""
    limit = source_limit(network, decoding)
    numbers = ", ".join(str(i + 1) for i in truncated[:shown])
    more = f" and {len(truncated) - shown} more" if len(truncated) > shown else ""
    tables = position_tables(network)
    assert limit is not None and tables is not None, "nothing is cut without a limit"
    positions = tables[0].max_positions
    return (
        f"warning: input line{'s' if len(truncated) > 1 else ''} {numbers}{more}: longer "
        f"than the {limit - 1} tokens this model translates (model.max_positions={positions}, "
        f"decoding.max_len_a={decoding.max_len_a:g}, decoding.max_len_b={decoding.max_len_b}"
        f"); only the first {limit - 1} tokens were translated"
    )
