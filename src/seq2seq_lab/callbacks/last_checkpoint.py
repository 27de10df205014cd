"""``checkpoints/last.ckpt``: the point a run resumes from, never more than N updates old.

A run killed at any moment (``kill -9``, a pre-empted job) and resumed with
``ckpt_path=RUN/checkpoints/last.ckpt`` loses at most ``every_n_train_steps`` updates, and the
resumed run computes what the uninterrupted run would have (tests/test_resume.py). Lightning
can resume exactly from two points, and this callback writes only at those:

- the end of an update (``on_train_batch_end``): every ``every_n_train_steps`` updates, at the
  last update of each epoch and at the update after which training stops;
- the end of a validation run during training (``on_validation_end``).

Two rules make the checkpoint of an update safe to resume from:

- If validation follows the update, the update's checkpoint is dropped and one is taken
  after the validation: resuming from the end of the update, Lightning would skip that
  validation (its scores, early stopping and the best checkpoint would then differ).
- The checkpoint of an update is taken at its end but written at the next hook (the next
  batch, the end of the epoch or of training), after the loggers have flushed: Lightning logs
  the update's metrics row only after ``on_train_batch_end``, and a checkpoint on disk must
  never be ahead of the metrics history on disk (a resumed run keeps the rows before its
  checkpoint and logs the rest again, see ``seq2seq_lab.loggers.csv_logger``). Nothing changes the
  weights or the optimiser in between, so the late write saves the same state.

With ``keep_last`` N > 0 the N latest of these checkpoints also stay, as
``step-<update>.ckpt`` beside ``last.ckpt`` (fairseq's ``--keep-interval-updates``; what
``average_checkpoints`` averages): each is a hard link to the file just written, which the
next atomic write replaces by a new file rather than overwriting, so keeping it costs no write
(a copy where the file system has no hard links); older ones are deleted.

Writes go through the trainer's checkpoint IO (atomic: ``seq2seq_lab.training.checkpoint_io``).
Writing is not training: a write between two updates would fall inside the training clocks
(``ThroughputMonitor``, ``WallClockCheckpoints``), so every write is left out of them
(``seq2seq_lab.callbacks.clock``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import Checkpoint
from lightning.pytorch.trainer.states import TrainerFn

from seq2seq_lab.callbacks.clock import off_the_training_clock


class LastCheckpoint(Checkpoint):
    """Writes ``dirpath/filename.ckpt`` as described in the module docstring. The settings
    have no defaults: their one home is ``last_checkpoint`` in conf/callbacks/default.yaml.

    Args:
        dirpath: directory of the checkpoint (the run's ``checkpoints/``).
        filename: file name without ``.ckpt``.
        every_n_train_steps: optimizer updates between two checkpoints, at most (>= 1).
        keep_last: how many of the latest checkpoints stay as ``step-<update>.ckpt`` (0: none).
    """

    def __init__(
        self, *, dirpath: str | Path, filename: str, every_n_train_steps: int, keep_last: int
    ) -> None:
        if every_n_train_steps < 1:
            raise ValueError(
                f"callbacks.last_checkpoint.every_n_train_steps={every_n_train_steps}: "
                "expected a positive number"
            )
        if keep_last < 0:
            raise ValueError(f"callbacks.last_checkpoint.keep_last={keep_last}: expected >= 0")
        self.path = Path(dirpath) / f"{filename}.ckpt"
        self.every_n_train_steps = every_n_train_steps
        self.keep_last = keep_last
        self._pending: dict[str, Any] | None = None  # taken at an update's end, not yet written
        self._last_update = -1  # global_step at the previous on_train_batch_end

    # ------------------------------------------------------------------ when
    def on_train_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        step = trainer.global_step
        updated, self._last_update = step != self._last_update, step
        if not updated or not self._saving(trainer):  # accumulating gradients: no update yet
            return
        epoch_ends = trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
        stops = trainer.should_stop or 0 <= trainer.max_steps <= step
        if step % self.every_n_train_steps == 0 or epoch_ends or stops:
            self._pending = trainer._checkpoint_connector.dump_checkpoint(weights_only=False)

    def on_validation_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._pending = None  # superseded by the checkpoint after this validation

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self._saving(trainer):
            self._pending = trainer._checkpoint_connector.dump_checkpoint(weights_only=False)
            self._write(trainer)

    def on_train_batch_start(
        self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        self._write(trainer)

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._write(trainer)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._write(trainer)

    # ------------------------------------------------------------------ how
    @staticmethod
    def _saving(trainer: L.Trainer) -> bool:
        return (
            trainer.state.fn == TrainerFn.FITTING
            and not trainer.sanity_checking
            and not trainer.fast_dev_run
        )

    def _write(self, trainer: L.Trainer) -> None:
        if self._pending is None:
            return
        with off_the_training_clock(trainer):
            checkpoint, self._pending = self._pending, None
            for logger in trainer.loggers:
                logger.save()  # the history up to this checkpoint reaches the disk first
            trainer.strategy.save_checkpoint(checkpoint, self.path)
            if self.keep_last and trainer.is_global_zero:
                self._keep(int(checkpoint["global_step"]))
            trainer.strategy.barrier("LastCheckpoint")

    def _keep(self, step: int) -> None:
        """``step-<step>.ckpt``: the file just written, kept; only the ``keep_last`` latest."""
        kept = self.path.with_name(f"step-{step:07d}.ckpt")
        kept.unlink(missing_ok=True)  # a validation's checkpoint replaces its update's
        try:
            os.link(self.path, kept)
        except OSError:  # no hard links here
            shutil.copyfile(self.path, kept)
        for old in sorted(self.path.parent.glob("step-*.ckpt"))[: -self.keep_last]:
            old.unlink()
