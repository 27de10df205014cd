"""Training throughput: real target tokens per second of training-step time.

Step time runs from the start of a training batch to its end (forward, backward, optimiser),
so validation decoding and checkpointing do not dilute the figure; padding is not counted.
"""

from __future__ import annotations

import time
from typing import Any

import lightning as L


class ThroughputMonitor(L.Callback):
    def __init__(self, *, log_every_n_steps: int | None = None) -> None:
        self.log_every_n_steps = log_every_n_steps
        self.tokens = 0
        self.step_seconds = 0.0
        self._started: float | None = None

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
        self.step_seconds += time.perf_counter() - self._started
        self.tokens += batch.num_tgt_tokens
        every = self.log_every_n_steps or trainer.log_every_n_steps
        if trainer.global_step % max(1, every) == 0 and self.step_seconds > 0:
            pl_module.log("train/tokens_per_second", self.tokens_per_second)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.step_seconds if self.step_seconds > 0 else 0.0
