"""The training progress bar over the run's real budget: updates done of the updates it may make.

Lightning's rich bar counts the batches of one epoch (``Epoch 15/999``: the 999 is
``max_epochs``, which a run bounded by ``trainer.max_steps`` never reaches), so its time
column says when the epoch ends. Here the one training bar counts optimiser updates,

    completed = trainer.global_step,  total = budget,

with ``budget = trainer.max_steps`` when set, else none (a bar without an end: a run bounded by
epochs, whose token-budget batches make a different number of updates each epoch; Lightning's
``estimated_stepping_batches`` would reload the training loader to count them, and with it the
data order). Rich's time column then gives the run's elapsed and remaining time, from the speed
of the latest updates. Beside it: the epoch (of ``max_epochs`` when no update budget is set),
the wall-clock cap's time left when ``trainer.max_time`` is set (it may end the run first), and
the module's progress-bar metrics (the last validation BLEU). Validation and test
keep Lightning's own bars.
"""

from __future__ import annotations

from typing import Any

import lightning as L
from lightning.pytorch.callbacks import RichProgressBar, Timer


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
                "Training", total=_budget(trainer), completed=trainer.global_step
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
            extra["time left"] = f"{int(left // 60)}:{int(left % 60):02d}"
        return {**extra, **metrics}


def _budget(trainer: L.Trainer) -> int | None:
    """The updates the run may make (module docstring); None when there is no such number."""
    if trainer.max_steps is not None and trainer.max_steps > 0:
        return int(trainer.max_steps)
    return None


def _time_left(trainer: L.Trainer) -> float | None:
    """Seconds the wall-clock cap (``trainer.max_time``, Lightning's Timer) leaves training."""
    timer = next((c for c in trainer.callbacks if isinstance(c, Timer)), None)
    if timer is None or timer.time_remaining("train") is None:
        return None
    return max(0.0, float(timer.time_remaining("train")))
