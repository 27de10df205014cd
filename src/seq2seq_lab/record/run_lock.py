"""One process at a time in a run (or sweep) directory: an exclusive lock held for its life.

Two runs started into one directory at the same instant would both pass the check of
:mod:`seq2seq_lab.record.run_dir` (neither has written anything yet) and then write one
directory together. So the process first takes the kernel's ``flock`` on the directory itself,
exclusive and non-blocking; a second process is refused with one line. The lock is on the
directory, not on a lock file, so nothing is written into it (a finished run a resumable queue
keeps stays byte for byte), and the kernel drops it when the process ends, however it ends: a
dead process never leaves a stale lock behind. The descriptor is not inherited by the processes
the run starts (DDP ranks, whose rank zero holds the lock).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from seq2seq_lab.errors import ConfigError

_held: dict[Path, int] = {}  # directory -> the open descriptor that holds its lock


def hold(directory: Path, *, kind: str, instead: str) -> None:
    """Lock ``directory`` (created if missing) for this process until it ends or calls
    :func:`release`. ``kind`` ("run", "sweep") and ``instead`` (what to do) word the refusal.

    Raises ConfigError when another process holds it. A filesystem that cannot lock a
    directory (some network filesystems) leaves it unlocked.
    """
    directory.mkdir(parents=True, exist_ok=True)
    key = directory.resolve()
    if key in _held:
        return
    fd = os.open(directory, os.O_RDONLY)  # close-on-exec: child processes do not hold it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ConfigError(
            f"{kind} directory {directory} is in use by another process started there: {instead}"
        ) from None
    except OSError:
        os.close(fd)
        return
    _held[key] = fd


def release(directory: Path) -> None:
    """Give up the lock :func:`hold` took on ``directory`` (a no-op if it holds none)."""
    fd = _held.pop(directory.resolve(), None)
    if fd is not None:
        os.close(fd)  # closing the only descriptor drops the flock
