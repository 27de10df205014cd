"""Work between or inside updates that is not training: timed, and left out of the training
clocks.

Callbacks that keep a training clock (``ThroughputMonitor``'s tokens per second,
``WallClockCheckpoints``' minutes of training) have a ``leave_out_of_clock(seconds)`` method.
Work done by other callbacks while such a clock runs (writing a checkpoint, measuring
gradient norms for the diagnostics) is wrapped in :func:`off_the_training_clock`, which tells
every one of them how long it took, so that a clock measures the training step alone.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import lightning as L


@contextmanager
def off_the_training_clock(trainer: L.Trainer) -> Iterator[None]:
    """Time the block; every callback of ``trainer`` with ``leave_out_of_clock`` leaves the
    block's seconds out of its clock (also when the block raises)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - started
        for callback in trainer.callbacks:
            leave_out = getattr(callback, "leave_out_of_clock", None)
            if leave_out is not None:
                leave_out(seconds)
