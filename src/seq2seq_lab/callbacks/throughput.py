"""Training throughput: real target tokens per second, padding not counted.

Two clocks. Step time (the logged ``train/tokens_per_second``) runs from the start of a
training batch to its end: forward, backward, optimiser. Loop time also counts fetching the
batch (from the start of the epoch or the end of the previous batch), which is what a peer
that logs "tokens per second" over its whole training loop measures. Neither counts
validation decoding or checkpointing: the loop clock restarts with every training epoch, and
the time ``LastCheckpoint`` spends writing between two updates is left out of both.
"""

from __future__ import annotations

import time
from typing import Any

import lightning as L


class ThroughputMonitor(L.Callback):
    """Logs ``train/tokens_per_second`` every ``log_every_n_steps`` updates (null: the
    trainer's). No default here: the one home of the value is conf/callbacks/default.yaml."""

    def __init__(self, *, log_every_n_steps: int | None) -> None:
        self.log_every_n_steps = log_every_n_steps
        self.tokens = 0
        self.step_seconds = 0.0
        self.loop_seconds = 0.0
        self._started: float | None = None
        self._previous_end: float | None = None

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._previous_end = time.perf_counter()

    def on_train_batch_start(
        self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        self._started = time.perf_counter()

    def on_train_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        if self._started is None:
            return
        now = time.perf_counter()
        self.step_seconds += now - self._started
        self.loop_seconds += now - (self._previous_end or self._started)
        self._previous_end = now
        self.tokens += batch.num_tgt_tokens
        every = self.log_every_n_steps or trainer.log_every_n_steps
        if trainer.global_step % max(1, every) == 0 and self.step_seconds > 0:
            pl_module.log("train/tokens_per_second", self.tokens_per_second)

    def leave_out_of_clock(self, seconds: float) -> None:
        """``seconds`` just spent on something else (a checkpoint write) are not training."""
        if self._started is not None:
            self._started += seconds
        if self._previous_end is not None:
            self._previous_end += seconds

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.step_seconds if self.step_seconds > 0 else 0.0

    @property
    def loop_tokens_per_second(self) -> float:
        return self.tokens / self.loop_seconds if self.loop_seconds > 0 else 0.0
