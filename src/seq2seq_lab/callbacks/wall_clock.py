"""Checkpoints at fixed amounts of training wall time, for time-to-BLEU curves.

"BLEU after 10, 20, 30 minutes of training" needs the weights as they were at those moments,
scored afterwards, so that scoring never eats into the training clock. The clock counts the
training loop only (batch fetching, forward, backward, optimiser): it stops while validation
runs and while ``LastCheckpoint`` writes, so a run with validation and one without reach a mark
after the same training work.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning as L


class WallClockCheckpoints(L.Callback):
    """Saves ``DIR/minute-{m:03d}.ckpt`` the first time the training clock passes each mark.

    The clock and the marks already saved travel in checkpoints (``state_dict``): a resumed
    run goes on counting from where its checkpoint was, and never writes a mark again with
    weights trained longer than the mark says.
    """

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

    def state_dict(self) -> dict[str, Any]:
        return {
            "training_seconds": self.training_seconds,
            "saved": {str(mark): str(path) for mark, path in self.saved.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.training_seconds = float(state["training_seconds"])
        self.saved = {float(mark): Path(path) for mark, path in state["saved"].items()}

    @property
    def seconds_to_last_mark(self) -> float:
        """Training seconds left before the last mark ends the run (never below 0)."""
        return max(0.0, self.marks[-1] * 60 - self.training_seconds)

    def leave_out_of_clock(self, seconds: float) -> None:
        """``seconds`` just spent writing a checkpoint (``LastCheckpoint``) are not training."""
        if self._resumed_at is not None:
            self._resumed_at += seconds

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._resumed_at = time.perf_counter()  # a resumed run may start mid-epoch

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
