"""BLEU by source-length bucket (Bahdanau et al. 2014, Fig. 2; comparisons.md E1/E2/E7).

Length is counted in whitespace-separated words of the raw source sentence, so buckets mean
the same thing whatever subword vocabulary a model used.
"""

from __future__ import annotations

from seq2seq_lab.metrics.corpus import corpus_bleu

DEFAULT_EDGES = (10, 20, 30, 40, 50)


def bucket_label(length: int, edges: tuple[int, ...] = DEFAULT_EDGES) -> str:
    """1-10, 11-20, ..., 51+ for the default edges (inclusive upper bounds)."""
    lower = 1
    for edge in edges:
        if length <= edge:
            return f"{lower}-{edge}"
        lower = edge + 1
    return f"{lower}+"


def bleu_by_length(
    sources: list[str],
    hypotheses: list[str],
    references: list[str],
    edges: tuple[int, ...] = DEFAULT_EDGES,
) -> dict[str, dict[str, float]]:
    """{bucket: {"bleu": corpus BLEU of the bucket, "count": sentences}}, buckets in order,
    empty buckets left out."""
    if not len(sources) == len(hypotheses) == len(references):
        raise ValueError("sources, hypotheses and references must have the same length")
    groups: dict[str, tuple[list[str], list[str]]] = {}
    order = [bucket_label(e, edges) for e in edges] + [bucket_label(edges[-1] + 1, edges)]
    for src, hyp, ref in zip(sources, hypotheses, references):
        label = bucket_label(len(src.split()), edges)
        groups.setdefault(label, ([], []))
        groups[label][0].append(hyp)
        groups[label][1].append(ref)
    return {
        label: {"bleu": corpus_bleu(*groups[label]), "count": len(groups[label][0])}
        for label in order
        if label in groups
    }
