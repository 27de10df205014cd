"""Files replaced whole or not at all: a reader, or a process resumed after a ``kill -9``, sees
the previous content or the new one, never a truncated mixture.

The new content goes to a unique temporary name beside the target (unique, so concurrent
writers never share one; beside it, so the final rename stays on one file system), is flushed
to the disk, and ``os.replace`` swaps it in.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; set back at once (at import, one thread)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_atomically(path: str | Path, write: Callable[[IO[Any]], None], *, binary: bool) -> Path:
    """Call ``write(file)`` on ``.<name>.<random>.tmp`` in ``path``'s directory (opened for
    bytes or for UTF-8 text), then replace ``path`` with it; the temporary file is removed if
    anything fails. The file gets the permissions a plain ``open(path, "w")`` would give."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        mode = "wb" if binary else "w"
        encoding = None if binary else "utf-8"
        with os.fdopen(handle, mode, encoding=encoding, newline=None if binary else "") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp makes 0600
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    """``text`` (UTF-8) to ``path``, atomically (:func:`write_atomically`)."""
    return write_atomically(path, lambda f: f.write(text), binary=False)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """``data`` to ``path``, atomically (:func:`write_atomically`)."""
    return write_atomically(path, lambda f: f.write(data), binary=True)
