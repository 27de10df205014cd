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

from pathlib import Path

from seq2seq_lab.errors import DataError


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line ends (see the module docstring)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark is not part of the first sentence
    lines = text.split("\n")
    if lines[-1] == "":  # the final line end does not start another line (and "" has none)
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def decode_utf8(data: bytes, where: str | Path) -> str:
    """``data`` as text; invalid UTF-8 is a :class:`DataError` naming ``where`` (a file, or
    ``<stdin>``), the line (lines counted as :func:`split_lines` counts them), the byte and its
    column (in bytes)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
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
