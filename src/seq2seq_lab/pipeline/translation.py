"""``translate``: a checkpoint translates lines from a file, or from stdin as they arrive
(``python -m seq2seq_lab.translate``)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import torch
from omegaconf import DictConfig

from seq2seq_lab.checkpoint import load_checkpoint
from seq2seq_lab.data.lines import read_lines, stream_lines
from seq2seq_lab.decoding.translation import Translations, translate_lines, truncation_warning
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.pipeline.building import (
    build_datamodule,
    expected_family,
    set_threads,
    with_decoding_overrides,
)
from seq2seq_lab.preflight import check_translate_inputs

log = logging.getLogger(__name__)


def read_input(input_path: str) -> list[str]:
    """The lines of the file ``input_path`` through the training data's line reader (split on
    \\n only); invalid UTF-8 is a one-line DataError naming the file and the line."""
    path = Path(input_path)
    if not path.is_file():
        raise ConfigError(f"input={path}: no such file")
    return read_lines(path)


def translate(cfg: DictConfig) -> list[str]:
    """Translate lines from ``input`` (a file, or stdin) to ``output`` (a file, or stdout):
    one output line per input line, in order, or with ``n_best`` N > 1 the N best hypotheses
    of each (beam search keeps them: N <= ``decoding.beam_size``), one line each,
    ``<input line>\\t<score>\\t<translation>``, best first (fairseq's H lines). Input lines end
    at \\n only (the reader of the training data, ``seq2seq_lab.data.lines``). A file is read
    whole before the model is loaded (bad input fails fast); stdin is translated as it arrives
    (``stream_lines``: a line typed at a terminal is answered at once) and each batch's output
    written and flushed before the next is read. Lines too long for the model are cut to its
    limit with a one-line warning on stderr naming them."""
    check_translate_inputs(cfg)
    set_threads(cfg)
    n_best = int(cfg.n_best)
    given = [(0, read_input(cfg.input))] if cfg.get("input") else None
    ckpt = load_checkpoint(cfg.ckpt_path, expected_family=expected_family(cfg))
    datamodule = build_datamodule(ckpt.run_config["data"])
    datamodule.load_state_dict(ckpt.datamodule_state)
    decoding = with_decoding_overrides(cfg, ckpt.module.test_decoding)
    if n_best < 1 or n_best > decoding.beam_size:
        raise ConfigError(
            f"n_best={n_best}: expected 1 to decoding.beam_size={decoding.beam_size} (the beam "
            f"keeps that many hypotheses; for more, set decoding.beam_size={max(n_best, 1)})"
        )
    batch_size = int(cfg.batch_size)
    batches = given or stream_lines(sys.stdin.fileno(), batch_size)
    output = open(cfg.output, "w", encoding="utf-8") if cfg.get("output") else sys.stdout
    # someone typing at a terminal is told what to do and prompted (on stderr: the output
    # stays one line per input line)
    typing = not given and sys.stdin.isatty()
    if typing:
        print(PROMPT_INTRO, file=sys.stderr)
    translated: list[str] = []
    try:
        for before, lines in _prompted(batches) if typing else batches:
            with torch.inference_mode():
                result = translate_lines(ckpt.module, datamodule, lines, decoding, batch_size)
            if result.truncated:
                cut = [before + i for i in result.truncated]
                print(truncation_warning(cut, ckpt.module.network, decoding), file=sys.stderr)
            output.write(_rendered(result, before, n_best))
            output.flush()
            translated.extend(result.lines)
    finally:
        if output is not sys.stdout:
            output.close()
    return translated


PROMPT_INTRO = "Type a sentence and press Enter to translate it; Ctrl-D ends."
PROMPT = "> "


def _prompted(batches: Iterator[tuple[int, list[str]]]) -> Iterator[tuple[int, list[str]]]:
    """``batches``, with the prompt on stderr before each is read."""
    while True:
        print(PROMPT, end="", file=sys.stderr, flush=True)
        batch = next(batches, None)
        if batch is None:
            print(file=sys.stderr)  # Ctrl-D leaves the shell's prompt on a line of its own
            return
        yield batch


def _rendered(result: Translations, before: int, n_best: int) -> str:
    """The output of one batch (see :func:`translate`)."""
    if n_best == 1:
        return "".join(line + "\n" for line in result.lines)
    return "".join(
        f"{before + i + 1}\t{score:.4f}\t{text}\n"
        for i, hypotheses in enumerate(result.n_best)
        for score, text in hypotheses[:n_best]
    )
