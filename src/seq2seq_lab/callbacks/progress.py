"""The training progress bar over the run's real budget: updates done of the updates it may make.

Lightning's rich bar counts the batches of one epoch (``Epoch 15/999``: the 999 is
``max_epochs``, which a run bounded by ``trainer.max_steps`` never reaches), so its time
column says when the epoch ends. Here the one training bar counts optimiser updates,

    completed = trainer.global_step,  total = budget,

with ``budget = trainer.max_steps`` when set. A run has a budget of one of five kinds, and the
bar shows what each makes known, never more:

- updates (``trainer.max_steps``): ``613/1200``, and rich's remaining time from the speed of
  the latest updates;
- ``trainer.max_time`` (Lightning's ``Timer``) or wall-clock marks (``WallClockCheckpoints``:
  the last mark ends the run): the updates done of no known total (``613/--``, Lightning's
  infinite task) and ``time left`` of the time budget, the one that ends the run first where
  there are several;
- epochs (``trainer.max_epochs`` alone): ``613/--`` and ``epoch: 3/20`` (token-budget batches
  make a different number of updates each epoch; Lightning's ``estimated_stepping_batches``
  would reload the training loader to count them, and with it the data order);
- none: the updates done and the time elapsed.

Beside the bar: the epoch; ``time left`` of a time budget, or ``cap left`` where a wall-clock
cap may end an update-bounded run before its budget (the time column is then the ETA of the
updates); and the module's progress-bar metrics (the last validation BLEU).
Validation and test keep Lightning's own bars.
"""

from __future__ import annotations

from typing import Any

import lightning as L
from lightning.pytorch.callbacks import RichProgressBar, Timer

from seq2seq_lab.callbacks.wall_clock import WallClockCheckpoints


class BudgetProgressBar(RichProgressBar):
    """:class:`RichProgressBar` whose training bar runs over the whole budget (module docstring).

    ``refresh_rate``: updates between redraws; ``leave``: keep each epoch's bars; and
    ``console_kwargs`` for rich's Console (``{force_terminal: true}`` draws into a pipe), as
    Lightning's. Their one home: ``progress_bar`` in conf/callbacks/default.yaml.
    """

    def __init__(
        self, *, refresh_rate: int, leave: bool, console_kwargs: dict[str, Any] | None
    ) -> None:
        super().__init__(refresh_rate=refresh_rate, leave=leave, console_kwargs=console_kwargs)

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self.is_disabled or self.progress is None:
            return
        if self.train_progress_bar_id is None:
            # one bar for the whole run, started where a resumed run stands: a bar reset every
            # epoch would estimate the remaining time of the epoch only
            self.train_progress_bar_id = self.progress.add_task(
                "Training", total=_total(trainer), completed=trainer.global_step
            )
        self.refresh()

    def on_train_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        if self.is_disabled:
            return
        if self.train_progress_bar_id is None:
            self.on_train_epoch_start(trainer, pl_module)
        self._update(self.train_progress_bar_id, trainer.global_step)
        self._update_metrics(trainer, pl_module)
        self.refresh()

    def get_metrics(self, trainer: L.Trainer, pl_module: L.LightningModule) -> dict[str, Any]:
        metrics = super().get_metrics(trainer, pl_module)
        metrics.pop("v_num", None)  # the logger's version: no progress in it
        epoch = str(trainer.current_epoch)
        if _budget(trainer) is None and trainer.max_epochs is not None and trainer.max_epochs > 0:
            epoch += f"/{trainer.max_epochs}"
        extra: dict[str, Any] = {"epoch": epoch}
        left = _time_left(trainer)
        if left is not None:
            # with an update budget the bar's own time column is the ETA and the clock only a
            # cap that may end the run first; without one the clock is the budget
            label = "time left" if _budget(trainer) is None else "cap left"
            extra[label] = f"{int(left // 60)}:{int(left % 60):02d}"
        return {**extra, **metrics}


def _budget(trainer: L.Trainer) -> int | None:
    """The updates the run may make (module docstring); None when there is no such number."""
    if trainer.max_steps is not None and trainer.max_steps > 0:
        return int(trainer.max_steps)
    return None


def _total(trainer: L.Trainer) -> float:
    """The bar's total: the update budget, or infinity (Lightning's task without an end, drawn
    as ``613/--`` with a pulsing bar) where the run has none."""
    budget = _budget(trainer)
    return float("inf") if budget is None else budget


def _time_left(trainer: L.Trainer) -> float | None:
    """Seconds of training the run's time budgets leave: the least of the wall-clock cap's
    (``trainer.max_time``, Lightning's Timer) and the wall-clock marks' (the last mark ends
    the run); None where neither is set."""
    left: list[float] = []
    for callback in trainer.callbacks:
        if isinstance(callback, Timer) and callback.time_remaining("train") is not None:
            left.append(float(callback.time_remaining("train")))
        elif isinstance(callback, WallClockCheckpoints):
            left.append(callback.seconds_to_last_mark)
    return max(0.0, min(left)) if left else None
