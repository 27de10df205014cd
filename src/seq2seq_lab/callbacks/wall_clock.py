"""Checkpoints at fixed amounts of training wall time, for time-to-BLEU curves.

"BLEU after 10, 20, 30 minutes of training" needs the weights as they were at those moments,
scored afterwards, so that scoring never eats into the training clock. The clock counts the
training loop only (batch fetching, forward, backward, optimiser): it stops while validation
runs, so a run with validation and one without reach a mark after the same training work.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import lightning as L


class WallClockCheckpoints(L.Callback):
    """Saves ``DIR/minute-{m:03d}.ckpt`` the first time the training clock passes each mark."""

    def __init__(self, *, minutes: Sequence[float], dirpath: str | Path) -> None:
        marks = sorted(float(m) for m in minutes)
        if not marks or marks[0] <= 0:
            raise ValueError(
                f"callbacks.wall_clock.minutes: positive minutes expected, got {minutes}"
            )
        self.marks = marks
        self.dirpath = Path(dirpath)
        self.training_seconds = 0.0
        self.saved: dict[float, Path] = {}
        self._resumed_at: float | None = None

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._resumed_at = time.perf_counter()

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args) -> None:
        now = time.perf_counter()
        self.training_seconds += now - (self._resumed_at or now)
        self._resumed_at = now
        for mark in self.marks:
            if mark not in self.saved and self.training_seconds >= mark * 60:
                path = self.dirpath / f"minute-{mark:03g}.ckpt"
                trainer.save_checkpoint(path)
                self.saved[mark] = path
                # saving is not training: restart the clock after it
                self._resumed_at = time.perf_counter()
        if len(self.saved) == len(self.marks):
            trainer.should_stop = True  # the last mark is the end of the run
