"""``translate``: a checkpoint translates lines from a file or stdin
(``python -m seq2seq_lab.translate``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import torch
from omegaconf import DictConfig

from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.data.lines import decode_lines, read_lines
from seq2seq_lab.decoding.translation import translate_lines, truncation_warning
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.pipeline.building import (
    build_datamodule,
    expected_family,
    set_threads,
    with_decoding_overrides,
)
from seq2seq_lab.preflight import check_translate_inputs

log = logging.getLogger(__name__)


def read_input(input_path: str | None) -> list[str]:
    """The lines to translate: of the file ``input_path``, or of stdin when None, through the
    training data's line reader (split on \\n only); invalid UTF-8 is a one-line DataError
    naming the file (or <stdin>) and the line."""
    if input_path:
        path = Path(input_path)
        if not path.is_file():
            raise ConfigError(f"input={path}: no such file")
        return read_lines(path)
    return decode_lines(sys.stdin.buffer.read(), "<stdin>")


def translate(cfg: DictConfig) -> list[str]:
    """Translate lines from ``input`` (a file, or stdin) to ``output`` (a file, or stdout):
    one output line per input line, in order. Input lines end at \\n only (the reader of
    the training data, ``seq2seq_lab.data.lines``); lines too long for the model are cut to
    its limit with a one-line warning on stderr naming them."""
    check_translate_inputs(cfg)
    set_threads(cfg)
    lines = read_input(cfg.get("input"))  # before loading anything: bad input fails fast
    ckpt = load_checkpoint(cfg.ckpt_path, expected_family=expected_family(cfg))
    datamodule = build_datamodule(ckpt.run_config["data"])
    datamodule.load_state_dict(ckpt.datamodule_state)
    decoding = with_decoding_overrides(cfg, ckpt.module.test_decoding)
    with torch.inference_mode():
        result = translate_lines(ckpt.module, datamodule, lines, decoding, int(cfg.batch_size))
    if result.truncated:
        print(truncation_warning(result.truncated, ckpt.module.network, decoding), file=sys.stderr)
    rendered = "".join(o + "\n" for o in result.lines)
    if cfg.get("output"):
        Path(cfg.output).write_text(rendered, encoding="utf-8")
    else:
        sys.stdout.write(rendered)
    return result.lines
