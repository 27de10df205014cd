"""A run directory holds each side's vocabulary as text (``vocab.<lang>.txt``, one token a line
in id order), written from the tokenizers its checkpoint carries."""

from __future__ import annotations

import pytest

from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.pipeline.building import build_datamodule

pytestmark = pytest.mark.slow


def test_the_run_directory_holds_each_sides_vocabulary_in_id_order(smoke_run):
    run_dir, _ = smoke_run
    ckpt = load_checkpoint(run_dir / "checkpoints" / "best.ckpt")
    datamodule = build_datamodule(ckpt.run_config["data"])
    datamodule.load_state_dict(ckpt.datamodule_state)
    sides = ((datamodule.src_lang, datamodule.src_tokenizer),
             (datamodule.tgt_lang, datamodule.tgt_tokenizer))  # fmt: skip
    assert [lang for lang, _ in sides] == ["src", "tgt"]  # the built-in task's languages
    for lang, tokenizer in sides:
        lines = (run_dir / f"vocab.{lang}.txt").read_text(encoding="utf-8").splitlines()
        assert len(lines) == tokenizer.vocab_size > 4
        assert lines == tokenizer.tokens(range(tokenizer.vocab_size))  # line n: id n - 1
        assert tokenizer.encode(lines[7]) == [7]  # a word's id is its line
