"""The one way text becomes lines, for training files and for translate's input alike.

A line ends at ``\\n`` and nowhere else. ``str.splitlines()`` also breaks at ``\\r``, ``\\v``,
``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which can occur *inside* a sentence
(text pasted from word processors and PDFs): translating with it gave more output lines than
input lines. Here those characters stay part of their line, and the tokenizer sees
them as it saw them in the training data.

- one final ``\\n`` ends the last line instead of starting an empty one;
- a ``\\r`` at the end of a line is part of the line end (``\\r\\n`` files), also on a last
  line without ``\\n``; a ``\\r`` anywhere else stays;
- a byte-order mark at the start of the text is not part of the first line;
- nothing else is stripped (leading, trailing and repeated spaces stay).
"""

from __future__ import annotations

import os
import select
from collections.abc import Iterator
from pathlib import Path

from seq2seq_lab.errors import DataError


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line ends (see the module docstring)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark is not part of the first sentence
    lines = text.split("\n")
    if lines[-1] == "":  # the final line end does not start another line (and "" has none)
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def decode_utf8(data: bytes, where: str | Path, lines_before: int = 0) -> str:
    """``data`` as text; invalid UTF-8 is a :class:`DataError` naming ``where`` (a file, or
    ``<stdin>``), the line (lines counted as :func:`split_lines` counts them, after
    ``lines_before`` lines read earlier from ``where``), the byte and its column (in bytes)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = lines_before + data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise DataError(
            f"{where}:{line}: invalid UTF-8 (byte 0x{data[e.start]:02x} at column {column}); "
            "expected UTF-8 text"
        ) from None


def decode_lines(data: bytes, where: str | Path) -> list[str]:
    """The lines of UTF-8 ``data`` read from ``where`` (named in errors)."""
    return split_lines(decode_utf8(data, where))


def read_lines(path: Path) -> list[str]:
    """The lines of the UTF-8 text file ``path`` (an empty file has none)."""
    return decode_lines(path.read_bytes(), path)


def stream_lines(fd: int, batch_size: int) -> Iterator[tuple[int, list[str]]]:
    """The lines of the UTF-8 stream on file descriptor ``fd`` (stdin: a terminal, a pipe, a
    redirected file), as they arrive: batches of at most ``batch_size`` lines, each yielded
    with the number of lines before it. A batch goes out as soon as no more input is waiting,
    so a line typed at a terminal or written into a slow pipe is translated before the next
    one arrives; input that is all there (a file) comes in full batches. The lines are those
    :func:`decode_lines` finds in the whole stream; invalid UTF-8 stops it with the same
    :class:`DataError`, naming ``<stdin>`` and the line."""
    pending, before, first, ended = b"", 0, True, False
    while not ended:
        data = os.read(fd, 1 << 16)
        ended = not data
        pending += data
        complete = len(pending) if ended else pending.rfind(b"\n") + 1
        waiting = not ended and bool(select.select([fd], [], [], 0)[0])
        if complete == 0 or (waiting and pending.count(b"\n", 0, complete) < batch_size):
            continue
        text = decode_utf8(pending[:complete], "<stdin>", before)
        pending = pending[complete:]
        # a byte-order mark opens the stream only
        lines = split_lines(text) if first else split_lines("\n" + text)[1:]
        first = False
        for start in range(0, len(lines), batch_size):
            yield before + start, lines[start : start + batch_size]
        before += len(lines)
