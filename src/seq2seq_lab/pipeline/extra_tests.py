"""Test sets scored apart from the test split: a source's ``extra_test_splits`` (the synthetic
task's extrapolation split, sentences past every training length), each decoded by the
tested checkpoint after the test and recorded under its own name in results.json.

They are reported beside the test split and never mixed into it: the comparisons' checks read
``test``; a claim about lengths beyond training reads its own record. Decoded with the
validation settings (greedy), as the length probe is: every model of a comparison alike, and
long inputs stay cheap.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from seq2seq_lab.decoding.settings import DecodingSettings
from seq2seq_lab.metrics.corpus import bleu_with_length, corpus_scores
from seq2seq_lab.metrics.length_buckets import bleu_by_length
from seq2seq_lab.record.atomic import write_text
from seq2seq_lab.training.module import Seq2SeqModule

log = logging.getLogger(__name__)

BATCH = 64  # sentences per decoder call (outputs do not depend on it)


def translate_in_order(
    module: Seq2SeqModule, datamodule: Any, lines: list[str], decoding: DecodingSettings
) -> list[str]:
    """``lines`` translated in eval mode, in batches sorted by length so that a batch pads
    little; returned in the order given (each output is independent of its batch)."""
    from seq2seq_lab.decoding.translation import translate_lines

    order = sorted(range(len(lines)), key=lambda i: len(lines[i]))
    was_training = module.training
    module.eval()
    try:
        with torch.inference_mode():
            result = translate_lines(module, datamodule, [lines[i] for i in order], decoding, BATCH)
    finally:
        module.train(was_training)
    if result.truncated:
        log.warning("%d inputs cut to the model's limit", len(result.truncated))
    out = [""] * len(lines)
    for i, text in zip(order, result.lines):
        out[i] = text
    return out


def score_extra_test(
    sources: list[str], hypotheses: list[str], references: list[str]
) -> dict[str, Any]:
    """The record of one extra test set: corpus BLEU, chrF, TER, the length figures of
    :func:`bleu_with_length` and BLEU by source-length bucket."""
    scores = corpus_scores(hypotheses, references)
    return {
        **scores.as_dict(),
        **{k: v for k, v in bleu_with_length(hypotheses, references).items() if k != "bleu"},
        "sentences": len(sources),
        "source_words": sum(len(s.split()) for s in sources) / max(len(sources), 1),
        "bleu_by_length": bleu_by_length(sources, hypotheses, references),
    }


def run_extra_tests(module: Seq2SeqModule, datamodule: Any, run_dir: Path) -> dict[str, Any]:
    """{split: record} for every extra test set of ``datamodule``, hypotheses written to
    RUN/hypotheses.<split>.txt."""
    records: dict[str, Any] = {}
    decoding = module.val_decoding
    for split in datamodule.extra_test_splits:
        sources, references = datamodule.raw_pairs(split)
        hypotheses = translate_in_order(module, datamodule, sources, decoding)
        write_text(run_dir / f"hypotheses.{split}.txt", "".join(h + "\n" for h in hypotheses))
        records[split] = {
            "split": split,
            "decoding": decoding.to_dict(),
            **score_extra_test(sources, hypotheses, references),
        }
    return records
