"""The tracked tree stays small: a clone is code, configs and the runs' own outputs.

A run keeps what it made, not copies of its data (test sets are named by path and checksum:
seq2seq_lab/data/test_set.py); 186 copies of Multi30k's test set once made up 23.5 of 58.6 MiB.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIMIT_MIB = 48


def tracked_files() -> list[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the tracked tree cannot be listed")
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip(f"{REPO} is not a git checkout (an sdist or a copy): nothing is tracked")
    return [name for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def test_the_tracked_tree_stays_under_the_limit():
    sizes = {}
    for name in tracked_files():
        path = REPO / name
        if os.path.lexists(path):  # a file deleted but not yet staged counts for nothing
            sizes[name] = os.lstat(path).st_size
    total = sum(sizes.values()) / 2**20
    if total > LIMIT_MIB:
        folders: Counter[str] = Counter()
        for name, size in sizes.items():
            folders[str(Path(name).parent)] += size
        largest = ", ".join(f"{d} {s / 2**20:.1f}" for d, s in folders.most_common(5))
        pytest.fail(
            f"the tracked files take {total:.1f} MiB, over {LIMIT_MIB} MiB; "
            f"largest folders (MiB): {largest}"
        )
