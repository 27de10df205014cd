"""The run's metrics history, ``RUN/csv/metrics.csv``, continued across resumes.

Lightning's ``CSVLogger`` deletes an existing ``metrics.csv`` when it starts, so a run resumed
with ``ckpt_path=...`` kept only the steps after the resume, and the report (which reads this
file) lost the rest. Here a resumed run starts its file with the rows of the checkpoint's run
logged before the checkpoint, i.e. with ``step`` < the checkpoint's ``global_step`` (Lightning
logs an update's row with the number of updates before it, and a validation after update
``n`` at step ``n - 1``), and appends its own. Rows logged after the checkpoint by the run
that was interrupted are dropped: the resumed run does those steps again and logs them
itself, so every step appears once. ``LastCheckpoint`` flushes the loggers before it writes a
checkpoint, so the rows before a checkpoint are on disk whenever the checkpoint is.

The history is read from the checkpoint's own run directory (recorded in the checkpoint),
else from this run's directory (a run directory that was moved), as written or bzip2'd (a
finished run's, :mod:`seq2seq_lab.record.compressed_outputs`); a run that is not resumed
starts an empty file as Lightning's logger does. Every rewrite of the file is atomic.
"""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path
from typing import Any

import torch
from lightning.fabric.loggers.logger import rank_zero_experiment
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter

from seq2seq_lab.errors import CheckpointError
from seq2seq_lab.record.atomic import write_atomically
from seq2seq_lab.record.compressed_outputs import discard_compressed, read_kept_text

log = logging.getLogger(__name__)


class ResumableCSVLogger(CSVLogger):
    """``CSVLogger`` writing ``save_dir/name/version/metrics.csv``, which a run resumed from
    ``resume_from`` (a checkpoint path, or None for a new run) continues as described in the
    module docstring. No defaults: the one home of the values is conf/logger/csv.yaml."""

    def __init__(
        self,
        *,
        save_dir: str,
        name: str,
        version: str,
        flush_logs_every_n_steps: int,
        resume_from: str | None,
    ) -> None:
        super().__init__(
            save_dir=save_dir,
            name=name,
            version=version,
            flush_logs_every_n_steps=flush_logs_every_n_steps,
        )
        self.resume_from = resume_from

    @property
    @rank_zero_experiment
    def experiment(self) -> ExperimentWriter:
        if self._experiment is None:
            self._fs.makedirs(self.root_dir, exist_ok=True)
            history = None
            if self.resume_from:
                log_dir = Path(self.log_dir)
                history = history_before(
                    Path(self.resume_from),
                    log_subdir=log_dir.relative_to(self.save_dir),
                    fallback=log_dir / ExperimentWriter.NAME_METRICS_FILE,
                )
            self._experiment = HistoryWriter(log_dir=self.log_dir, history=history)
        return self._experiment


class History:
    """Rows (dicts of the CSV's strings) and the CSV's columns, in file order."""

    def __init__(self, rows: list[dict[str, str]], columns: list[str]) -> None:
        self.rows, self.columns = rows, columns


def history_before(checkpoint: Path, *, log_subdir: Path, fallback: Path) -> History:
    """The rows with ``step`` < the checkpoint's ``global_step`` of
    ``<the checkpoint's run directory>/<log_subdir>/metrics.csv``, else of ``fallback``;
    an empty history if neither exists."""
    try:
        # mmap: only the small pickled part is read, not the weights
        raw = torch.load(checkpoint, map_location="cpu", weights_only=True, mmap=True)
        step = int(raw["global_step"])
    except Exception as error:  # torch raises many types for a corrupt or foreign file
        raise CheckpointError(
            f"ckpt_path={checkpoint}: not a readable training checkpoint ({error})"
        ) from None
    run_config = (raw.get("hyper_parameters") or {}).get("run_config") or {}
    run_dir = (run_config.get("paths") or {}).get("output_dir")
    candidates = (
        [Path(run_dir) / log_subdir / ExperimentWriter.NAME_METRICS_FILE] if run_dir else []
    )
    for path in [*candidates, fallback]:
        text = read_kept_text(path)  # a finished run's is bzip2'd (record/compressed_outputs.py)
        if text is not None:
            reader = csv.DictReader(io.StringIO(text, newline=""))
            rows = [r for r in reader if r.get("step") and int(float(r["step"])) < step]
            return History(rows, list(reader.fieldnames or []))
    log.warning("no metrics history of %s found: metrics.csv starts at step %d", checkpoint, step)
    return History([], [])


class HistoryWriter(ExperimentWriter):
    """Lightning's CSV writer, starting from ``history`` (None: a new, empty file) and
    rewriting the file atomically when new columns appear."""

    def __init__(self, log_dir: str, history: History | None) -> None:
        self._history = history
        super().__init__(log_dir=log_dir)
        if history is not None:
            self.metrics_keys = list(history.columns)
            _write_csv(Path(self.metrics_file_path), history.columns, history.rows)
            # a finished run's compressed copy, now superseded by the file just written
            discard_compressed(Path(self.metrics_file_path))

    def _check_log_dir_exists(self) -> None:
        if self._history is None:
            super()._check_log_dir_exists()  # a new run: Lightning's (deletes an old file)

    def _rewrite_with_new_header(self, fieldnames: list[str]) -> None:
        with open(self.metrics_file_path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        _write_csv(Path(self.metrics_file_path), fieldnames, rows)


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    def write(f: Any) -> None:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)

    write_atomically(path, write, binary=False)
