"""The length probe: translation quality on inputs longer than any training sentence, made
from the test set itself (Bahdanau et al. 2014, Fig. 2: the encoder-decoder collapses as
sentences grow, attention does not; comparisons.md E1).

Multi30k's sentences are short, so its test set holds nothing longer than training. Joining k
consecutive test pairs, sources with sources and references with references, gives inputs k
times as long with references that still match them: for pairs (x_1, y_1) ... (x_N, y_N),

    x^(k)_i = x_{k(i-1)+1} ␣ ... ␣ x_{ki},    y^(k)_i = y_{k(i-1)+1} ␣ ... ␣ y_{ki},
    i = 1 ... floor(N / k)

(the last N mod k pairs are left out, so every input of a join joins exactly k sentences).
Each k translates the whole test text once more; the hypotheses of every k together are then
scored by source-length bucket (words of the joined source, ``metrics.length_buckets``), so a
bucket mixes the joins that reach its lengths and its BLEU is a corpus BLEU over them.

No Lightning here: :func:`length_probe` takes a ``translate`` function (raw source lines to
hypotheses, in order) and the raw test pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from seq2seq_lab.metrics.corpus import bleu_with_length
from seq2seq_lab.metrics.length_buckets import bleu_by_length

# The probe's name: its config key (``length_probe=[1,2,...]``, the joins), its record in a
# run's results.json and its directory of hypotheses (RUN/length_probe/join-<k>.txt).
PROBE = "length_probe"

# Bucket edges in source words: Multi30k's test sentences are 1-40 words (mean ~12), so six
# joins reach ~75 words on average and the buckets run well past any training sentence.
PROBE_EDGES = (10, 20, 30, 40, 60, 80)


def join_consecutive(
    sources: Sequence[str], references: Sequence[str], k: int
) -> tuple[list[str], list[str]]:
    """(x^(k), y^(k)) of the module docstring: every k consecutive pairs joined by a space."""
    if k < 1:
        raise ValueError(f"join of {k} pairs: expected 1 or more")
    if len(sources) != len(references):
        raise ValueError(f"{len(sources)} sources but {len(references)} references")
    groups = range(0, len(sources) - k + 1, k)
    return (
        [" ".join(sources[i : i + k]) for i in groups],
        [" ".join(references[i : i + k]) for i in groups],
    )


def _mean_words(lines: Sequence[str]) -> float:
    return sum(len(line.split()) for line in lines) / len(lines)


def length_probe(
    translate: Callable[[list[str]], list[str]],
    sources: Sequence[str],
    references: Sequence[str],
    joins: Sequence[int],
    edges: tuple[int, ...] = PROBE_EDGES,
) -> dict[str, Any]:
    """Translate the test pairs joined k at a time for every k in ``joins`` and score them
    (:func:`score_probe`), in increasing k; the record also holds ``"hypotheses": {k: [...]}``.
    """
    if not joins:
        raise ValueError("a length probe needs at least one join (k >= 1)")
    hypotheses: dict[int, list[str]] = {}
    for k in sorted(set(joins)):
        srcs, _ = join_consecutive(sources, references, k)
        if not srcs:
            raise ValueError(f"a join of {k} needs at least {k} test pairs, got {len(sources)}")
        hypotheses[k] = translate(srcs)
        if len(hypotheses[k]) != len(srcs):
            raise ValueError(f"{len(srcs)} inputs gave {len(hypotheses[k])} hypotheses")
    probe = score_probe(hypotheses, sources, references, edges)
    probe["hypotheses"] = {str(k): hyps for k, hyps in hypotheses.items()}
    return probe


def score_probe(
    hypotheses: Mapping[int, Sequence[str]],
    sources: Sequence[str],
    references: Sequence[str],
    edges: tuple[int, ...] = PROBE_EDGES,
) -> dict[str, Any]:
    """The probe's record from the hypotheses of each join k (one per joined input).

    Returns ``{"edges", "joins": {k: {"inputs", "source_words", "output_words",
    "reference_words", "bleu", "length_ratio", "brevity_penalty"}}, "bleu_by_length": {bucket:
    {"bleu", "count"}}}``: per join the mean length in words of its inputs, outputs and
    references, its corpus BLEU and how long the hypotheses are against the joined references
    (``metrics.corpus.bleu_with_length``: a model that stops after the first joined sentence
    loses its BLEU to the brevity penalty, not to wrong words), and the buckets over the
    hypotheses of all joins together.
    """
    per_join: dict[str, dict[str, float]] = {}
    pooled: tuple[list[str], list[str], list[str]] = ([], [], [])
    for k in sorted(hypotheses):
        srcs, refs = join_consecutive(sources, references, k)
        hyps = list(hypotheses[k])
        if len(hyps) != len(srcs):
            raise ValueError(f"join of {k}: {len(hyps)} hypotheses for {len(srcs)} inputs")
        per_join[str(k)] = {
            "inputs": len(srcs),
            "source_words": _mean_words(srcs),
            "output_words": _mean_words(hyps),
            "reference_words": _mean_words(refs),
            **bleu_with_length(hyps, refs),
        }
        for column, values in zip(pooled, (srcs, hyps, refs)):
            column.extend(values)
    return {
        "edges": list(edges),
        "joins": per_join,
        "bleu_by_length": bleu_by_length(*pooled, edges=edges),
    }
