"""The tracked tree stays small: a clone is code, configs and the runs' own outputs.

A run keeps what it made, not copies of its data (test sets are named by path and checksum:
seq2seq_lab/data/test_set.py); 186 copies of Multi30k's test set once made up 23.5 of 58.6 MiB.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIMIT_MIB = 46  # under the 64 MiB a device call carries, with room for its build


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


# An absolute path under a directory where checkouts, homes and scratch space live: a record
# that names one holds the directory of the machine it was made on.
MACHINE_PATH = re.compile(r"(?<![\w.$}/])/(?:work|home|root|Users|tmp|mnt|scratch)/[\w.-]+")


def test_no_committed_file_names_a_directory_of_the_machine_it_was_made_on():
    """Records are written portable (record/portable_paths.py; the queues rewrite what Hydra
    and Lightning write into a run's directory before a commit), so a clone reads the same
    anywhere: this checkout, its parent and the home directory included."""
    here = [str(REPO), str(REPO.parent), str(Path.home())]
    found = []
    for name in tracked_files():
        path = REPO / name
        if not path.is_file() or path.suffix in {".png", ".pt", ".ckpt"}:
            continue
        if path == Path(__file__).resolve():  # its own examples
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        hits = MACHINE_PATH.findall(text) + [d for d in here if len(d) > 1 and d + "/" in text]
        if hits:
            found.append(f"{name}: {hits[0]}")
    assert not found, f"{len(found)} files name a machine's directory: {found[:10]}"


def test_the_machine_path_pattern_finds_what_it_is_for():
    assert MACHINE_PATH.findall("root: /work/shared/data and /root/.cache/x") == [
        "/work/shared",
        "/root/.cache",
    ]
    assert not MACHINE_PATH.findall("data.root=../shared/data ${paths.output_dir}/work/x")
