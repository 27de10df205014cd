"""A callback for tests that signal a training subprocess: it writes ``path`` once the first
training step is done, so the test knows training is under way. A helper module, not a test
module; the subprocess imports it from tests/ (put on its PYTHONPATH)."""

from __future__ import annotations

from pathlib import Path

import lightning as L


class StartedMarker(L.Callback):
    def __init__(self, *, path: str) -> None:
        self.path = Path(path)

    def on_train_batch_end(self, trainer: L.Trainer, *args: object) -> None:
        if not self.path.exists():
            self.path.write_text(str(trainer.global_step), encoding="utf-8")
