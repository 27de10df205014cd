"""The training bar shows every kind of budget a run can have, and what each makes known
(seq2seq_lab/callbacks/progress.py): updates, trainer.max_time, wall-clock marks, epochs, none.
Each is a real Lightning fit of a one-layer model, drawn as in a terminal."""

from __future__ import annotations

import re

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import Callback

from seq2seq_lab.callbacks.progress import BudgetProgressBar
from seq2seq_lab.callbacks.wall_clock import WallClockCheckpoints

pytestmark = pytest.mark.usefixtures("one_thread")


class _Linear(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch[0]).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        data = torch.utils.data.TensorDataset(torch.randn(12, 4))
        return torch.utils.data.DataLoader(data, batch_size=4)  # 3 updates an epoch


class _StopAfter(Callback):
    """Ends a run with no budget of its own after ``updates`` updates."""

    def __init__(self, updates: int) -> None:
        self.updates = updates

    def on_train_batch_end(self, trainer, *args) -> None:
        if trainer.global_step >= self.updates:
            trainer.should_stop = True


def _last_training_line(capsys, tmp_path, *callbacks: Callback, **trainer_args) -> str:
    """The last state of the training bar as a terminal shows it."""
    terminal = {"force_terminal": True, "width": 160, "color_system": None}
    bar = BudgetProgressBar(refresh_rate=1, leave=True, console_kwargs=terminal)
    trainer = L.Trainer(
        accelerator="cpu", logger=False, enable_checkpointing=False, enable_model_summary=False,
        callbacks=[bar, *callbacks], default_root_dir=tmp_path, **trainer_args,
    )  # fmt: skip
    trainer.fit(_Linear())
    screen = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", capsys.readouterr().out.replace("\r", "\n"))
    lines = [line for line in screen.splitlines() if line.startswith("Training")]
    assert lines, screen
    return lines[-1]


def test_an_update_budget_is_the_bars_total(capsys, tmp_path):
    line = _last_training_line(capsys, tmp_path, max_steps=5, max_epochs=1000)
    assert " 5/5 " in line and "left" not in line, line


def test_a_cap_beside_an_update_budget_is_shown_as_a_cap(capsys, tmp_path):
    line = _last_training_line(capsys, tmp_path, max_steps=5, max_time={"minutes": 5})
    assert " 5/5 " in line and re.search(r"cap left: 4:[0-5]\d", line), line


def test_a_wall_clock_cap_shows_the_time_it_leaves_and_no_total_of_its_own(capsys, tmp_path):
    line = _last_training_line(
        capsys, tmp_path, _StopAfter(4), max_steps=-1, max_time={"minutes": 5}
    )
    assert " 4/-- " in line and re.search(r"time left: 4:[0-5]\d", line), line


def test_wall_clock_marks_show_the_time_to_the_last_mark(capsys, tmp_path):
    """The CPU recipe's budget (conf/recipe/transformer_multi30k_cpu.yaml): no update budget, the
    last mark ends the run; this run stops before the mark."""
    marks = WallClockCheckpoints(minutes=[10, 40], dirpath=tmp_path / "snapshots")
    line = _last_training_line(capsys, tmp_path, marks, _StopAfter(4), max_steps=-1, max_epochs=-1)
    assert " 4/-- " in line and re.search(r"time left: 39:[0-5]\d", line), line


def test_an_epoch_budget_shows_the_epochs(capsys, tmp_path):
    line = _last_training_line(capsys, tmp_path, max_steps=-1, max_epochs=2)
    assert " 6/-- " in line and "epoch: 1/2" in line and "time left" not in line, line


def test_a_run_without_a_budget_shows_the_updates_done(capsys, tmp_path):
    line = _last_training_line(capsys, tmp_path, _StopAfter(7), max_steps=-1, max_epochs=-1)
    assert " 7/-- " in line and "time left" not in line, line
