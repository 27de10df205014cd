"""The training bar counts updates against the run's budget (seq2seq_lab/callbacks/progress.py),
seen as a user sees it in a terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def _training_lines(tmp_path, *overrides: str) -> list[str]:
    """The lines of the training bar a terminal shows (rich forced on, colours stripped)."""
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "200", "WANDB_MODE": "offline"}
    proc = subprocess.run(
        [sys.executable, "-m", "seq2seq_lab.train", "scale=smoke", "threads=1", *overrides,
         f"hydra.run.dir={tmp_path / 'run'}", f"paths.cache_dir={tmp_path / 'cache'}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    screen = ANSI.sub("", proc.stdout).replace("\r", "\n").splitlines()
    return [line for line in screen if line.startswith("Training")]


def test_the_bar_runs_over_the_update_budget_with_the_last_validation(tmp_path):
    lines = _training_lines(tmp_path, "trainer.max_steps=6", "trainer.max_epochs=1000")
    last = lines[-1]
    # all 6 updates of the budget, over epochs (smoke: 3 batches an epoch), not "Epoch 1/999"
    assert " 6/6 " in last and "epoch: 1 " in last and "/999" not in last
    assert "val/bleu:" in last and "time left" not in last


def test_a_wall_clock_cap_shows_its_time_left_as_a_cap(tmp_path):
    lines = _training_lines(tmp_path, "trainer.max_steps=3", "trainer.max_time=00:00:05:00")
    assert re.search(r" 3/3 .*cap left: 4:[0-5]\d", lines[-1]), lines[-1]
