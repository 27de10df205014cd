"""One line reader for training data and translate input (issue 20, point 7).

translate used to split its input with ``str.splitlines()``, which also breaks at U+2028,
U+0085, form feed, ``\\x1e``, a lone ``\\r``...: more lines out than in. Both now read through
``seq2seq_lab.data.lines``, which splits on ``\\n`` only, and the training reader is unchanged:
it is compared with a frozen copy of the reader as it was before (commit 3952db7).
"""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path

import pytest

from seq2seq_lab.checkout import REPOSITORY
from seq2seq_lab.data import sources
from seq2seq_lab.data.lines import decode_lines, read_lines, split_lines, stream_lines
from seq2seq_lab.errors import DataError
from seq2seq_lab.pipeline.translation import read_input

SHARED = REPOSITORY.parent / "shared" / "data"  # the read-only data beside the checkout

# Every character str.splitlines() breaks at besides \n.
BREAKERS = ["\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]

# 5 lines with U+2028, U+0085, \f, \x1e and a lone \r inside: str.splitlines() made 10.
FIVE_LINES = (
    "Ein Hund\u2028läuft .\n"
    "Zwei Katzen\x85schlafen .\n"
    "Seite eins\fSeite zwei\n"
    "Feld\x1eFeld\n"
    "alt\rneu\n"
)


def reader_before_issue_20(path: Path) -> list[str]:
    """``seq2seq_lab.data.sources.read_lines`` as of commit 3952db7, frozen as the reference
    (its DataError branches are covered by tests/test_data_sources.py)."""
    data = path.read_bytes()
    if not data:
        raise DataError(f"{path}: empty file; expected one sentence per line")
    text = data.decode("utf-8")
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def streamed(data: bytes, batch_size: int = 64) -> list[str]:
    """The lines translate reads from ``data`` on stdin (a pipe), batch after batch."""
    read, write = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write, data), os.close(write)))
    writer.start()
    try:
        return [line for _, batch in stream_lines(read, batch_size) for line in batch]
    finally:
        writer.join()
        os.close(read)


def translate_reads(path: Path) -> tuple[list[str], list[str]]:
    """What translate reads from ``path`` given as input=FILE, and given on stdin."""
    return read_input(str(path)), streamed(path.read_bytes())


def test_five_lines_in_are_five_lines_out():
    assert len(FIVE_LINES.splitlines()) == 10  # the old behaviour, for the record
    assert split_lines(FIVE_LINES) == [
        "Ein Hund\u2028läuft .",
        "Zwei Katzen\x85schlafen .",
        "Seite eins\fSeite zwei",
        "Feld\x1eFeld",
        "alt\rneu",
    ]


def test_line_ends():
    assert split_lines("") == []
    assert split_lines("\n") == [""]
    assert split_lines("a\n\nb") == ["a", "", "b"]  # the last line needs no \n
    assert split_lines("a\n\n") == ["a", ""]  # only one final \n is dropped
    assert split_lines("a\r\nb\r\n") == ["a", "b"]  # \r\n files
    assert split_lines("a\r") == ["a"]  # as the training reader always did
    assert split_lines("a\r\r\n") == ["a\r"]
    assert split_lines("\ufeffa\n\ufeffb\n") == ["a", "\ufeffb"]  # a BOM only at the start
    assert split_lines("  a  b \t\n") == ["  a  b \t"]  # spaces are the tokenizer's business


def test_training_and_translate_readers_agree_on_every_line_breaking_character(tmp_path):
    lines = [f"vor{c}nach" for c in BREAKERS] + ["", " Leerzeichen ", "\u00e4\u00df\u20ac"]
    path = tmp_path / "every.de"
    path.write_bytes(("\ufeff" + "\n".join(lines) + "\r\n").encode("utf-8"))
    expected = lines  # the BOM and the \r of the final \r\n are not part of any line
    assert sources.read_lines(path) == expected
    assert reader_before_issue_20(path) == expected
    from_file, from_stdin = translate_reads(path)
    assert from_file == expected and from_stdin == expected


def test_new_reader_equals_the_old_one_on_random_text(tmp_path):
    # Random texts over the characters that matter (line breakers, BOM, spaces, letters),
    # none empty (the training reader refuses empty files).
    alphabet = [*BREAKERS, "\n", "\ufeff", " ", "a", "ä"]
    rng = random.Random(20)
    path = tmp_path / "random.txt"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        path.write_bytes(text.encode("utf-8"))
        assert sources.read_lines(path) == reader_before_issue_20(path), repr(text)
        assert read_lines(path) == reader_before_issue_20(path), repr(text)


@pytest.mark.parametrize("corpus", ["multi30k", "europarl_de_en_20k"])
def test_shared_corpora_read_exactly_as_before(corpus):
    root = SHARED / corpus
    if not root.is_dir():
        pytest.skip(f"shared {corpus} copy not available")
    files = sorted(p for p in root.iterdir() if p.suffix in (".de", ".en"))
    assert files
    for path in files:
        assert sources.read_lines(path) == reader_before_issue_20(path), path
    # and as sentence pairs, through the source the configs use
    if corpus == "multi30k":
        pairs = sources.ParallelTextSource(
            name="multi30k",
            split_files={"train": "train", "val": "val", "test": "test2016"},
            download_url=None,
            download_names=None,
            sha256=None,
        ).load(sources.SourceContext(str(root), "de", "en", False, "unused"))
        for split, stem in (("train", "train"), ("val", "val"), ("test", "test2016")):
            before = (
                reader_before_issue_20(root / f"{stem}.de"),
                reader_before_issue_20(root / f"{stem}.en"),
            )
            assert pairs[split] == before, split


def test_empty_translate_input_is_no_lines(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert translate_reads(path) == ([], [])


def test_invalid_utf8_in_translate_input_names_file_and_line(tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"eins\xe2\x80\xa8zwei\ndrei\nvi\xe9r\n")  # U+2028 is not a line end
    with pytest.raises(DataError, match=rf"^{path}:3: invalid UTF-8 \(byte 0xe9 at column 3\)"):
        read_input(str(path))
    with pytest.raises(DataError, match=r"^<stdin>:3: invalid UTF-8 \(byte 0xe9 at column 3\)"):
        streamed(path.read_bytes(), batch_size=1)
    with pytest.raises(DataError, match=r"^x\.de:1: invalid UTF-8 \(byte 0xff at column 1\)"):
        decode_lines(b"\xff", "x.de")
