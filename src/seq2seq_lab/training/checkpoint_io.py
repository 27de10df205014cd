"""Checkpoint files are replaced whole or not at all.

Lightning's own save (``TorchCheckpointIO``) writes through an fsspec transaction whose
temporary file is made in the system temporary directory; where that is another file system
than the run directory (a tmpfs /tmp, a scratch disk), the final ``shutil.move`` is a copy
into ``checkpoints/last.ckpt`` itself, and a process killed during it leaves a truncated
checkpoint where the previous good one was. This plugin (``trainer.plugins`` in
conf/trainer/default.yaml) writes every checkpoint of a run (best, last, snapshots) through
:func:`seq2seq_lab.record.atomic.write_atomically` instead.
"""

from __future__ import annotations

from typing import Any

import torch
from lightning.fabric.utilities.cloud_io import _is_local_file_protocol
from lightning.pytorch.plugins.io import TorchCheckpointIO

from seq2seq_lab.record.atomic import write_atomically


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose local saves are atomic (remote paths: Lightning's save)."""

    def save_checkpoint(
        self, checkpoint: dict[str, Any], path: Any, storage_options: Any | None = None
    ) -> None:
        if storage_options is not None or not _is_local_file_protocol(path):
            super().save_checkpoint(checkpoint, path, storage_options=storage_options)
            return
        write_atomically(path, lambda f: torch.save(checkpoint, f), binary=True)
