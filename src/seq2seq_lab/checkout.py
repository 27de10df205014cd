"""Where the checkout's parts are: the one home of the repository's locations.

``conf/`` (the library's configs) and ``experiments/`` (the lab: one folder per comparison)
sit beside ``src/``; recorded paths are written relative to the repository root
(``portable_paths``).
"""

from __future__ import annotations

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
CONF_DIR = str(REPOSITORY / "conf")
EXPERIMENTS_DIR = REPOSITORY / "experiments"
